package framework

import (
	"context"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/framework/eventlog"
	"github.com/allot-sched/allot/framework/placement"
	"github.com/allot-sched/allot/framework/sched"
	"github.com/allot-sched/allot/profile"
)

// mesosBackend launches executors from Mesos offers through sched.Client.
type mesosBackend struct {
	c      *Context
	client *sched.Client
	cancel context.CancelFunc
	done   chan struct{}

	// mu guards next, want, tasks and failures. It is never held while
	// calling the driver (events excepted: the event log's lock is a leaf).
	mu       sync.Mutex
	next     int
	want     int
	tasks    map[string]*mesosExec // executor id (= task id) -> launch
	failures int
	binary   string

	// profile is the executors' declared demand profile (nil: none); with
	// placement Prophet it scores the agents (placement.go).
	profile   *profile.Profile
	placement placement.Mode
	// Inverse offers (mesos_inverse.go): outstanding ones by id, when the
	// last arrived, and the task count last declared.
	inverse     map[string]inverseOffer
	lastInverse time.Time
	declared    int
}

type mesosExec struct {
	agent    string
	launched time.Time // when the backend launched it: its profile's anchor
	state    mesos.TaskState
	released bool
}

func newMesosBackend(c *Context) (*mesosBackend, error) {
	cfg := c.cfg
	bin := cfg.ExecutorBinary
	if bin == "" && cfg.ExecutorURI == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding this binary for the executors: %w (set ExecutorBinary)", err)
		}
	}
	b := &mesosBackend{c: c, tasks: map[string]*mesosExec{}, binary: bin, done: make(chan struct{})}
	var err error
	role := cfg.Role
	if role == "" {
		role = "*"
	}
	host, _ := os.Hostname()
	demand := &sched.Demand{Resources: []mesos.Resource{sched.Scalar("cpus", float64(cfg.Cores)+executorCPUs), sched.Scalar("mem", float64(cfg.MemMB)+executorMem)}, Tasks: cfg.MaxExecutors}
	if b.placement, err = placement.ParseMode(cfg.Placement); err != nil {
		return nil, err
	}
	if cfg.DemandModel != "" || cfg.Profile != nil {
		res, p, why, err := declaredProfile(cfg)
		if err != nil {
			return nil, err
		}
		if p != nil {
			demand.Resources = append(demand.Resources, res)
			b.profile = p
		}
		cfg.Logf("demand profile: declared=%v (%s)", p != nil, why)
	}
	cl, err := sched.New(sched.Config{Masters: strings.Split(cfg.Master, ","), Framework: mesos.FrameworkInfo{Name: cfg.App, Role: &role, Hostname: &host},
		FailoverTimeout: cfg.FailoverTimeout, RefuseSeconds: cfg.RefuseAfter, Demand: demand, Logf: cfg.Logf, TLS: c.masterTLS, Credential: cfg.Credential,
		// an application demand moves the framework onto the gang path:
		// no offer before the REQUEST declares it
		SubscribeSuppressed: b.profile != nil,
		OnDecline: func(n int, refuse, held time.Duration) {
			c.emit(&eventlog.OffersDeclined{Time: c.now(), Offers: n, RefuseSeconds: refuse.Seconds(), HeldS: held.Seconds()})
		}}, b)
	if err != nil {
		return nil, err
	}
	b.client = cl
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	go func() {
		defer close(b.done)
		if err := cl.Run(ctx); err != nil && ctx.Err() == nil {
			c.fail(fmt.Errorf("Mesos scheduler: %w", err))
		}
	}()
	select {
	case <-cl.Subscribed():
	case <-b.done:
		return nil, fmt.Errorf("could not subscribe to master %s", cfg.Master)
	case <-time.After(15 * time.Second):
		cancel()
		return nil, fmt.Errorf("could not subscribe to master %s within 15s: is `allot dev` (or a master) running there?", cfg.Master)
	}
	return b, nil
}

func (b *mesosBackend) live() int {
	n := 0
	for _, t := range b.tasks {
		if !t.released && !taskstate.IsTerminal(t.state) {
			n++
		}
	}
	return n
}

// Wants implements sched.Planner.
func (b *mesosBackend) Wants() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.live() < b.want
}

// Offers implements sched.Planner: one executor per offer per round, so
// executors spread over agents.
func (b *mesosBackend) Offers(offers []mesos.Offer) []sched.Launch {
	if b.placement == placement.Prophet {
		offers = b.prophetOrder(offers) // takes b.mu itself, and asks the master without it
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	cfg := b.c.cfg
	needCPU, needMem := float64(cfg.Cores)+executorCPUs, float64(cfg.MemMB)+executorMem
	// Rounds of one executor per offer, so executors spread over agents,
	// until the target is met or nothing more fits.
	left := make([][2]float64, len(offers))
	for i, o := range offers {
		left[i] = [2]float64{sched.ScalarOf(o.Resources, "cpus"), sched.ScalarOf(o.Resources, "mem")}
	}
	byOffer := map[int]*sched.Launch{}
	for placed := true; placed && b.live() < b.want; {
		placed = false
		for i, o := range offers {
			if b.live() >= b.want || left[i][0] < needCPU-1e-9 || left[i][1] < needMem-1e-9 {
				continue
			}
			left[i][0] -= needCPU
			left[i][1] -= needMem
			placed = true
			b.next++
			id := fmt.Sprintf("exec-%d", b.next)
			b.tasks[id] = &mesosExec{agent: o.AgentID.Value, state: mesos.TASK_STAGING, launched: b.c.clock.Now()}
			if byOffer[i] == nil {
				byOffer[i] = &sched.Launch{Offer: o.ID}
			}
			byOffer[i].Tasks = append(byOffer[i].Tasks, b.taskInfo(id, o))
			b.c.emit(&eventlog.ExecutorLaunched{Time: b.c.now(), Executor: id, Agent: o.AgentID.Value, Host: o.Hostname})
		}
	}
	var out []sched.Launch
	for i := range offers {
		if l := byOffer[i]; l != nil {
			out = append(out, *l)
		}
	}
	return out
}

func (b *mesosBackend) taskInfo(id string, o mesos.Offer) mesos.TaskInfo {
	cfg := b.c.cfg
	f := false
	env := &mesos.Environment{Variables: []mesos.Environment_Variable{
		{Name: envExecutor, Value: strp("1")}, {Name: envDriver, Value: strp(b.c.url)},
		{Name: envCores, Value: strp(strconv.Itoa(cfg.Cores))}, {Name: envBlockMem, Value: strp(strconv.Itoa(cfg.BlockMemMB << 20))}}}
	cmd := &mesos.CommandInfo{Value: strp(b.binary), Arguments: []string{b.binary}, Shell: &f, Environment: env}
	if cfg.ExecutorURI != "" {
		name := path.Base(cfg.ExecutorURI)
		t := true
		cmd.URIs = []mesos.CommandInfo_URI{{Value: cfg.ExecutorURI, Executable: &t}}
		cmd.Value, cmd.Arguments = strp(name), []string{name}
	}
	ex := &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: id}, Type: mesos.ExecutorInfo_CUSTOM, Name: strp(cfg.App + " executor"),
		Command: cmd, Resources: []mesos.Resource{sched.Scalar("cpus", executorCPUs), sched.Scalar("mem", executorMem)}}
	return mesos.TaskInfo{Name: cfg.App + " " + id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID, Executor: ex,
		Resources: []mesos.Resource{sched.Scalar("cpus", float64(cfg.Cores)), sched.Scalar("mem", float64(cfg.MemMB))}}
}

// Update implements sched.Planner.
func (b *mesosBackend) Update(st mesos.TaskStatus) {
	id := st.TaskID.Value
	b.mu.Lock()
	t := b.tasks[id]
	if t == nil {
		b.mu.Unlock()
		return
	}
	t.state = st.GetState()
	terminal := taskstate.IsTerminal(t.state)
	released := t.released
	b.mu.Unlock()
	// The backend never holds b.mu while calling the driver (see backend),
	// so look at the driver with b.mu released.
	var abort error
	if terminal && !released {
		if registered, ever := b.c.registration(id); !registered && !ever {
			b.mu.Lock()
			b.failures++
			if b.failures >= b.c.cfg.ExecutorStartFailures {
				abort = fmt.Errorf("executors cannot start: %d launches failed and none registered; the last, %s on agent %s, ended %s: %s. Check the executor binary (%s): it must exist and be executable at that path on every agent, or give an executor URI the agents can fetch",
					b.failures, id, t.agent, t.state, st.GetMessage(), b.describeBinary())
			}
			b.mu.Unlock()
		}
	}
	if terminal {
		b.c.emit(&eventlog.ExecutorTaskEnded{Time: b.c.now(), Executor: id, State: t.state.String(), Message: st.GetMessage(), Released: released})
		if !released {
			b.c.executorLost(id, fmt.Sprintf("Mesos task %s: %s", t.state, st.GetMessage()))
		}
		if abort != nil {
			b.c.fail(abort)
		} else {
			b.client.Wake()
		}
	}
}

func (b *mesosBackend) describeBinary() string {
	if b.c.cfg.ExecutorURI != "" {
		return "URI " + b.c.cfg.ExecutorURI
	}
	return b.binary
}

// Tasks implements sched.Planner.
func (b *mesosBackend) Tasks() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]string{}
	for id, t := range b.tasks {
		if !taskstate.IsTerminal(t.state) {
			out[id] = t.agent
		}
	}
	return out
}

func (b *mesosBackend) known(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.tasks[id]
	return t != nil && !t.released
}

func (b *mesosBackend) setTarget(n int) {
	b.mu.Lock()
	b.want = n
	b.mu.Unlock()
	b.redeclare(n)
	b.client.Wake()
}

func (b *mesosBackend) release(id string) {
	b.mu.Lock()
	t := b.tasks[id]
	if t != nil {
		t.released = true
	}
	b.mu.Unlock()
	if t != nil {
		b.client.Kill(id, t.agent)
		b.acceptInverseOn(t.agent)
	}
	b.client.Wake()
}

// stop tears the framework down: the master shuts down every executor, so
// none outlives the application.
func (b *mesosBackend) stop() {
	b.mu.Lock()
	b.want = 0
	for _, t := range b.tasks {
		t.released = true
	}
	b.mu.Unlock()
	if err := b.client.Teardown(); err != nil {
		b.c.cfg.Logf("TEARDOWN: %v (executors will stop when they lose the driver)", err)
	}
	b.cancel()
	<-b.done
}

func strp(s string) *string { return &s }
