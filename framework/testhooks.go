package framework

import "time"

// Test hooks that make an iSpark scale-down observable on any host. A
// scale-down is decided once per monitoring epoch from utilisation measured
// over a whole epoch, and carried out at a job boundary; an application
// whose jobs are shorter than an epoch can otherwise finish before the
// decision a test is waiting for, and a test that kills a giver mid-handoff
// needs the handoff to stay open until the kill has been seen.

// awaitScaleDown holds a job at its start while AwaitScaleDown asks for it:
// once some partition is cached and no scale-down has been carried out yet,
// the job waits, up to AwaitScaleDown, for a handoff to finish. It holds no
// lock while it waits, so the handoff can take jobMu at this boundary.
func (c *Context) awaitScaleDown() {
	bound := c.cfg.AwaitScaleDown
	if bound <= 0 {
		return
	}
	c.mu.Lock()
	cached := len(c.dag.cachedBy()) > 0
	c.mu.Unlock()
	if !cached {
		return
	}
	select {
	case <-c.scaledDown:
		return
	default:
	}
	c.cfg.Logf("waiting up to %v for an iSpark scale-down before the next job (test hook)", bound)
	t := c.clock.NewTicker(bound)
	defer t.Stop()
	select {
	case <-c.scaledDown:
	case <-t.C():
		c.cfg.Logf("no iSpark scale-down within %v; the job goes on", bound)
	case <-c.stopBg:
	}
}

// noteScaledDown records that a handoff has been carried out, releasing
// every job held by awaitScaleDown.
func (c *Context) noteScaledDown() {
	c.scaledDownOnce.Do(func() { close(c.scaledDown) })
}

// pauseHandoff waits HandoffPause between two partitions of a move, or
// until the giver is lost, whichever comes first: a test that kills the
// giver in the pause then sees the rest of the move fail at once.
func (c *Context) pauseHandoff(giver string) {
	deadline := c.clock.Now().Add(c.cfg.HandoffPause)
	t := c.clock.NewTicker(min(c.cfg.HandoffPause, 20*time.Millisecond))
	defer t.Stop()
	for c.clock.Now().Before(deadline) {
		c.mu.Lock()
		_, alive := c.pool.execs[giver]
		c.mu.Unlock()
		if !alive {
			c.cfg.Logf("iSpark handoff: giver %s is gone; the pause ends (test hook)", giver)
			return
		}
		<-t.C()
	}
}

// awaitJobGate holds a job at its start until JobGate lets it through,
// polling at the job loop's tick.
func (c *Context) awaitJobGate() {
	if c.cfg.JobGate == nil || c.cfg.JobGate(int(c.jobsDone.Load())) {
		return
	}
	c.cfg.Logf("job %d held by the job gate (test hook)", c.jobsDone.Load()+1)
	t := c.clock.NewTicker(jobTick)
	defer t.Stop()
	for !c.cfg.JobGate(int(c.jobsDone.Load())) {
		select {
		case <-t.C():
		case <-c.stopBg:
			return
		}
	}
}
