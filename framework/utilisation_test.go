package framework

import (
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/allot-sched/allot/framework/elastic"
	"github.com/allot-sched/allot/framework/eventlog"
)

// TestMonitorEpoch: each epoch's utilisation is the mean of the samples in
// it over the executor's reservation (cores busy / cores, RSS / memory);
// an executor younger than the epoch counts as busy; U_max rises with a
// completed stage's mean; executor_utilisation events record each epoch.
func TestMonitorEpoch(t *testing.T) {
	ctx, t0, at := newMonitorContext(t, "monitor", 2)
	defer ctx.Close(nil)
	ctx.mu.Lock()
	e := ctx.pool.execs["local-1"]
	e.registered = t0.Add(time.Second)                                         // younger than the first epoch
	e.samples = []Sample{{Time: at(time.Second), CPU: 2, MemBytes: 512 << 20}, // the first epoch, before the executor's is full
		{Time: at(3 * time.Second), CPU: 0.5, MemBytes: 128 << 20}, {Time: at(4 * time.Second), CPU: 1.5, MemBytes: 256 << 20}}
	ctx.monitorLocked(t0) // starts the first epoch
	ctx.monitorLocked(t0.Add(2 * time.Second))
	if cpu, mem := ctx.snapshotUtil(e); cpu != 1 || mem != 1 {
		ctx.mu.Unlock()
		t.Fatalf("an executor without a whole epoch: %v %v, want counted busy (1, 1)", cpu, mem)
	}
	ctx.monitorLocked(t0.Add(4 * time.Second))
	cpu, mem := ctx.snapshotUtil(e)
	ctx.noteStageUsageLocked(&eventlog.ExecutorStage{Executor: "local-1", Samples: 2, CPUMean: 1.6, MemMeanBytes: 100 << 20})
	ctx.noteStageUsageLocked(&eventlog.ExecutorStage{Executor: "local-1", Samples: 2, CPUMean: 0.4, MemMeanBytes: 300 << 20})
	umax := e.util.umax
	ctx.mu.Unlock()
	if cpu != 0.5 || mem != 0.375 {
		t.Fatalf("epoch utilisation cpu %v mem %v, want 0.5 (1 core of 2) and 0.375 (192 of 512 MB)", cpu, mem)
	}
	if umax != 0.8 {
		t.Fatalf("U_max %v, want 0.8 (the dominant factor of the busier stage)", umax)
	}
	path := ctx.EventLog()
	ctx.Close(nil)
	var got []*eventlog.ExecutorUtilisation
	for _, ev := range readLog(t, path) {
		if u, ok := ev.(*eventlog.ExecutorUtilisation); ok {
			got = append(got, u)
		}
	}
	if len(got) != 1 || got[0].CPU != 0.5 || got[0].Mem != 0.375 || got[0].Samples != 2 || got[0].EpochS != 2 {
		t.Fatalf("executor_utilisation events %+v, want one for the second epoch", got)
	}
}

// newMonitorContext is a local driver with one executor of cores cores and
// 512 MB, a manual clock and 2 s monitoring epochs; it returns the clock's
// start and a function placing a sample d after it.
func newMonitorContext(t *testing.T, app string, cores int) (*Context, time.Time, func(time.Duration) float64) {
	t.Helper()
	mc := newManualClock()
	ctx, err := NewContext(Config{App: app, Local: true, Executors: 1, Cores: cores, MemMB: 512, EventLogDir: t.TempDir(), Logf: t.Logf,
		Clock: mc, MonitorEpoch: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close(nil) })
	eventually(t, "1 executor", func() bool { n, _, _, _ := ctx.poolState(); return n == 1 })
	t0 := mc.Now()
	return ctx, t0, func(d time.Duration) float64 { return unixSeconds(t0.Add(d)) }
}

// TestISparkScaleDefaults: iSpark given without its backlog rule gets the
// dynamic-allocation settings' rule; one given with it keeps it.
func TestISparkScaleDefaults(t *testing.T) {
	cfg := Config{Executors: 2, Dynamic: true, Scaling: elastic.ISpark{Gamma: 0.3}}
	cfg.setDefaults()
	want := elastic.ISpark{Gamma: 0.3, Scale: elastic.IdleBacklog{Min: 1, Max: 4, IdleTimeout: 10 * time.Second, BacklogTimeout: time.Second}}
	if cfg.Scaling != want {
		t.Fatalf("scaling %#v, want %#v", cfg.Scaling, want)
	}
	own := elastic.ISpark{Scale: elastic.IdleBacklog{Min: 2, Max: 3}}
	cfg = Config{Scaling: own}
	cfg.setDefaults()
	if cfg.Scaling != own {
		t.Fatalf("scaling %#v, want it kept", cfg.Scaling)
	}
}

// TestCPUDemand: an epoch's CPU utilisation is cores busy plus cores the
// tasks waited for, per core reserved; the wait is bounded by the task
// slots demanded (at least the cores), so an executor asked to run more
// tasks than it has cores reads more than 1, and iSpark's rule (h x 1 =
// 1.1) can fire for it.
func TestCPUDemand(t *testing.T) {
	cases := []struct {
		name                 string
		used, waited, slots  float64
		wantUtil, wantWaited float64
	}{
		{"host with CPU to spare: the paper's figure", 0.3, 0, 0.5, 0.3, 0},
		{"starved: busy slot, a third of a core obtained", 0.3, 0.6, 1, 0.9, 0.6},
		{"idle and unstarved stays idle", 0.05, 0.01, 0.1, 0.06, 0.01},
		{"no slot time recorded: bounded by the rest of the core", 0.4, 0.9, 0, 1, 0.6},
		{"busy beyond the reservation adds no wait", 1.2, 0.3, 1, 1.2, 0},
		{"a negative wait (clock skew) counts as none", 0.5, -0.1, 1, 0.5, 0},
		{"packed receiver: 2 slots demanded on 1 core", 0.9, 0.8, 2, 1.7, 0.8},
		{"packed receiver, wait above the slots demanded", 0.9, 1.5, 1.8, 1.8, 0.9},
		{"packed receiver under h x 1 without the queue wait", 0.95, 0.5, 1.5, 1.45, 0.5},
	}
	for _, tc := range cases {
		u, w := cpuDemand(tc.used, tc.waited, tc.slots)
		if math.Abs(u-tc.wantUtil) > 1e-9 || math.Abs(w-tc.wantWaited) > 1e-9 {
			t.Errorf("%s: cpuDemand(%v, %v, %v) = %v, %v; want %v, %v", tc.name, tc.used, tc.waited, tc.slots, u, w, tc.wantUtil, tc.wantWaited)
		}
	}
}

// TestNoteTask: a task's wait (in the driver's queue, then on the run
// queue) is spread over the time from its queueing to its end, and only
// the share in the epoch under way is counted, with its slot time there.
func TestNoteTask(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	cases := []struct {
		name                    string
		epoch, queued, launched time.Time
		end                     time.Time
		runQueue                int64
		wantWait, wantSlot      time.Duration
	}{
		{"within the epoch: all of it", at(0), at(100), at(400), at(600), int64(100 * time.Millisecond), 400 * time.Millisecond, 500 * time.Millisecond},
		{"across the epoch's start: its share", at(1000), at(0), at(1000), at(2000), int64(200 * time.Millisecond), 600 * time.Millisecond, 1000 * time.Millisecond},
		{"no epoch yet: all of it", time.Time{}, at(0), at(300), at(500), 0, 300 * time.Millisecond, 500 * time.Millisecond},
		{"no queue time: run-queue wait only", at(0), time.Time{}, time.Time{}, at(500), int64(50 * time.Millisecond), 50 * time.Millisecond, 0},
		{"launched before queued (clocks): no queue wait", at(0), at(100), at(50), at(300), 0, 0, 200 * time.Millisecond},
	}
	for _, tc := range cases {
		var u execUtil
		u.noteTask(tc.epoch, tc.queued, tc.launched, tc.end, tc.runQueue)
		if time.Duration(u.taskWait) != tc.wantWait || time.Duration(u.slotTime) != tc.wantSlot {
			t.Errorf("%s: wait %v slot %v, want %v %v", tc.name, time.Duration(u.taskWait), time.Duration(u.slotTime), tc.wantWait, tc.wantSlot)
		}
	}
}

// TestMonitorEpochPackedReceiver: a 1-core executor whose one slot runs
// two partitions' tasks back to back (each waiting in the driver's queue
// for the other) reads more than h x 1 = 1.1, so iSpark's reprovisioning
// rule can fire for it; the old bound (the rest of the core) held it at 1.
func TestMonitorEpochPackedReceiver(t *testing.T) {
	ctx, t0, at := newMonitorContext(t, "monitor-packed", 1)
	defer ctx.Close(nil)
	ctx.mu.Lock()
	defer ctx.mu.Unlock()
	e := ctx.pool.execs["local-1"]
	e.registered = t0.Add(-time.Hour)
	e.samples = []Sample{{Time: at(time.Second), CPU: 0.9}, {Time: at(2 * time.Second), CPU: 0.9}}
	ctx.monitorLocked(t0) // starts the first epoch
	// Iterations of 200 ms: both tasks queued at once, one slot, each
	// task 100 ms; the second waits 100 ms in the driver's queue.
	for i := 0; i < 10; i++ {
		q := t0.Add(time.Duration(i) * 200 * time.Millisecond)
		e.util.noteTask(t0, q, q, q.Add(100*time.Millisecond), 0)
		e.util.noteTask(t0, q, q.Add(100*time.Millisecond), q.Add(200*time.Millisecond), 0)
	}
	ctx.monitorLocked(t0.Add(2 * time.Second))
	if math.Abs(e.util.cpu-1.4) > 1e-9 || math.Abs(e.util.wait-0.5) > 1e-9 {
		t.Fatalf("packed receiver: cpu %v (wait %v), want 1.4 (0.9 busy + 0.5 queued for its slot)", e.util.cpu, e.util.wait)
	}
}

// TestStageCPU: a stage's utilisation is the larger of its samples' mean
// and its tasks' CPU time plus run-queue wait over its time on the
// executor, so a stage shorter than a sample is not averaged with the
// idle second around it.
func TestStageCPU(t *testing.T) {
	cases := []struct {
		name  string
		ev    eventlog.ExecutorStage
		cores float64
		want  float64
	}{
		{"no window known: the samples' mean", eventlog.ExecutorStage{CPUMean: 1.6}, 2, 0.8},
		{"short stage: 50 ms of work in 60 ms, sample says 0.1",
			eventlog.ExecutorStage{CPUMean: 0.1, Start: 10, End: 10.06, TaskCPUTimeS: 0.05}, 1, 0.05 / 0.06},
		{"short stage on a starved host: 20 ms run + 30 ms wait in 60 ms",
			eventlog.ExecutorStage{CPUMean: 0.1, Start: 10, End: 10.06, TaskCPUTimeS: 0.02, TaskRunQueueS: 0.03}, 1, 0.05 / 0.06},
		{"long stage whose other threads work too: the samples' mean",
			eventlog.ExecutorStage{CPUMean: 1.1, Start: 10, End: 20, TaskCPUTimeS: 9}, 1, 1.1},
		{"two cores", eventlog.ExecutorStage{CPUMean: 0.5, Start: 0, End: 2, TaskCPUTimeS: 3, TaskRunQueueS: 0.6}, 2, 0.9},
		{"task time beyond the stage's span (clock resolution): at most the cores",
			eventlog.ExecutorStage{CPUMean: 0.1, Start: 10, End: 10.0003, TaskCPUTimeS: 0.004, TaskRunQueueS: 0.0048}, 1, 1},
		{"samples above the bound are kept", eventlog.ExecutorStage{CPUMean: 1.3, Start: 10, End: 10.0003, TaskCPUTimeS: 0.004}, 1, 1.3},
	}
	for _, tc := range cases {
		if got := stageCPU(&tc.ev, tc.cores); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: stageCPU = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMonitorEpochAddsRunQueueWait: the run-queue wait of the tasks that
// ended on an executor in an epoch is added to its CPU utilisation,
// logged as cpu_wait, and counted in that epoch only.
func TestMonitorEpochAddsRunQueueWait(t *testing.T) {
	ctx, t0, at := newMonitorContext(t, "monitor-wait", 1)
	defer ctx.Close(nil)
	ctx.mu.Lock()
	e := ctx.pool.execs["local-1"]
	e.registered = t0.Add(-time.Hour)
	e.samples = []Sample{{Time: at(time.Second), CPU: 0.3}, {Time: at(2 * time.Second), CPU: 0.3},
		{Time: at(3 * time.Second), CPU: 0.3}, {Time: at(4 * time.Second), CPU: 0.3}}
	ctx.monitorLocked(t0)          // starts the first epoch
	e.util.taskWait = int64(1.2e9) // 1.2 s waited in 2 s: 0.6 of the core
	ctx.monitorLocked(t0.Add(2 * time.Second))
	starved, wait := e.util.cpu, e.util.wait
	ctx.monitorLocked(t0.Add(4 * time.Second)) // no task waited in this one
	after := e.util.cpu
	ctx.mu.Unlock()
	if math.Abs(starved-0.9) > 1e-9 || math.Abs(wait-0.6) > 1e-9 {
		t.Fatalf("starved epoch: cpu %v (wait %v), want 0.9 (0.3 busy + 0.6 waited)", starved, wait)
	}
	if math.Abs(after-0.3) > 1e-9 {
		t.Fatalf("next epoch: cpu %v, want 0.3 (the wait counted once)", after)
	}
	path := ctx.EventLog()
	ctx.Close(nil)
	var got []float64
	for _, ev := range readLog(t, path) {
		if u, ok := ev.(*eventlog.ExecutorUtilisation); ok {
			got = append(got, u.CPUWait)
		}
	}
	if len(got) != 2 || math.Abs(got[0]-0.6) > 1e-9 || got[1] != 0 {
		t.Fatalf("cpu_wait logged %v, want [0.6 0]", got)
	}
}

// TestThreadRunQueue: where the kernel reports per-thread scheduling
// statistics, a thread's run-queue wait is read and never goes back.
func TestThreadRunQueue(t *testing.T) {
	if _, err := os.Stat("/proc/thread-self/schedstat"); err != nil {
		t.Skip("no /proc/thread-self/schedstat on this host: the wait is not measured (counted as none)")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a := threadRunQueue()
	for i := 0; i < 1e6; i++ {
		_ = math.Sqrt(float64(i))
	}
	b := threadRunQueue()
	if a < 0 || b < a {
		t.Fatalf("run-queue wait %d then %d, want a reading that does not go back", a, b)
	}
}
