package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/allot-sched/allot/framework"
	"github.com/allot-sched/allot/framework/eventlog"
	"github.com/allot-sched/allot/internal/testcluster"
	"github.com/allot-sched/allot/profile"
)

// This test binary doubles as the framework library's executor: the agent
// starts it with the executor environment, and framework.Main runs the
// executor and exits before any test does.
func init() { framework.Main() }

// prophetAgent advertises a 100 MB/s disk and NIC.
const prophetAgent = "cpus:4;mem:2048;disk:10000;ports:[31000-32000];disk_bw:100;net_bw:100"

// diskHeavy reads 60 MB/s for an hour: two on one agent ask 120 of its 100.
var diskHeavy = &profile.Profile{Stages: []profile.Stage{{Start: 0, End: time.Hour, DiskBW: 60, NetBW: 1}}}

// prophetApp starts an in-process driver of e executors declaring
// diskHeavy, with Prophet's placement and task backoff; its log lines go to
// lines.
func prophetApp(t *testing.T, master, name string, e int, lines *logLines) *framework.Context {
	t.Helper()
	ctx, err := framework.NewContext(framework.Config{App: name, Master: master, Executors: e, Cores: 1, MemMB: 256,
		Profile: diskHeavy, Placement: "prophet", Backoff: true, BackoffInterval: 300 * time.Millisecond,
		EventLogDir: t.TempDir(), Logf: lines.logf(name)})
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(app string) func(string, ...any) {
	return func(f string, a ...any) {
		l.mu.Lock()
		l.lines = append(l.lines, app+": "+fmt.Sprintf(f, a...))
		l.mu.Unlock()
	}
}

func (l *logLines) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// masterOffers reads the master's debug log: the offers it made to
// framework fw, as (agent, reason).
func masterOffers(out, fw string) (agents, reasons []string) {
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Message, Framework, Agent, Reason string
		}
		if json.Unmarshal(sc.Bytes(), &struct {
			Message   *string `json:"message"`
			Framework *string `json:"framework_id"`
			Agent     *string `json:"agent_id"`
			Reason    *string `json:"reason"`
		}{&l.Message, &l.Framework, &l.Agent, &l.Reason}) != nil || l.Message != "offer" || l.Framework != fw {
			continue
		}
		agents, reasons = append(agents, l.Agent), append(reasons, l.Reason)
	}
	return agents, reasons
}

// backoffEvents lists an event log's task_backoff events as "exec on|off".
func backoffEvents(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := eventlog.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if b, ok := ev.(*eventlog.TaskBackoff); ok {
			s := b.Executor + " off"
			if b.On {
				s = b.Executor + " on " + b.Device
			}
			out = append(out, s)
		}
	}
	return out
}

// TestProphetGangAndBackoff checks Prophet's live behaviour, not its
// timing. Under --sorter prophet an application of E = 3 executors gets
// nothing while only 2 agents fit one each (all or none), then all 3 on 3
// distinct agents once a third agent comes, and the master's reason names
// the candidate half (or the deadline). A second application of one
// executor must then share an agent with one of the first's: both
// profiles together ask 120 of that disk's 100 MB/s. The disk-busy signal
// is driven (agent --fault-disk-busy-file), not produced by real I/O, which
// a shared test machine cannot produce reliably: while the file exists
// both drivers back off their executor on that agent, and only there, and
// after it goes the backoff lifts, each logged in the event log and the
// runtime log.
func TestProphetGangAndBackoff(t *testing.T) {
	busy := filepath.Join(t.TempDir(), "disk-busy")
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin,
		MasterFlags: []string{"--log-level", "debug", "--sorter", "prophet", "--mode", "characterized", "--allocation-interval", "200ms"},
		AgentFlags:  append(append([]string(nil), agentFlags...), "--fault-disk-busy-file", busy)})}
	c.AddAgent(prophetAgent)
	c.AddAgent(prophetAgent)
	c.WaitAgents(2)

	var lines logLines
	t.Cleanup(func() {
		if t.Failed() {
			lines.mu.Lock()
			t.Logf("drivers' log:\n%s", strings.Join(lines.lines, "\n"))
			lines.mu.Unlock()
		}
	})
	a := prophetApp(t, c.MasterAddr, "wide", 3, &lines)
	defer a.Close(nil)
	cycles := func() float64 { return c.Metric("allot_master_allocation_cycle_seconds_count") }
	from := cycles()
	testcluster.WaitFor(t, 20*time.Second, "10 allocation cycles", func() bool { return cycles() >= from+10 })
	if n := c.Metric("allot_master_offers_total"); n != 0 || len(a.Executors()) != 0 {
		t.Fatalf("with 2 agents for 3 executors the master made %v offers and %d executors run; want none (all or none)", n, len(a.Executors()))
	}

	c.AddAgent(prophetAgent)
	testcluster.WaitFor(t, 30*time.Second, "3 executors of wide", func() bool { return len(a.Executors()) == 3 })
	fw := ""
	for _, f := range c.state().Frameworks {
		if f.Name == "wide" {
			fw = f.ID
		}
	}
	agents, reasons := masterOffers(c.Master.Out.String(), fw)
	distinct := map[string]bool{}
	for _, ag := range agents {
		distinct[ag] = true
	}
	if len(agents) != 3 || len(distinct) != 3 {
		t.Fatalf("wide was offered %v; want its 3 executors on 3 distinct agents", agents)
	}
	for _, r := range reasons {
		if !strings.Contains(r, "candidate half") && !strings.Contains(r, "deadline") {
			t.Errorf("offer reason %q names neither the candidate half nor the deadline", r)
		}
	}

	b := prophetApp(t, c.MasterAddr, "narrow", 1, &lines)
	defer b.Close(nil)
	testcluster.WaitFor(t, 30*time.Second, "narrow's executor", func() bool { return len(b.Executors()) == 1 })
	if err := os.WriteFile(busy, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, 30*time.Second, "both drivers to back off", func() bool {
		return lines.count("wide: task backoff on") == 1 && lines.count("narrow: task backoff on") == 1
	})
	// tasks still run on a backed-off executor: fewer, never none
	if n, err := b.Range(100, 4).Count(); err != nil || n != 100 {
		t.Errorf("narrow's job under backoff: %d, %v", n, err)
	}
	os.Remove(busy)
	testcluster.WaitFor(t, 30*time.Second, "the backoffs to lift", func() bool {
		return lines.count("wide: task backoff lifted") == 1 && lines.count("narrow: task backoff lifted") == 1
	})
	if n := lines.count("task backoff on"); n != 2 {
		t.Errorf("%d backoffs started; want only the two executors on the shared agent", n)
	}
	for _, ctx := range []*framework.Context{a, b} {
		ctx.Close(nil)
		evs := backoffEvents(t, ctx.EventLog())
		if len(evs) != 2 || !strings.HasSuffix(evs[0], " on disk_bw") || !strings.HasSuffix(evs[1], " off") {
			t.Errorf("%s: task_backoff events %q; want one executor on disk_bw, then off", ctx.EventLog(), evs)
		}
	}
}
