package integration

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	fsched "github.com/allot-sched/allot/framework/sched"
	"github.com/allot-sched/allot/internal/testcluster"
)

// offerLog numbers OFFERS across the frameworks of a test in arrival
// order and keeps, per framework, the number of each agent's first offer
// since the last reset.
type offerLog struct {
	mu    sync.Mutex
	n     int
	first map[string]map[string]int // framework name -> agent id -> n
}

func (l *offerLog) offered(fw, agent string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first[fw][agent]
}

// reset forgets every offer seen so far (a new leader offers afresh).
func (l *offerLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.first = map[string]map[string]int{}
}

// order waits until every framework was offered agent and returns their
// names in the order they were.
func (l *offerLog) order(t *testing.T, agent string, fws ...string) []string {
	t.Helper()
	testcluster.WaitFor(t, 60*time.Second, "an offer of agent "+agent+" to every framework", func() bool {
		for _, f := range fws {
			if l.offered(f, agent) == 0 {
				return false
			}
		}
		return true
	})
	out := slices.Clone(fws)
	slices.SortFunc(out, func(a, b string) int { return l.offered(a, agent) - l.offered(b, agent) })
	return out
}

// declinePlanner wants offers and takes none: the client declines each
// with its hour-long refuse filter, so every agent is offered to each
// framework once, in the sorter's order.
type declinePlanner struct {
	name string
	log  *offerLog
}

func (p *declinePlanner) Offers(offers []mesos.Offer) []fsched.Launch {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	p.log.n++
	if p.log.first[p.name] == nil {
		p.log.first[p.name] = map[string]int{}
	}
	for _, o := range offers {
		if p.log.first[p.name][o.AgentID.Value] == 0 {
			p.log.first[p.name][o.AgentID.Value] = p.log.n
		}
	}
	return nil
}
func (*declinePlanner) Update(mesos.TaskStatus)  {}
func (*declinePlanner) Wants() bool              { return true }
func (*declinePlanner) Tasks() map[string]string { return map[string]string{} }

// startSized runs a framework/sched client (mesos-go httpsched) that
// declares js through FrameworkInfo labels and follows the leader.
func startSized(t *testing.T, seeds []string, name string, js *api.JobSize, log *offerLog) {
	t.Helper()
	c, err := fsched.New(fsched.Config{Masters: seeds, Framework: mesos.FrameworkInfo{Name: name, User: "root"},
		JobSize: js, RefuseSeconds: time.Hour, FailoverTimeout: 2 * time.Minute, Logf: func(string, ...any) {}},
		&declinePlanner{name: name, log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-c.Subscribed():
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not subscribe", name)
	}
}

// agentIDs is the set of agent ids the leader knows.
func (c *mcluster) agentIDs() map[string]bool {
	ids := map[string]bool{}
	for _, s := range c.state().Slaves {
		ids[s.ID] = true
	}
	return ids
}

// addAgentID starts an agent and returns the id the leader gave it.
func (c *mcluster) addAgentID() string {
	c.t.Helper()
	before := c.agentIDs()
	c.addAgent("cpus:2;mem:2048;disk:10000;ports:[31000-32000]")
	var id string
	testcluster.WaitFor(c.t, 30*time.Second, "the new agent on the leader", func() bool {
		for a := range c.agentIDs() {
			if !before[a] {
				id = a
				return true
			}
		}
		return false
	})
	return id
}

// virtualServed is the virtual work (MB x s) master i's FSP virtual
// cluster has done for job, as of its last update (0 if it does not say).
// The model's state is gob (allocator/policy/fsp/virtual.go's virtualSnapshot); gob
// matches fields by name, so these are the fields read of it.
func virtualServed(c *mcluster, i int, job string) float64 {
	v := c.policyView(i)
	if v == nil {
		return 0
	}
	for _, m := range v.Models {
		if m.Name != "fsp-virtual-cluster" {
			continue
		}
		var raw []byte // not JSON: a base64 string
		if json.Unmarshal(m.State, &raw) != nil {
			return 0
		}
		var snap struct {
			Jobs []struct {
				Job    string
				Served float64
			}
		}
		if gob.NewDecoder(bytes.NewReader(raw)).Decode(&snap) != nil {
			return 0
		}
		for _, j := range snap.Jobs {
			if j.Job == job {
				return j.Served
			}
		}
	}
	return 0
}

func knownSize(job string, size float64) *api.JobSize {
	return &api.JobSize{Job: job, Kind: api.JobSizeKnown, SizeMbS: size, ApbMb: 4096}
}

// Three masters under --sorter fspy; three mesos-go frameworks declare
// job sizes through labels only: a (1e6 MB x s, first), b (10 less,
// after a was served alone), c (half of a). A new agent goes to c, a, b.
// kill -9 the leader once it has replicated the virtual cluster: under the
// new leader a new agent goes to c, a, b again. A new leader that rebuilt
// the virtual cluster from the labels alone would offer c, b, a: a's head
// start lives only in the replicated model.
func TestRaftFSPYOrderSurvivesKill9(t *testing.T) {
	c := newMCluster(t, 3, 1, "--sorter", "fspy", "--policy-sync-interval", "200ms")
	seeds := c.seeds()
	first := c.agentIDs()
	log := &offerLog{first: map[string]map[string]int{}}
	startSized(t, seeds, "a", knownSize("a1", 1e6), log)
	for agent := range first {
		log.order(t, agent, "a")
	}
	// a's head start: served alone (2,048 MB of virtual memory) until its
	// virtual work exceeds b's 10 MB x s less, as the leader's virtual
	// cluster counts it; b declares after that.
	lead := c.leader(10 * time.Second)
	testcluster.WaitFor(t, 30*time.Second, "a's virtual work past 10 MB x s", func() bool {
		return virtualServed(c, lead, "a1") > 10
	})
	startSized(t, seeds, "b", knownSize("b1", 1e6-10), log)
	startSized(t, seeds, "c", knownSize("c1", 5e5), log)
	declared := time.Now().UnixNano()
	for agent := range first {
		log.order(t, agent, "a", "b", "c")
	}
	added := c.addAgentID()
	if got := log.order(t, added, "a", "b", "c"); !slices.Equal(got, []string{"c", "a", "b"}) {
		t.Fatalf("a new agent was offered in the order %v, want c a b", got)
	}
	all := map[string]bool{added: true}
	for a := range first {
		all[a] = true
	}
	old := c.leader(10 * time.Second)
	testcluster.WaitFor(t, 30*time.Second, "the virtual cluster replicated after the declarations", func() bool {
		v := c.policyView(old)
		return v != nil && v.Replicated != nil && v.Replicated.UpdatedUnixNano > declared
	})
	c.kill9(old)
	log.reset()
	lead = c.leader(30 * time.Second)
	if lead == old {
		t.Fatalf("master %d still leads after kill -9", old)
	}
	// Wait until every agent started has re-registered (the new leader's
	// registry may not hold one whose registration was not yet committed
	// when the leader died: it comes back as it re-registers) and the
	// re-subscribed frameworks have declined them all, so the next agent
	// is the only thing on offer.
	c.waitAgents(len(all))
	for agent := range all {
		log.order(t, agent, "a", "b", "c")
	}
	if got := log.order(t, c.addAgentID(), "a", "b", "c"); !slices.Equal(got, []string{"c", "a", "b"}) {
		t.Fatalf("after re-election a new agent was offered in the order %v, want c a b", got)
	}
	for _, op := range []string{"restore_policies", "set_job_size"} {
		if n := testcluster.MetricSum(c.masters[lead].http, `allot_master_allocator_errors_total{op="`+op+`"}`); n != 0 {
			t.Errorf("allocator errors %s on the new leader: %v", op, n)
		}
	}
}
