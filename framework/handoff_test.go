package framework

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/allot-sched/allot/framework/elastic"
	"github.com/allot-sched/allot/framework/eventlog"
)

// newISparkContext starts a local driver of two one-core executors under
// iSpark, with others waiting as *waiting says and every measured
// utilisation forced to 0.1, and caches 8 partitions of a range on them.
func newISparkContext(t *testing.T, mc *manualClock, waiting *atomic.Bool) (*Context, *Dataset) {
	t.Helper()
	ctx, err := NewContext(Config{App: "ispark", Local: true, Executors: 2, Cores: 1, Dynamic: true, MinExecutors: 1, MaxExecutors: 2,
		BacklogTimeout: time.Second, EventLogDir: t.TempDir(), Logf: t.Logf, Clock: mc, MonitorEpoch: time.Second,
		OthersWaiting: waiting.Load, ForceUtilisation: 0.1, DemandFollowsTarget: true,
		Scaling: elastic.ISpark{Scale: elastic.IdleBacklog{Min: 1, Max: 2, IdleTimeout: time.Hour, BacklogTimeout: time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "2 executors", func() bool { n, _, _, _ := ctx.poolState(); return n == 2 })
	ds := ctx.Range(8000, 8).Cache()
	if n, err := ds.Count(); err != nil || n != 8000 {
		t.Fatalf("count %d, %v", n, err)
	}
	return ctx, ds
}

// measured marks every executor as measured over an epoch (the forced
// utilisation then applies) and returns who holds how many partitions.
func (c *Context) measured() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.pool.execs {
		e.util.at = c.clock.Now()
	}
	c.pool.lastEpoch, c.pool.lastISpark = c.clock.Now(), time.Time{} // an epoch just closed
	return c.dag.cachedBy()
}

func (c *Context) handoffBusy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pool.handoff
}

// TestISparkHandoff: with others waiting and both executors at 0.1, iSpark
// gives local-2 back; its cached partitions move to local-1 first, the
// driver reads them there (the next count hits the cache everywhere, no
// recomputation), the executor is released with nothing lost, and while
// others still wait the backlog rule does not grow the pool back.
func TestISparkHandoff(t *testing.T) {
	mc := newManualClock()
	var waiting atomic.Bool
	ctx, ds := newISparkContext(t, mc, &waiting)
	defer ctx.Close(nil)
	holders := ctx.measured()
	if holders["local-1"] == 0 || holders["local-2"] == 0 {
		t.Fatalf("partitions cached on %v: the test needs both executors holding some", holders)
	}
	ctx.scaleOnce()
	if n, _, _, _ := ctx.poolState(); n != 2 {
		t.Fatal("an executor was released while nobody waits")
	}
	waiting.Store(true)
	ctx.scaleOnce()
	if n, _, _, _ := ctx.poolState(); n != 2 || ctx.handoffBusy() {
		t.Fatal("iSpark's utilisation rules ran twice in one monitoring epoch")
	}
	ctx.measured()
	ctx.scaleOnce()
	eventually(t, "the handoff to finish", func() bool { return !ctx.handoffBusy() })
	if got := ctx.Executors(); len(got) != 1 || got["local-1"] == 0 {
		t.Fatalf("executors after the scale-down: %v, want local-1 alone", got)
	}
	if after := ctx.measured(); after["local-1"] != 8 {
		t.Fatalf("cache locations after the handoff: %v, want all 8 partitions on local-1", after)
	}
	g := newGate()
	done := make(chan error, 1)
	go func() { _, err := ds.Map("test.block").Count(); done <- err }()
	eventually(t, "a backlog on one executor", func() bool { _, _, pending, busy := ctx.poolState(); return pending > 0 && busy == 1 })
	ctx.scaleOnce()
	mc.Advance(2 * time.Second)
	ctx.scaleOnce()
	if _, target, _, _ := ctx.poolState(); target != 1 {
		t.Fatalf("target %d after a backlog while others wait, want 1 (the shrink's ceiling)", target)
	}
	close(g)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r := ctx.Recomputations(); r != 0 {
		t.Fatalf("%d recomputations after a complete handoff, want 0", r)
	}
	path := ctx.EventLog()
	ctx.Close(nil)
	moved, lost, misses := 0, -1, 0
	for _, ev := range readLog(t, path) {
		switch e := ev.(type) {
		case *eventlog.PartitionsMoved:
			if e.From != "local-2" || e.To != "local-1" || e.Count != e.Requested || e.Bytes == 0 {
				t.Errorf("partitions_moved %+v", e)
			}
			moved += e.Count
		case *eventlog.ExecutorRemoved:
			lost = e.LostCachedPartitions
		case *eventlog.TaskEnd:
			if e.Success && e.CacheHit != nil && !*e.CacheHit && e.Stage > 1 {
				misses++
			}
		}
	}
	if moved != holders["local-2"] || lost != 0 || misses != 0 {
		t.Fatalf("moved %d of local-2's %d partitions, %d lost with it, %d later tasks missed the cache", moved, holders["local-2"], lost, misses)
	}
}

// TestISparkGiverDiesBeforeHandoff: the giver stops while the scale-down
// waits for the job boundary; its partitions cannot move, so the driver
// forgets them with it and the next job recomputes them from lineage,
// with the right answer, and counts the recomputations.
func TestISparkGiverDiesBeforeHandoff(t *testing.T) {
	mc := newManualClock()
	var waiting atomic.Bool
	ctx, ds := newISparkContext(t, mc, &waiting)
	defer ctx.Close(nil)
	holders := ctx.measured()
	waiting.Store(true)
	ctx.jobMu.Lock() // a job is running: the handoff waits for its end
	ctx.scaleOnce()
	if !ctx.handoffBusy() {
		ctx.jobMu.Unlock()
		t.Fatal("no handoff started")
	}
	lb := ctx.backend.(*localBackend)
	lb.mu.Lock()
	giver := lb.execs["local-2"]
	lb.mu.Unlock()
	giver.Stop()
	ctx.jobMu.Unlock()
	eventually(t, "the handoff to finish", func() bool { return !ctx.handoffBusy() })
	if n, err := ds.Count(); err != nil || n != 8000 {
		t.Fatalf("count after the giver died: %d, %v", n, err)
	}
	if r := ctx.Recomputations(); r != holders["local-2"] {
		t.Fatalf("%d recomputations, want the %d partitions local-2 held", r, holders["local-2"])
	}
}

// TestISparkReprovisionsOncePerEpoch: an executor above h x U_max asks for
// one more executor once per monitoring epoch, not at every scaling tick.
func TestISparkReprovisionsOncePerEpoch(t *testing.T) {
	mc := newManualClock()
	var waiting atomic.Bool
	ctx, err := NewContext(Config{App: "ispark-hot", Local: true, Executors: 1, Cores: 1, Dynamic: true, MaxExecutors: 3,
		EventLogDir: t.TempDir(), Logf: t.Logf, Clock: mc, MonitorEpoch: time.Second, OthersWaiting: waiting.Load, ForceUtilisation: 0.1,
		Scaling: elastic.ISpark{}})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close(nil)
	eventually(t, "1 executor", func() bool { n, _, _, _ := ctx.poolState(); return n == 1 })
	hot := func() {
		ctx.measured()
		ctx.mu.Lock()
		for _, e := range ctx.pool.execs {
			e.util.umax = 0.05 // 0.1 > 1.1 x 0.05: hot
		}
		ctx.mu.Unlock()
	}
	want := []int{2, 2, 2, 3}
	for i, w := range want {
		if i == 0 || i == 3 {
			hot()
		}
		ctx.scaleOnce()
		if _, target, _, _ := ctx.poolState(); target != w {
			t.Fatalf("tick %d: target %d, want %v over the ticks", i, target, want)
		}
	}
}
