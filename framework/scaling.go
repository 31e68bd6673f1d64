package framework

import (
	"time"

	"github.com/allot-sched/allot/framework/elastic"
	"github.com/allot-sched/allot/framework/eventlog"
)

// scaleEvery is how often dynamic allocation looks at the pool.
const scaleEvery = 250 * time.Millisecond

// scaleLoop runs dynamic allocation until Close.
func (c *Context) scaleLoop() {
	t := c.clock.NewTicker(scaleEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stopBg:
			return
		case <-t.C():
		}
		if c.cfg.MonitorEpoch > 0 {
			c.mu.Lock()
			c.monitorLocked(c.clock.Now())
			c.mu.Unlock()
		}
		if c.cfg.Dynamic {
			c.scaleOnce()
		}
	}
}

// scaleOnce asks the scaling policy about the pool as it is now and acts on
// the decision.
func (c *Context) scaleOnce() {
	waiting := c.othersWaiting()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool.handoff {
		return // a scale-down is under way: decide again once it is done
	}
	now := c.clock.Now()
	snap := c.poolSnapshotLocked()
	snap.OthersWaiting = waiting
	d := c.decideLocked(now, snap)
	c.applyLocked(now, snap, d)
	c.answerInverseLocked(d)
}

// poolSnapshotLocked is the pool as a scaling policy sees it. Caller holds
// c.mu.
func (c *Context) poolSnapshotLocked() elastic.Pool {
	cached := c.dag.cachedBy()
	p := elastic.Pool{Pending: c.pool.pending, Target: c.pool.target, Backlog: c.pool.backlog,
		Executors: make([]elastic.Executor, 0, len(c.pool.execs))}
	for id, e := range c.pool.execs {
		x := elastic.Executor{ID: id, Cores: e.cores, Running: e.running, IdleSince: e.idleSince,
			CachedBlocks: e.cached, CachedPartitions: cached[id]}
		c.iSparkInputsLocked(e, &x)
		p.Executors = append(p.Executors, x)
	}
	return p
}

// applyLocked carries out a scaling decision: a new target for the
// backend, and releases. A decision with moves or releases that hand load
// to a receiver (iSpark's) is carried out by a handoff at the next job
// boundary (handoff.go); plain releases (idle, no cache) happen now.
// Caller holds c.mu.
func (c *Context) applyLocked(now time.Time, before elastic.Pool, d elastic.Decision) {
	c.pool.backlog = d.Backlog
	c.pool.target = d.Target
	if d.Additions > 0 {
		if d.Why == "backlog" {
			c.cfg.Logf("backlog of %d tasks for %v: asking for %d executors", before.Pending, now.Sub(before.Backlog.Since).Round(time.Millisecond), d.Target)
		} else {
			c.cfg.Logf("%s: asking for %d executors (%d tasks pending)", d.Why, d.Target, before.Pending)
		}
		c.emit(&eventlog.ExecutorsRequested{Time: unixSeconds(now), Target: d.Target, Backlog: before.Pending, Reason: d.Why})
		go c.pushTarget()
	}
	if handoff := c.startHandoffLocked(d); handoff {
		return
	}
	for _, r := range d.Releases {
		c.executorLostLocked(r.Executor, r.Reason)
		// The lowered target reaches the backend before the release: the
		// other way round, a backend woken by the release could still see
		// the old target, count one executor short, and launch a
		// replacement for the one it was releasing.
		go func(id string) { c.pushTarget(); c.backend.release(id) }(r.Executor)
	}
}

// pushTarget tells the backend the current target. Pushes are serialized
// and each reads the target when it runs, so the last one carries the
// latest value: passing the value captured when the goroutine started let
// an older, larger target (releasing two idle executors one after the
// other) overwrite a newer one, and the backend launched a replacement for
// an executor it had just released.
func (c *Context) pushTarget() {
	c.targetMu.Lock()
	defer c.targetMu.Unlock()
	c.mu.Lock()
	n := c.pool.target
	c.mu.Unlock()
	c.backend.setTarget(n)
}
