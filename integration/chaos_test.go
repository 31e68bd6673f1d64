package integration

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/api/operator"
	fsched "github.com/allot-sched/allot/framework/sched"
	"github.com/allot-sched/allot/internal/testcluster"
)

var (
	chaosLong = flag.Bool("chaos.long", false, "TestChaos: the long run (300 tasks, faults until they are done, at most 60 faults) instead of the short one CI runs")
	chaosSeed = flag.Int64("chaos.seed", 0, "TestChaos: the nemesis's random seed (0: from the clock; the seed is logged, to replay a run's choices)")
)

// chaosPingTimeout is the masters' --agent-ping-timeout in the chaos test:
// short, so that the nemesis can keep an agent down past it in seconds.
const chaosPingTimeout = 4 * time.Second

// chaos is one chaos run: the cluster, the framework, the nemesis's tally.
type chaos struct {
	t      *testing.T
	c      *mcluster
	p      *chaosPlanner
	cl     *fsched.Client
	rnd    *rand.Rand
	ledger string
	// the nemesis's tally
	leaderKills, agentKills, agentRemovals, stops int
	log                                           []string
}

// TestChaos runs three masters and three agents on loopback and a
// framework (framework/sched) with a workload of short tasks, while a
// nemesis kills -9 leaders and agents, keeps one agent down past the ping
// timeout and pauses a master with SIGSTOP. Each task appends its launch
// id to a ledger file when it starts. A checker then holds the
// framework's record against the ledger: every launch reaches exactly one
// terminal state and never goes back from it, none ran twice, nothing
// FINISHED that never ran, every work item finished; and the three
// masters' registries agree.
//
// The short run (the default, for CI) is 60 tasks and five faults; the
// long one (-chaos.long, with -timeout 20m) 300 tasks and faults until
// they are done. Run with -v for the figures.
func TestChaos(t *testing.T) {
	work, limit, maxFaults := 60, 6, 5
	if *chaosLong {
		work, limit, maxFaults = 300, 6, 60
	}
	seed := *chaosSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("chaos: seed %d (-chaos.seed to replay the nemesis's choices), %d tasks, at most %d faults", seed, work, maxFaults)
	x := &chaos{t: t, rnd: rand.New(rand.NewSource(seed)), ledger: filepath.Join(t.TempDir(), "ledger")}
	x.c = newMCluster(t, 3, 3, "--agent-ping-timeout", chaosPingTimeout.String())
	x.startFramework(work, limit)
	testcluster.WaitFor(t, 60*time.Second, "the first task to start", func() bool { return len(x.p.runningOn()) > 0 })

	faults := []func(){x.killLeader, x.removeAgent, x.killAgent, x.pauseMaster, x.killLeader}
	deadline := time.Now().Add(8 * time.Minute)
	for i := 0; i < maxFaults && time.Now().Before(deadline); i++ {
		if *chaosLong && x.p.done() {
			break
		}
		if i < len(faults) {
			faults[i]()
		} else {
			[]func(){x.killLeader, x.killAgent, x.killAgent, x.pauseMaster, x.removeAgent}[x.rnd.Intn(5)]()
		}
		// The nemesis's pacing: the workload runs on between faults.
		time.Sleep(time.Duration(500+x.rnd.Intn(2500)) * time.Millisecond)
	}
	x.settle(work)
}

// startFramework subscribes the chaos framework: checkpointing, so that
// its executors outlive an agent's kill -9, with a failover timeout well
// past any fault.
func (x *chaos) startFramework(work, limit int) {
	ft := 600.0
	cp := true
	x.p = newChaosPlanner(work, limit, func(id string) string {
		return fmt.Sprintf("echo %s >> %s && sleep 0.%d", id, x.ledger, 3+x.rndIntn(7))
	})
	logs := &testcluster.Buffer{}
	cl, err := fsched.New(fsched.Config{Masters: x.c.seeds(), Framework: mesos.FrameworkInfo{Name: "chaos", User: "root", FailoverTimeout: &ft, Checkpoint: &cp},
		ReconcileBackoffMax: 5 * time.Second, Logf: func(f string, a ...any) { fmt.Fprintf(logs, time.Now().Format("15:04:05.000 ")+f+"\n", a...) }}, x.p)
	if err != nil {
		x.t.Fatal(err)
	}
	x.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- cl.Run(ctx) }()
	x.t.Cleanup(func() {
		cancel()
		<-ended
		if x.t.Failed() {
			x.t.Logf("--- framework log ---\n%s", testcluster.Tail(logs.String(), 8000))
		}
	})
	testcluster.WaitFor(x.t, 30*time.Second, "the chaos framework to subscribe", func() bool { return cl.ID() != "" })
}

// rndIntn is the planner's own source of task lengths: the planner runs
// on the client's goroutine, the nemesis on the test's.
func (x *chaos) rndIntn(n int) int { return int(time.Now().UnixNano() % int64(n)) }

func (x *chaos) note(format string, a ...any) {
	s := fmt.Sprintf(time.Now().Format("15:04:05.000 ")+format, a...)
	x.log = append(x.log, s)
	x.t.Log(s)
}

// killLeader kills the leading master with SIGKILL, waits for another to
// lead, and starts the dead one again on its work dir.
func (x *chaos) killLeader() {
	lead := x.c.leader(60 * time.Second)
	x.note("nemesis: kill -9 leader master %d (%d work items finished)", lead, x.p.finishedCount())
	x.c.kill9(lead)
	x.leaderKills++
	x.c.leader(60 * time.Second)
	x.c.startMaster(lead, x.c.peers())
	x.c.leader(60 * time.Second)
}

// pauseMaster stops the leader (half the time) or a follower with SIGSTOP
// for longer than an election takes, then lets it go on.
func (x *chaos) pauseMaster() {
	lead := x.c.leader(60 * time.Second)
	i := lead
	if x.rnd.Intn(2) == 0 {
		i = (lead + 1 + x.rnd.Intn(2)) % 3
	}
	pid := x.c.masters[i].p.Cmd.Process.Pid
	x.note("nemesis: SIGSTOP master %d (leader: %v)", i, i == lead)
	syscall.Kill(pid, syscall.SIGSTOP)
	x.stops++
	time.Sleep(time.Duration(2000+x.rnd.Intn(2000)) * time.Millisecond) // the pause itself
	syscall.Kill(pid, syscall.SIGCONT)
	x.note("nemesis: SIGCONT master %d", i)
	x.c.leader(60 * time.Second)
}

// busiestAgent is the agent with the most running launches (a random one
// when none has any).
func (x *chaos) busiestAgent() *testcluster.Agent {
	byID := x.p.runningOn()
	st, _ := x.leaderState()
	best, most := x.c.agents[x.rnd.Intn(len(x.c.agents))], 0
	for _, s := range st.Slaves {
		for _, a := range x.c.agents {
			if strings.HasSuffix(s.PID, "@"+a.Addr) && byID[s.ID] > most {
				best, most = a, byID[s.ID]
			}
		}
	}
	return best
}

// leaderState is the leader's /state with the agents' pids; ok is false
// when it could not be read.
func (x *chaos) leaderState() (st operator.State, ok bool) {
	lead := x.c.leader(60 * time.Second)
	resp, err := http.Get("http://" + x.c.masters[lead].http + "/state")
	if err != nil {
		return st, false
	}
	defer resp.Body.Close()
	return st, resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&st) == nil
}

// killAgent kills an agent with SIGKILL and starts it again well within
// the ping timeout: its checkpointed executors carry on.
func (x *chaos) killAgent() {
	a := x.busiestAgent()
	x.note("nemesis: kill -9 agent %s", a.Addr)
	a.Kill(syscall.SIGKILL)
	x.agentKills++
	time.Sleep(time.Duration(200+x.rnd.Intn(800)) * time.Millisecond) // down for a moment
	testcluster.StartAgent(x.t, allotBin, strings.Join(x.c.seeds(), ","), a, agentFlags...)
	x.c.waitAgents(len(x.c.agents))
}

// removeAgent kills an agent with SIGKILL and keeps it down until the
// leader has marked it unreachable (its ping timeout passed: the
// framework, not partition-aware, hears its tasks TASK_LOST), then starts
// it again on the same work dir and id, which the leader takes back,
// killing the tasks whose end the framework heard.
func (x *chaos) removeAgent() {
	// Tasks running on it are what a removal puts to the test: wait a
	// little for some, unless the workload is at its end.
	for deadline := time.Now().Add(10 * time.Second); len(x.p.runningOn()) == 0 && !x.p.done() && time.Now().Before(deadline); {
		time.Sleep(testcluster.PollInterval)
	}
	a := x.busiestAgent()
	x.note("nemesis: kill -9 agent %s and keep it down past the ping timeout", a.Addr)
	a.Kill(syscall.SIGKILL)
	x.agentKills++
	x.agentRemovals++
	testcluster.WaitFor(x.t, chaosPingTimeout+60*time.Second, "the leader to remove agent "+a.Addr, func() bool {
		st, ok := x.leaderState()
		if !ok {
			return false
		}
		for _, s := range st.Slaves {
			if strings.HasSuffix(s.PID, "@"+a.Addr) {
				return false
			}
		}
		return true
	})
	x.note("nemesis: agent %s removed; starting it again", a.Addr)
	testcluster.StartAgent(x.t, allotBin, strings.Join(x.c.seeds(), ","), a, agentFlags...)
	x.c.waitAgents(len(x.c.agents))
}

// settle lets the workload finish with every process up, waits for the
// framework's record to settle, then checks it against the ledger and the
// masters' registries against each other, and logs the figures.
func (x *chaos) settle(work int) {
	t := x.t
	for i := range x.c.masters {
		if !x.c.alive(i) {
			x.c.startMaster(i, x.c.peers())
		}
	}
	x.c.leader(60 * time.Second)
	x.c.waitAgents(len(x.c.agents))
	// Explicit reconciliation of whatever is still open, repeated while
	// waiting, as a framework does when it hears nothing.
	settled := func() bool {
		if open := x.p.Tasks(); len(open) > 0 {
			x.cl.Call(context.Background(), calls.Reconcile(calls.ReconcileTasks(open)))
			return false
		}
		return x.p.done()
	}
	deadline := time.Now().Add(3 * time.Minute)
	for !settled() && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
	}
	end := time.Now()
	ledger, err := readLedger(x.ledger)
	if err != nil {
		t.Fatal(err)
	}
	rec := x.p.snapshot()
	f := checkChaos(rec, ledger, end)
	t.Logf("chaos figures: %s; nemesis: %d leader kills, %d agent kills (%d kept down past the %v ping timeout), %d SIGSTOPs; %d ACCEPTs failed, %d stray updates",
		f, x.leaderKills, x.agentKills, x.agentRemovals, chaosPingTimeout, x.stops, rec.AcceptFailed, rec.Strays)
	if f.StallEnd != "" {
		t.Logf("chaos: the longest time without progress ended with %s", f.StallEnd)
	}
	for _, v := range f.violations() {
		t.Errorf("chaos: %s", v)
	}
	if len(f.LostButRan) > 0 {
		t.Logf("chaos: launches reported failed that ran (relaunched; the work ran twice): %s", strings.Join(firstN(f.LostButRan, 10), "; "))
	}
	x.c.sameHistory()
	t.Logf("chaos: the three masters' registries are byte-identical")
}
