package framework

import (
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
	mc := newManualClock()
	ctx, err := NewContext(Config{App: "monitor", Local: true, Executors: 1, Cores: 2, MemMB: 512, EventLogDir: t.TempDir(), Logf: t.Logf,
		Clock: mc, MonitorEpoch: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close(nil)
	eventually(t, "1 executor", func() bool { n, _, _, _ := ctx.poolState(); return n == 1 })
	t0 := mc.Now()
	at := func(d time.Duration) float64 { return unixSeconds(t0.Add(d)) }
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
