package scalebench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/framework/sched"
)

// taskCPUs and taskMem are each task's demand: small, so that an agent
// holds many.
const taskCPUs, taskMem = 0.1, 32.0

// planner is one framework's sched.Planner: it keeps up to cap tasks in
// flight, launching on whatever it is offered, and times what arrives.
type planner struct {
	name string
	cap  int
	st   *stats
	mu   sync.Mutex
	seq  int
	live map[string]string // task id -> agent id, not yet terminal
}

var _ sched.Planner = (*planner)(nil)

func (p *planner) Offers(offers []mesos.Offer) []sched.Launch {
	now := time.Now()
	p.st.offerEvents.Add(1)
	for _, o := range offers {
		if at, ok := offerStamp(o.ID.Value); ok {
			p.st.noteOffer(at, now)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []sched.Launch
	for _, o := range offers {
		cpus, mem := sched.ScalarOf(o.Resources, "cpus"), sched.ScalarOf(o.Resources, "mem")
		var tasks []mesos.TaskInfo
		for len(p.live) < p.cap && cpus >= taskCPUs && mem >= taskMem && len(tasks) < 8 {
			p.seq++
			id := p.name + "-t" + strconv.Itoa(p.seq)
			tasks = append(tasks, mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID,
				Resources: []mesos.Resource{sched.Scalar("cpus", taskCPUs), sched.Scalar("mem", taskMem)},
				Command:   &mesos.CommandInfo{Value: strPtr("true")}})
			p.live[id] = o.AgentID.Value
			cpus, mem = cpus-taskCPUs, mem-taskMem
		}
		if len(tasks) > 0 {
			p.st.accepted.Add(int64(len(tasks)))
			out = append(out, sched.Launch{Offer: o.ID, Tasks: tasks})
		}
	}
	return out
}

func (p *planner) Update(st mesos.TaskStatus) {
	now := time.Now()
	id, state := st.TaskID.Value, st.GetState()
	if v, ok := p.st.sent.LoadAndDelete(statusKey(id, state)); ok {
		p.st.noteStatus(v.(time.Time), now, state)
	}
	if taskstate.IsTerminal(state) {
		p.mu.Lock()
		delete(p.live, id)
		p.mu.Unlock()
	}
}

func (p *planner) Wants() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.live) < p.cap
}

func (p *planner) Tasks() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]string, len(p.live))
	for k, v := range p.live {
		out[k] = v
	}
	return out
}

// offerStamp is the allocation time a master started with --stamp-offers
// appends to offer ids ("...-T<unix ns>").
func offerStamp(id string) (time.Time, bool) {
	i := strings.LastIndex(id, "-T")
	if i < 0 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(id[i+2:], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

func strPtr(s string) *string { return &s }

// startFrameworks subscribes cfg.Frameworks clients through every master's
// address and returns them once all are subscribed (or the wait runs out).
func startFrameworks(ctx context.Context, cfg Config, masters []string, st *stats, wg *sync.WaitGroup) ([]*sched.Client, error) {
	var clients []*sched.Client
	for i := 0; i < cfg.Frameworks; i++ {
		name := fmt.Sprintf("bench-fw-%d", i)
		pl := &planner{name: name, cap: cfg.TasksPerFramework, st: st, live: map[string]string{}}
		c, err := sched.New(sched.Config{Masters: masters, Framework: mesos.FrameworkInfo{Name: name, User: "bench"},
			FailoverTimeout: 10 * time.Minute, Logf: func(string, ...any) {}}, pl)
		if err != nil {
			return nil, err
		}
		clients = append(clients, c)
		wg.Add(1)
		go func() { defer wg.Done(); c.Run(ctx) }()
	}
	deadline := time.After(cfg.SetupTimeout)
	for _, c := range clients {
		select {
		case <-c.Subscribed():
		case <-deadline:
			return clients, fmt.Errorf("not every framework subscribed within %v", cfg.SetupTimeout)
		case <-ctx.Done():
			return clients, ctx.Err()
		}
	}
	return clients, nil
}
