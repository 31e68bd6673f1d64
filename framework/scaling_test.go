package framework

import (
	"sync"
	"testing"
	"time"

	"github.com/allot-sched/allot/framework/eventlog"
)

// manualClock only moves when told. Its tickers never fire: the tests call
// the scaling shell themselves, and the job loop wakes on completions.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newManualClock() *manualClock { return &manualClock{now: time.Unix(1_800_000_000, 0)} }

func (m *manualClock) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

func (m *manualClock) Advance(d time.Duration) {
	m.mu.Lock()
	m.now = m.now.Add(d)
	m.mu.Unlock()
}

func (m *manualClock) NewTicker(time.Duration) Ticker { return inertTicker{} }

type inertTicker struct{}

func (inertTicker) C() <-chan time.Time { return nil }
func (inertTicker) Stop()               {}

var _ Clock = (*manualClock)(nil)

// gate holds test.block tasks until the test closes it.
var (
	gateMu sync.Mutex
	gate   chan struct{}
)

func newGate() chan struct{} {
	gateMu.Lock()
	defer gateMu.Unlock()
	gate = make(chan struct{})
	return gate
}

func init() {
	Register("test.block", func(x any) any {
		gateMu.Lock()
		g := gate
		gateMu.Unlock()
		<-g
		return x
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func (c *Context) poolState() (execs, target, pending, busy int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.pool.execs {
		if e.running >= e.cores {
			busy++
		}
	}
	return len(c.pool.execs), c.pool.target, c.pool.pending, busy
}

func readLog(t *testing.T, path string) []eventlog.Event {
	t.Helper()
	evs, err := eventlog.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestScalingReleasesIdle drives dynamic allocation with a manual clock:
// idle executors go once IdleTimeout has passed on the driver's clock, in
// id order, never below MinExecutors.
func TestScalingReleasesIdle(t *testing.T) {
	mc := newManualClock()
	ctx, err := NewContext(Config{App: "scale-down", Local: true, Executors: 3, Cores: 1, Dynamic: true, MinExecutors: 1,
		IdleTimeout: 10 * time.Second, EventLogDir: t.TempDir(), Logf: t.Logf, Clock: mc})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close(nil)
	eventually(t, "3 executors", func() bool { n, _, _, _ := ctx.poolState(); return n == 3 })
	if n, err := ctx.Range(6, 6).Count(); err != nil || n != 6 {
		t.Fatalf("count %d, %v", n, err)
	}
	mc.Advance(9 * time.Second)
	ctx.scaleOnce()
	if n, target, _, _ := ctx.poolState(); n != 3 || target != 3 {
		t.Fatalf("after 9s idle: %d executors, target %d; want 3 and 3", n, target)
	}
	mc.Advance(time.Second)
	ctx.scaleOnce()
	execs := ctx.Executors()
	if _, ok := execs["local-3"]; len(execs) != 1 || !ok {
		t.Fatalf("after 10s idle: executors %v, want only local-3 (released in id order down to the minimum)", execs)
	}
	if _, target, _, _ := ctx.poolState(); target != 1 {
		t.Fatalf("target %d after releases, want 1", target)
	}
	eventually(t, "the backend to stop released executors", func() bool {
		return !ctx.backend.known("local-1") && !ctx.backend.known("local-2")
	})
	path := ctx.EventLog()
	ctx.Close(nil)
	var removed []string
	for _, ev := range readLog(t, path) {
		if r, ok := ev.(*eventlog.ExecutorRemoved); ok {
			removed = append(removed, r.Executor)
			if want := unixSeconds(mc.Now()); r.Time != want {
				t.Errorf("executor_removed at %v, want the driver clock's %v", r.Time, want)
			}
		}
	}
	if len(removed) != 2 || removed[0] != "local-1" || removed[1] != "local-2" {
		t.Fatalf("executor_removed for %v, want local-1 and local-2", removed)
	}
}

// TestScalingBacklog: a backlog lasting BacklogTimeout on the driver's clock
// raises the target by 1, then by 2 (capped at MaxExecutors).
func TestScalingBacklog(t *testing.T) {
	mc := newManualClock()
	ctx, err := NewContext(Config{App: "scale-up", Local: true, Executors: 1, Cores: 1, Dynamic: true, MaxExecutors: 3,
		BacklogTimeout: time.Second, EventLogDir: t.TempDir(), Logf: t.Logf, Clock: mc})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close(nil)
	eventually(t, "1 executor", func() bool { n, _, _, _ := ctx.poolState(); return n == 1 })
	g := newGate()
	done := make(chan error, 1)
	go func() { _, err := ctx.Range(6, 6).Map("test.block").Count(); done <- err }()
	eventually(t, "a backlog of 5", func() bool { _, _, pending, busy := ctx.poolState(); return pending == 5 && busy == 1 })
	ctx.scaleOnce() // the backlog starts now
	mc.Advance(999 * time.Millisecond)
	ctx.scaleOnce()
	if _, target, _, _ := ctx.poolState(); target != 1 {
		t.Fatalf("target %d before BacklogTimeout, want 1", target)
	}
	mc.Advance(time.Millisecond)
	ctx.scaleOnce()
	if _, target, _, _ := ctx.poolState(); target != 2 {
		t.Fatalf("target %d after BacklogTimeout, want 2", target)
	}
	eventually(t, "the second executor busy", func() bool { n, _, pending, busy := ctx.poolState(); return n == 2 && busy == 2 && pending == 4 })
	mc.Advance(time.Second)
	ctx.scaleOnce()
	if _, target, _, _ := ctx.poolState(); target != 3 {
		t.Fatalf("target %d after a second BacklogTimeout, want 3 (1+2, capped at MaxExecutors)", target)
	}
	close(g)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	path := ctx.EventLog()
	ctx.Close(nil)
	var targets []int
	for _, ev := range readLog(t, path) {
		if r, ok := ev.(*eventlog.ExecutorsRequested); ok {
			targets = append(targets, r.Target)
		}
	}
	if len(targets) != 2 || targets[0] != 2 || targets[1] != 3 {
		t.Fatalf("executors_requested targets %v, want [2 3]", targets)
	}
}

// TestEventLogReadsBack: a run's log decodes into known, typed events.
func TestEventLogReadsBack(t *testing.T) {
	ctx, err := NewContext(Config{App: "log", Local: true, Executors: 2, Cores: 1, EventLogDir: t.TempDir(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	// The job may finish on the first executor alone: wait for both, so the
	// log's count of executor_added is known.
	eventually(t, "2 executors", func() bool { n, _, _, _ := ctx.poolState(); return n == 2 })
	if _, err := ctx.Range(20, 4).Map("test.mod", int64(3)).ReduceByKey("test.sum", 2).Collect(); err != nil {
		t.Fatal(err)
	}
	path := ctx.EventLog()
	ctx.Close(nil)
	kinds := map[string]int{}
	for _, ev := range readLog(t, path) {
		if _, ok := ev.(*eventlog.Unknown); ok {
			t.Errorf("unknown event kind %q", ev.Kind())
		}
		kinds[ev.Kind()]++
	}
	want := map[string]int{eventlog.KindApplicationStart: 1, eventlog.KindApplicationEnd: 1, eventlog.KindJobStart: 1, eventlog.KindJobEnd: 1,
		eventlog.KindStageSubmitted: 2, eventlog.KindStageCompleted: 2, eventlog.KindTaskEnd: 6, eventlog.KindExecutorAdded: 2}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s events, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
}
