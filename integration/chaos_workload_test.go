package integration

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/taskstate"
	fsched "github.com/allot-sched/allot/framework/sched"
)

// chaosLaunch is the framework's record of one launch: every status it
// heard, in order.
type chaosLaunch struct {
	ID, Work, Agent string
	States          []mesos.TaskState
	Reasons         []string
	// AcceptFailed: the client's ACCEPT call failed, so the launch may or
	// may not exist; reconciliation says which.
	AcceptFailed bool
}

// terminals are the distinct terminal states the launch reported, in the
// order first heard.
func (l *chaosLaunch) terminals() []mesos.TaskState {
	var out []mesos.TaskState
	seen := map[mesos.TaskState]bool{}
	for _, s := range l.States {
		if taskstate.IsTerminal(s) && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// chaosPlanner is the chaos test's framework: it runs each of its work
// items as a short task, at most limit at once, and launches a work item
// again (under a new launch id) whenever its launch ends in anything but
// TASK_FINISHED. It keeps its own record of every launch for the checker.
type chaosPlanner struct {
	cmd   func(launchID string) string
	limit int
	work  int

	mu        sync.Mutex
	pending   []string // work items waiting for a launch
	attempts  map[string]int
	launches  map[string]*chaosLaunch
	inflight  int // launches without a terminal state
	finished  map[string]bool
	finishes  []time.Time // when each work item first finished
	finished1 []string    // and which, in the same order
	started   time.Time
	strays    int // updates for launches the framework never made
	accFailed int
}

func newChaosPlanner(work, limit int, cmd func(string) string) *chaosPlanner {
	p := &chaosPlanner{cmd: cmd, limit: limit, work: work, attempts: map[string]int{}, launches: map[string]*chaosLaunch{}, finished: map[string]bool{}, started: time.Now()}
	for i := 0; i < work; i++ {
		p.pending = append(p.pending, fmt.Sprintf("w%03d", i))
	}
	return p
}

const chaosCPUs, chaosMem = 0.1, 16.0

func (p *chaosPlanner) Offers(offers []mesos.Offer) []fsched.Launch {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []fsched.Launch
	for _, o := range offers {
		cpus, mem := fsched.ScalarOf(o.Resources, "cpus"), fsched.ScalarOf(o.Resources, "mem")
		var tasks []mesos.TaskInfo
		for len(p.pending) > 0 && p.inflight < p.limit && cpus >= chaosCPUs-1e-9 && mem >= chaosMem {
			work := p.pending[0]
			p.pending = p.pending[1:]
			p.attempts[work]++
			id := fmt.Sprintf("%s.%d", work, p.attempts[work])
			cmd := p.cmd(id)
			tasks = append(tasks, mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID,
				Command:   &mesos.CommandInfo{Value: &cmd, Shell: boolPtr(true)},
				Resources: []mesos.Resource{fsched.Scalar("cpus", chaosCPUs), fsched.Scalar("mem", chaosMem)}})
			p.launches[id] = &chaosLaunch{ID: id, Work: work, Agent: o.AgentID.Value}
			p.inflight++
			cpus, mem = cpus-chaosCPUs, mem-chaosMem
		}
		if len(tasks) > 0 {
			out = append(out, fsched.Launch{Offer: o.ID, Tasks: tasks})
		}
	}
	return out
}

func (p *chaosPlanner) Update(st mesos.TaskStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.launches[st.TaskID.Value]
	if l == nil {
		p.strays++
		return
	}
	// The client's own TASK_ERROR for a failed ACCEPT is no news from the
	// cluster: the launch stays open for reconciliation to settle.
	if st.GetSource() == mesos.SOURCE_MASTER && st.GetState() == mesos.TASK_ERROR && strings.HasPrefix(st.GetMessage(), "ACCEPT failed") {
		l.AcceptFailed = true
		p.accFailed++
		return
	}
	wasOpen := len(l.terminals()) == 0
	l.States = append(l.States, st.GetState())
	// An unset reason reads as the enum's zero (REASON_COMMAND_EXECUTOR_FAILED):
	// name it only when the update carries one.
	what := st.GetState().String()
	if st.Reason != nil {
		what += "/" + st.GetReason().String()
	}
	l.Reasons = append(l.Reasons, what+": "+st.GetMessage())
	if !wasOpen || !taskstate.IsTerminal(st.GetState()) {
		return
	}
	p.inflight--
	if st.GetState() == mesos.TASK_FINISHED {
		if !p.finished[l.Work] {
			p.finished[l.Work] = true
			p.finishes = append(p.finishes, time.Now())
			p.finished1 = append(p.finished1, l.Work)
		}
		return
	}
	if !p.finished[l.Work] {
		p.pending = append(p.pending, l.Work)
	}
}

func (p *chaosPlanner) Wants() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending) > 0 && p.inflight < p.limit
}

// Tasks lists the launches without a terminal state, for reconciliation.
func (p *chaosPlanner) Tasks() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for id, l := range p.launches {
		if len(l.terminals()) == 0 {
			out[id] = l.Agent
		}
	}
	return out
}

// done reports whether every work item has finished.
func (p *chaosPlanner) done() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.finished) == p.work
}

// finishedCount is how many work items have finished.
func (p *chaosPlanner) finishedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.finished)
}

// runningOn counts, per agent id, the launches last heard TASK_RUNNING.
func (p *chaosPlanner) runningOn() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for _, l := range p.launches {
		if n := len(l.States); n > 0 && l.States[n-1] == mesos.TASK_RUNNING {
			out[l.Agent]++
		}
	}
	return out
}

// snapshot copies the record for the checker.
func (p *chaosPlanner) snapshot() chaosRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := chaosRecord{Work: p.work, Started: p.started, Finishes: append([]time.Time(nil), p.finishes...), FinishedWork: append([]string(nil), p.finished1...), Strays: p.strays, AcceptFailed: p.accFailed}
	for _, l := range p.launches {
		c := *l
		c.States = append([]mesos.TaskState(nil), l.States...)
		r.Launches = append(r.Launches, &c)
	}
	sort.Slice(r.Launches, func(i, j int) bool { return r.Launches[i].ID < r.Launches[j].ID })
	return r
}
