package master

import (
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/resources"
)

type agentState struct {
	rec       *api.AgentRecord
	total     resources.Resources
	stream    *api.Stream // nil while disconnected
	inAlloc   bool
	lostTimer Timer
	lastHeard time.Time // the agent's last call (or REGISTER): silence is partition.go's health check
	// executors running on the agent with the resources they hold, keyed
	// "framework/executor".
	executors map[string]resources.Resources
	// offers are the outstanding offers on this agent (also in m.offers),
	// in no order; each knows its index (offer.agentIdx). A slice, not a
	// map: an agent rarely has more than a few, and a map insert and delete
	// per offer per cycle showed in BenchmarkMasterOfferPath.
	offers []*offer
	// url is offerURL's cache, for the address urlFor.
	url    *mesos.URL
	urlFor string
	// wire is offerWire's cache: the agent's fields of every offer on it,
	// encoded.
	wire agentWire
	// unavail is the maintenance window of the agent's machine while it is
	// DRAINING (maintenance.go); its offers carry it.
	unavail *mesos.Unavailability
	// resv is its exact resources, reservations and volumes included
	// (reservations.go).
	resv agentResv
}

type framework struct {
	id             string
	info           mesos.FrameworkInfo
	role           string
	multiRole      bool
	stream         *api.Stream
	streamID       string
	offers         map[uint64]*offer // outstanding, by sequence number
	cycle          []madeOffer       // its offers of the cycle being sent; empty between cycles, capacity kept (offerLocked)
	pending        *pendingOffers    // its last cycle's OFFERS event, maybe not yet queued (offerdeliver.go)
	tasks          map[string]*task
	registered     time.Time
	disconnectedAt time.Time
	failoverTimer  Timer
	suppressed     bool
	// subscribing is true from the moment a SUBSCRIBE attaches stream
	// until SUBSCRIBED is on it (the framework id must be durable first,
	// and m.mu is released while raft commits it). Events for the
	// framework in that window wait in held, so that nothing (an offer
	// from a periodic allocation, say) reaches the stream before
	// SUBSCRIBED: mesos-go's clients reject calls they make on an offer
	// seen before they know their framework id.
	subscribing bool
	held        []*schedEvent
	// suppressedRoles are the roles SUPPRESS (or suppressed_roles) took
	// out of offers; suppressed is set when that is every role
	// (multirole.go).
	suppressedRoles map[string]bool
	// app is the application demand of the last REQUEST that carried one
	// (nil: none), replicated in the framework's record.
	app *api.AppDemand
	// jobSize is the head job the framework last declared, from its
	// labels or a REQUEST (jobsize.go; nil: none), replicated in its
	// record.
	jobSize *api.JobSize
	// subject is who subscribed the framework: its calls act as it
	// (authz.go).
	subject auth.Subject
}

type task struct {
	id, fw, agent, executor string
	info                    mesos.TaskInfo
	infoBytes               []byte // info in protobuf, for registry records
	res                     resources.Resources
	state                   mesos.TaskState
	status                  *mesos.TaskStatus
	statuses                []mesos.TaskStatus // the state history (taskhistory.go)
	// final: the master forwarded a terminal update of the task (uuid
	// finalUUID) to its framework; only a retry of that update may follow
	// (finality.go).
	final     bool
	finalUUID []byte
	// kill is the framework's latest KILL of the task, sent again when
	// its agent re-registers (pendingkill.go).
	kill *api.AgentEvent
}

// offer is an outstanding offer. Its id, "<master>-O<seq>[<stamp>]", is not
// kept as a string: the offer tables are keyed by seq, the OFFERS encoder
// writes the id from its parts, and the few paths that need the string
// (RESCIND, logs, the operator API) build it with id. An id string and
// three string-keyed table entries per offer were about a third of the
// master's cycle at 10,000 agents (BenchmarkMasterOfferPath, docs/scale.md).
type offer struct {
	seq           uint64
	master, stamp string // the master's id and the cycle's stamp ("" unless --stamp-offers)
	fw, agent     string
	role          string // the role the allocator offered res to (one of a MULTI_ROLE framework's)
	res           resources.Resources
	timer         Timer
	agentIdx      int // its index in its agent's offers

	// reserved is what of res the allocator offered from reservation
	// pools, by role, and exact those resources as the framework sees
	// them (resvoffers.go); nil for an unreserved offer.
	reserved map[string]resources.Resources
	exact    mesos.Resources
}

// addOffer adds o to the agent's offers.
func (a *agentState) addOffer(o *offer) {
	o.agentIdx = len(a.offers)
	a.offers = append(a.offers, o)
}

// dropOffer removes o from the agent's offers, if it is there, moving the
// last one into its place.
func (a *agentState) dropOffer(o *offer) {
	i := o.agentIdx
	if i >= len(a.offers) || a.offers[i] != o {
		return
	}
	last := len(a.offers) - 1
	a.offers[i] = a.offers[last]
	a.offers[i].agentIdx = i
	a.offers[last] = nil
	a.offers = a.offers[:last]
}

// id is the offer's id as frameworks see it.
func (o *offer) id() string {
	var buf [128]byte
	return string(o.appendID(buf[:0]))
}

// appendID appends the offer's id to b.
func (o *offer) appendID(b []byte) []byte {
	b = append(b, o.master...)
	b = append(b, "-O"...)
	b = strconv.AppendUint(b, o.seq, 10)
	return append(b, o.stamp...)
}

// idLen is len(o.id()), without building it.
func (o *offer) idLen() int {
	n := 1
	for v := o.seq; v >= 10; v /= 10 {
		n++
	}
	return len(o.master) + 2 + n + len(o.stamp)
}

// hasID reports whether id is exactly the offer's id (not only its
// sequence number: a stale stamp or a leading zero names no offer).
func (o *offer) hasID(id string) bool {
	var buf [128]byte
	return string(o.appendID(buf[:0])) == id
}

// newFramework builds the live state of a framework, not yet in m.frameworks.
func (m *Master) newFramework(id string, info mesos.FrameworkInfo) *framework {
	fw := &framework{id: id, offers: map[uint64]*offer{}, tasks: map[string]*task{}}
	fw.setInfo(info)
	return fw
}

// setInfo sets the framework's info and the role it allocates in. Caller
// holds m.mu once fw is in m.frameworks.
func (fw *framework) setInfo(info mesos.FrameworkInfo) {
	info.ID = &mesos.FrameworkID{Value: fw.id}
	fw.info = info
	fw.multiRole = false
	for _, c := range info.Capabilities {
		if c.GetType() == mesos.FrameworkInfo_Capability_MULTI_ROLE {
			fw.multiRole = true
		}
	}
	fw.role = info.GetRole()
	if fw.multiRole && len(info.Roles) > 0 {
		fw.role = info.Roles[0]
	}
	if fw.role == "" {
		fw.role = resources.Unreserved
	}
}

// frameworkRecordLocked is fw as the registry stores it. Caller holds m.mu.
func (m *Master) frameworkRecordLocked(fw *framework) *api.FrameworkRecord {
	b, _ := fw.info.Marshal()
	rec := &api.FrameworkRecord{Id: fw.id, Info: b, RegisteredUnixNano: fw.registered.UnixNano(), Suppressed: fw.suppressed,
		AppDemand: fw.app, JobSize: fw.jobSize}
	if fw.stream == nil && !fw.disconnectedAt.IsZero() {
		rec.DisconnectedUnixNano = fw.disconnectedAt.UnixNano()
	}
	return rec
}

// taskRecord is t as the registry stores it (it caches the encoded info in
// t). Caller holds m.mu.
func taskRecord(t *task) *api.TaskRecord {
	if t.infoBytes == nil {
		t.infoBytes, _ = t.info.Marshal()
	}
	info := t.infoBytes
	rec := &api.TaskRecord{FrameworkId: t.fw, TaskId: t.id, AgentId: t.agent, ExecutorId: t.executor,
		Info: info, State: int32(t.state), Resources: t.res.String(), Statuses: t.statusesRecord()}
	if t.status != nil {
		rec.Status, _ = t.status.Marshal()
	}
	return rec
}

// taskResources sums a mesos resource list over all roles.
func taskResources(list []mesos.Resource) (resources.Resources, error) {
	byRole, err := resources.FromMesos(list)
	if err != nil {
		return resources.Resources{}, err
	}
	var sum resources.Resources
	for _, r := range byRole {
		sum = sum.Add(r)
	}
	return sum, nil
}
