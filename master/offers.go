package master

import (
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/resources"
)

// Offers: the allocation cycle, the offer table (m.offers and each
// framework's fw.offers), rescinding, and the launch half of ACCEPT (the
// call is validated in acceptplan.go). The allocator is called to allocate
// in exactly one place, allocateLocked.

// triggerAllocation asks the allocation loop for a cycle soon; calls
// coalesce. It needs no lock.
func (m *Master) triggerAllocation() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// allocationLoop runs a cycle every allocation interval and whenever
// triggerAllocation asks, while this master leads.
func (m *Master) allocationLoop() {
	t := time.NewTicker(m.cfg.AllocationInterval)
	defer t.Stop()
	pace := newKickPacer(m.cfg.AllocationInterval) // allocpace.go
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		case <-m.kick:
			if !pace.wait(m.stop, t.C, m.kick) {
				return
			}
		}
		if m.leader.Load() {
			m.allocate()
		}
		pace.ran()
	}
}

// allocate runs one allocation cycle. Takes m.mu for the allocator's
// decisions and the offer table; the OFFERS events are encoded and queued
// after it is released (offerdeliver.go).
func (m *Master) allocate() {
	start := time.Now()
	m.mu.Lock()
	m.maintenanceTickLocked()
	b := m.prepareOffersLocked(m.alloc.Allocate())
	m.refreshGaugesLocked()
	m.sampleLocked() // samples.go
	m.mu.Unlock()
	b.deliver()
	m.m.allocCycle.Observe(time.Since(start).Seconds())
}

// allocateLocked asks the allocator for its decisions and sends each
// framework its offers in one OFFERS event. A decision for a framework or
// agent that is not connected goes straight back to the allocator. Caller
// holds m.mu.
func (m *Master) allocateLocked() {
	m.maintenanceTickLocked()
	m.offerLocked(m.alloc.Allocate())
}

// offerLocked is the master's half of a cycle, everything around the
// allocator: offers and their ids, the offer table, one encoded OFFERS event
// per framework, inverse offers. BenchmarkMasterOfferPath times it apart
// from the allocator. Caller holds m.mu.
func (m *Master) offerLocked(decided allocator.Decisions) {
	m.prepareOffersLocked(decided).deliver()
}

// prepareOffersLocked is offerLocked but for the protobuf OFFERS events,
// which it returns to be encoded and queued by the caller, with or without
// m.mu (offerdeliver.go). Caller holds m.mu.
func (m *Master) prepareOffersLocked(decided allocator.Decisions) offerBatch {
	if m.cfg.StampOffers {
		m.offerStamp = "-T" + strconv.FormatInt(m.clock.Now().UnixNano(), 10)
	}
	// Offers are grouped per framework in fw.cycle, whose capacity lasts
	// from cycle to cycle, in the order of the frameworks' first offers.
	// A map of fresh slices per cycle cost a map and a few slice growths
	// per framework every cycle (BenchmarkMasterOfferPath, docs/scale.md).
	fws := m.cycleFws[:0]
	made := 0
	refs := m.lookupDecisionsLocked(decided.Offers)
	for i, d := range decided.Offers {
		mo, fw := m.makeOfferLocked(d, refs[i])
		if fw == nil {
			continue
		}
		made++
		if len(fw.cycle) == 0 {
			fws = append(fws, fw)
		}
		fw.cycle = append(fw.cycle, mo)
	}
	var batch offerBatch
	for _, fw := range fws {
		if p := m.sendOffersLocked(fw, fw.cycle); p != nil {
			batch = append(batch, p)
		}
		// Cleared, not only truncated: the next cycle must not keep
		// this cycle's offers and agents alive.
		clear(fw.cycle)
		fw.cycle = fw.cycle[:0]
	}
	clear(fws)
	m.cycleFws = fws[:0]
	clear(refs)
	m.cycleRefs = refs[:0]
	// One atomic add per cycle, not one per offer.
	m.m.offers.Add(float64(made))
	m.sendInverseOffersLocked(m.withMaintenanceInversesLocked(decided.InverseOffers))
	return batch
}

// madeOffer is an offer of this cycle with the agent it is on and, if its
// framework encodesOffers, what prepare found: Offer fields 3-8 encoded (the agent's and
// the resources) and the Offer message's size.
type madeOffer struct {
	offer  *offer
	agent  *agentState
	fields []byte
	size   int
	// allocRole is the allocation_info role the offer carries ("" for a
	// framework that is not multi-role), set by prepare.
	allocRole string
}

// sendOffersLocked sends fw the offers made to it in this cycle as one
// OFFERS event: a protobuf stream gets it encoded by encodeOffers,
// straight from the offer table, and returned to be sent once m.mu is
// released (offerdeliver.go); a JSON stream, or a framework still
// subscribing (whose events are held, decoded), gets mesos-go's, sent now.
// Caller holds m.mu.
func (m *Master) sendOffersLocked(fw *framework, offers []madeOffer) *pendingOffers {
	if fw == nil || fw.stream == nil {
		return nil
	}
	if fw.encodesOffers() {
		return m.deferOffersLocked(fw, offers)
	}
	mos := make([]mesos.Offer, len(offers))
	for i, mo := range offers {
		mos[i] = m.mesosOfferLocked(fw, mo.agent, mo.offer)
	}
	m.sendFrameworkLocked(fw, &schedEvent{Type: evOffers, Offers: &schedOffers{Offers: mos}})
	return nil
}

// decisionRef is a decision's framework and agent (nil if not known).
type decisionRef struct {
	fw *framework
	a  *agentState
}

// lookupDecisionsLocked looks up every decision's framework and agent, in a
// loop of its own: at 10,000 agents each lookup waits on memory, and the
// waits of a small loop can overlap, where one per pass of makeOfferLocked's
// long body could not (BenchmarkMasterOfferPath, docs/scale.md). The slice's
// capacity lasts from cycle to cycle. Caller holds m.mu.
func (m *Master) lookupDecisionsLocked(ds []allocator.Offer) []decisionRef {
	refs := m.cycleRefs[:0]
	for i := range ds {
		refs = append(refs, decisionRef{m.frameworks[ds[i].Framework], m.agents[ds[i].Agent]})
	}
	return refs
}

// makeOfferLocked records decision d, whose framework and agent are ref, in
// the offer table, with its timeout, and returns it with its framework; a
// nil framework if d cannot be offered (its resources are then recovered).
// Caller holds m.mu.
func (m *Master) makeOfferLocked(d allocator.Offer, ref decisionRef) (madeOffer, *framework) {
	fw, a := ref.fw, ref.a
	if fw == nil || fw.stream == nil || a == nil || a.stream == nil {
		m.allocOK("recover", m.recoverAs(d.Framework, d.Agent, d.Role, d.Resources, nil), "framework_id", d.Framework, "agent_id", d.Agent)
		return madeOffer{}, nil
	}
	if m.gpuFilteredLocked(fw, a, d) { // gpus.go
		return madeOffer{}, nil
	}
	m.seq++
	o := m.newOfferLocked()
	// d's ids, not fw.id and a.rec.Id: the same strings (the tables'
	// keys), without fetching the agent's record.
	*o = offer{seq: m.seq, master: m.id, stamp: m.offerStamp, fw: d.Framework, agent: d.Agent, role: d.Role, res: d.Resources}
	m.reserveOfferLocked(o, a, d.Reserved) // resvoffers.go
	m.offers[o.seq] = o
	fw.offers[o.seq] = o
	a.addOffer(o)
	if m.cfg.OfferTimeout > 0 {
		seq := o.seq
		o.timer = m.clock.AfterFunc(m.cfg.OfferTimeout, func() { m.rescindOffer(seq, "offer timed out") })
	}
	// Guarded: the arguments (the resources' string) cost more than the
	// offer itself when debug logging is off, as it is under load.
	if e := m.log.Debug(); e.Enabled() {
		e.Str("framework_id", fw.id).Str("agent_id", a.rec.Id).Str("resources", d.Resources.String()).
			Str("reason", d.Reason.String()).Msg("offer")
	}
	mo := madeOffer{offer: o, agent: a}
	if fw.encodesOffers() {
		mo.prepare(fw.id, fw.allocRole(o), m.scheme())
	}
	return mo, fw
}

// encodesOffers reports whether fw's OFFERS events are encoded by
// encodeOffers (a protobuf stream, not held while subscribing) rather than
// by mesos-go. Caller holds m.mu, from the cycle's first offer to its
// last event, so the answer holds for the whole cycle.
func (fw *framework) encodesOffers() bool {
	return !fw.subscribing && fw.stream.Codec == api.Protobuf
}

// offerSlabSize is how many offers newOfferLocked carves from one
// allocation. An outstanding offer keeps its whole slab alive, so the slab
// is small: at most 63 dead offers (about 12 KiB) per live one.
const offerSlabSize = 64

// newOfferLocked returns room for one offer, from a slab of offerSlabSize:
// one allocation per 64 offers instead of one per offer. Caller holds m.mu.
func (m *Master) newOfferLocked() *offer {
	if len(m.offerSlab) == cap(m.offerSlab) {
		m.offerSlab = make([]offer, 0, offerSlabSize)
	}
	m.offerSlab = m.offerSlab[:len(m.offerSlab)+1]
	return &m.offerSlab[len(m.offerSlab)-1]
}

// frameworkOfferLocked is fw's outstanding offer whose id is exactly id, or
// nil: ACCEPT and DECLINE name offers by id, the tables key them by
// sequence number. An id this master did not make (another master's, a
// malformed one) names no offer. Caller holds m.mu.
func (m *Master) frameworkOfferLocked(fw *framework, id string) *offer {
	seq, ok := m.offerSeq(id)
	if !ok {
		return nil
	}
	if o := fw.offers[seq]; o != nil && o.hasID(id) {
		return o
	}
	return nil
}

// offersByID is the offers of tbl in the order of their id strings, as the
// operator API lists them (the tables are keyed by sequence number).
func offersByID(tbl map[uint64]*offer) []*offer {
	out := make([]*offer, 0, len(tbl))
	ids := make(map[*offer]string, len(tbl))
	for _, o := range tbl {
		out = append(out, o)
		ids[o] = o.id()
	}
	sort.Slice(out, func(i, j int) bool { return ids[out[i]] < ids[out[j]] })
	return out
}

// offerSeq is the sequence number in an offer id "<master>-O<seq>...", if
// id has that form for this master.
func (m *Master) offerSeq(id string) (uint64, bool) {
	rest, ok := strings.CutPrefix(id, m.id)
	if !ok {
		return 0, false
	}
	if rest, ok = strings.CutPrefix(rest, "-O"); !ok {
		return 0, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	seq, err := strconv.ParseUint(rest[:n], 10, 64)
	return seq, err == nil
}

// mesosOfferLocked is offer o as the Mesos API shows it. Caller holds m.mu.
func (m *Master) mesosOfferLocked(fw *framework, a *agentState, o *offer) mesos.Offer {
	allocRole := fw.allocRole(o)
	host := a.rec.Hostname
	mo := mesos.Offer{
		ID:          mesos.OfferID{Value: o.id()},
		FrameworkID: mesos.FrameworkID{Value: fw.id},
		AgentID:     mesos.AgentID{Value: a.rec.Id},
		Hostname:    host,
		Resources:   o.mesosResources(allocRole),
	}
	if allocRole != "" {
		mo.AllocationInfo = &mesos.Resource_AllocationInfo{Role: strPtr(allocRole)}
	}
	mo.Attributes = offerAttributes(a.rec)
	mo.URL = a.offerURL(m.scheme())
	mo.Unavailability = a.unavail
	return mo
}

// offerURL is the agent's URL as offers carry it, built once per agent
// record and scheme: every offer on the agent shares it (events are encoded as they
// are sent, and nothing writes to it). Nil if the address has no port.
func (a *agentState) offerURL(scheme string) *mesos.URL {
	if a.url == nil || a.urlFor != a.rec.Address || a.url.Scheme != scheme {
		a.url, a.urlFor = nil, a.rec.Address
		if h, p, err := net.SplitHostPort(a.rec.Address); err == nil {
			port, _ := strconv.Atoi(p)
			a.url = &mesos.URL{Scheme: scheme, Address: mesos.Address{Hostname: &h, Port: int32(port)}, Path: strPtr("/slave(1)")}
		}
	}
	return a.url
}

// rescindOffer withdraws the outstanding offer seq and returns its
// resources. Takes m.mu (it runs from the offer's timer).
func (m *Master) rescindOffer(seq uint64, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.offers[seq]
	if o == nil {
		return
	}
	id := o.id()
	m.removeOfferLocked(o, true, nil)
	if fw := m.frameworks[o.fw]; fw != nil {
		m.sendFrameworkLocked(fw, rescindEvent(id))
	}
	m.log.Info().Str("offer_id", id).Str("why", why).Msg("offer rescinded")
	m.triggerAllocation()
}

// removeAgentOffersLocked forgets every offer on agent id and returns its
// resources; with rescind each framework is told (RESCIND). Caller holds
// m.mu.
func (m *Master) removeAgentOffersLocked(id string, rescind bool) {
	a := m.agents[id]
	if a == nil {
		return
	}
	// The agent's own index, not a scan of m.offers: every (re-)registration
	// comes here, and after a failover 10,000 agents re-registering while
	// the new leader offers made this quadratic (the scale harness's
	// profile, docs/scale.md).
	// From the end, dropping each first, so the loop ends whatever
	// removeOfferLocked finds (it drops the offer from m.agents[o.agent]).
	for len(a.offers) > 0 {
		o := a.offers[len(a.offers)-1]
		a.dropOffer(o)
		m.removeOfferLocked(o, true, nil)
		if rescind {
			m.sendFrameworkLocked(m.frameworks[o.fw], rescindEvent(o.id()))
		}
	}
}

func rescindEvent(offerID string) *schedEvent {
	return &schedEvent{Type: evRescind, Rescind: &schedRescind{OfferID: mesos.OfferID{Value: offerID}}}
}

// removeOfferLocked forgets o; with recoverRes its resources go back to the
// allocator (with filter fl). Caller holds m.mu.
func (m *Master) removeOfferLocked(o *offer, recoverRes bool, fl *allocator.Filter) {
	if o.timer != nil {
		o.timer.Stop()
	}
	delete(m.offers, o.seq)
	if fw := m.frameworks[o.fw]; fw != nil {
		delete(fw.offers, o.seq)
	}
	if a := m.agents[o.agent]; a != nil {
		a.dropOffer(o)
	}
	if recoverRes {
		m.recoverOfferLocked(o, fl) // resvoffers.go
	}
}

// sendFrameworkLocked queues an event on the framework's stream, if
// connected. Caller holds m.mu.
func (m *Master) sendFrameworkLocked(fw *framework, ev *schedEvent) {
	if fw == nil || fw.stream == nil {
		return
	}
	// After the OFFERS of the last cycle, which may not be queued yet.
	m.deliverPendingLocked(fw)
	if fw.subscribing {
		fw.held = append(fw.held, ev)
		return
	}
	fw.stream.Send(ev)
}

// declineLocked returns the named offers of fw with the decline's filter.
// Caller holds m.mu.
func (m *Master) declineLocked(fw *framework, dec *scheduler.Call_Decline) {
	fl := filterOf(dec.Filters)
	for _, id := range dec.OfferIDs {
		if o := m.frameworkOfferLocked(fw, id.Value); o != nil {
			m.removeOfferLocked(o, true, fl)
		}
	}
	m.triggerAllocation()
}

// plannedLaunch is one validated LAUNCH or LAUNCH_GROUP operation.
type plannedLaunch struct {
	tasks    []mesos.TaskInfo
	group    bool
	executor *mesos.ExecutorInfo
}

// acceptPlan is an ACCEPT that passed validation (planAcceptLocked in
// acceptplan.go): the offers it consumes, their agent, the launches in call
// order and what is left of the offered resources.
type acceptPlan struct {
	offers    []*offer
	agent     *agentState
	launches  []plannedLaunch
	remaining resources.Resources
	filter    *allocator.Filter
	refused   []refusedTask
	resv      *acceptResv // its reservation and volume operations (resvaccept.go)
	role      string      // the offers' allocation role (multirole.go)
}

// launchLocked carries out a validated ACCEPT: it consumes the offers,
// records the tasks (registry and operator subscribers), tells the agent to
// run them, and returns what is left to the allocator with the call's
// filter. Caller holds m.mu.
func (m *Master) launchLocked(fw *framework, p *acceptPlan) {
	for _, o := range p.offers {
		m.removeOfferLocked(o, false, nil)
	}
	m.applyAcceptOpsLocked(fw, p)
	fwInfo, _ := fw.info.Marshal()
	for _, l := range p.launches {
		if l.group {
			m.launchGroupLocked(fw, p.agent, l, fwInfo)
		} else {
			m.launchTasksLocked(fw, p.agent, l.tasks, fwInfo)
		}
	}
	m.refuseLocked(fw, p.agent.rec.Id, p.refused)
	if !p.remaining.IsEmpty() {
		m.recoverRemainingLocked(fw, p) // resvaccept.go
	}
	m.triggerAllocation()
}

// launchGroupLocked launches a task group under its executor in one RUN.
// Caller holds m.mu.
func (m *Master) launchGroupLocked(fw *framework, a *agentState, l plannedLaunch, fwInfo []byte) {
	tg := mesos.TaskGroupInfo{Tasks: l.tasks}
	exB, _ := l.executor.Marshal()
	tgB, _ := tg.Marshal()
	m.addExecutorLocked(a, fw.id, l.executor)
	for i := range l.tasks {
		m.addTaskLocked(fw, a, &l.tasks[i], l.executor.ExecutorID.Value)
	}
	m.sendRunLocked(a, &api.AgentEvent{Type: api.AgentEventType_RUN, FrameworkId: fw.id, ExecutorId: l.executor.ExecutorID.Value,
		FrameworkInfo: fwInfo, ExecutorInfo: exB, TaskGroup: tgB})
}

// launchTasksLocked launches each task with its own RUN (command tasks, or
// tasks naming their executor). Caller holds m.mu.
func (m *Master) launchTasksLocked(fw *framework, a *agentState, tasks []mesos.TaskInfo, fwInfo []byte) {
	for i := range tasks {
		t := &tasks[i]
		ev := &api.AgentEvent{Type: api.AgentEventType_RUN, FrameworkId: fw.id, FrameworkInfo: fwInfo}
		exID := ""
		if t.Executor != nil {
			t.Executor.FrameworkID = &mesos.FrameworkID{Value: fw.id}
			m.addExecutorLocked(a, fw.id, t.Executor)
			exID = t.Executor.ExecutorID.Value
			ev.ExecutorId = exID
			ev.ExecutorInfo, _ = t.Executor.Marshal()
		}
		ev.Task, _ = t.Marshal()
		m.addTaskLocked(fw, a, t, exID)
		m.sendRunLocked(a, ev)
	}
}

// addExecutorLocked records an executor the agent is about to start, once.
// Caller holds m.mu.
func (m *Master) addExecutorLocked(a *agentState, fwID string, ex *mesos.ExecutorInfo) {
	key := fwID + "/" + ex.ExecutorID.Value
	if _, ok := a.executors[key]; ok {
		return
	}
	res, _ := taskResources(ex.Resources)
	a.executors[key] = res
}

// addTaskLocked records a task being launched (STAGING) in the framework,
// the registry and for operator subscribers. Caller holds m.mu.
func (m *Master) addTaskLocked(fw *framework, a *agentState, ti *mesos.TaskInfo, exID string) {
	res, _ := taskResources(ti.Resources)
	t := &task{id: ti.TaskID.Value, fw: fw.id, agent: a.rec.Id, executor: exID, info: *ti, res: res, state: mesos.TASK_STAGING}
	fw.tasks[t.id] = t
	m.placedLocked(fw.id) // placement_sticky.go
	m.tasksOn.place(t)
	m.m.tasksLaunched.Inc()
	m.rep.propose(&api.Command{Type: api.CommandType_TASK_UPSERT, Task: taskRecord(t)})
	m.publishTaskLocked(evTaskAdded, t)
}
