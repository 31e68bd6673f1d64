package framework

import (
	"time"

	"github.com/allot-sched/allot/framework/elastic"
	"github.com/allot-sched/allot/framework/eventlog"
)

// execUtil is an executor's utilisation as iSpark's monitoring sees it.
// Guarded by Context.mu with the rest of the executor's record.
type execUtil struct {
	// cpu and mem are used over reserved in the last complete monitoring
	// epoch: cores busy / cores, RSS / the executor's memory. at is when
	// that epoch ended (zero: no epoch measured yet).
	cpu, mem float64
	at       time.Time
	// umax is the highest utilisation (by the scaling policy's factor) of
	// a completed stage on the executor: the stage's mean over its samples.
	umax float64
	// sizes are the cached blocks' sizes as the last heartbeat reported.
	sizes map[string]int64
}

func (u *execUtil) noteSizes(names []string, sizes []int64) {
	if len(sizes) != len(names) {
		return // an executor that does not report sizes
	}
	u.sizes = make(map[string]int64, len(names))
	for i, n := range names {
		u.sizes[n] = sizes[i]
	}
}

// cpuOnly says whether the scaling policy watches CPU alone (iSpark's CF).
func (c *Context) cpuOnly() bool {
	s, ok := c.scaling.(elastic.ISpark)
	return ok && s.CPUOnly
}

// factor is the utilisation by the policy's factor: the dominant one of CPU
// and memory (DF), or CPU alone (CF).
func (c *Context) factor(cpu, mem float64) float64 {
	if c.cpuOnly() {
		return cpu
	}
	return max(cpu, mem)
}

// monitorLocked closes a monitoring epoch when one has passed: each
// executor's utilisation over it, from the samples its heartbeats carried,
// is kept for the scaling policy and logged. Caller holds c.mu.
func (c *Context) monitorLocked(now time.Time) {
	epoch := c.cfg.MonitorEpoch
	if epoch <= 0 || now.Sub(c.pool.lastEpoch) < epoch {
		return
	}
	first := c.pool.lastEpoch.IsZero()
	c.pool.lastEpoch = now
	if first {
		return // the first epoch starts now
	}
	from, to := unixSeconds(now.Add(-epoch)), unixSeconds(now)
	memBytes := float64(int64(c.cfg.MemMB) << 20)
	for id, e := range c.pool.execs {
		var cpu, mem float64
		n := 0
		for _, s := range e.samples {
			if s.Time > from && s.Time <= to {
				cpu += s.CPU
				mem += float64(s.MemBytes)
				n++
			}
		}
		// An executor younger than the epoch has no full epoch: it keeps
		// counting as busy (see snapshotUtil).
		if n == 0 || e.registered.After(now.Add(-epoch)) {
			continue
		}
		e.util.cpu = cpu / float64(n) / float64(max(e.cores, 1))
		e.util.mem = mem / float64(n) / memBytes
		e.util.at = now
		c.emit(&eventlog.ExecutorUtilisation{Time: to, Executor: id, CPU: e.util.cpu, Mem: e.util.mem, UMax: e.util.umax,
			EpochS: epoch.Seconds(), Samples: n})
	}
}

// noteStageUsageLocked raises the executor's U_max with a completed
// stage's mean utilisation there. Caller holds c.mu.
func (c *Context) noteStageUsageLocked(ev *eventlog.ExecutorStage) {
	e := c.pool.execs[ev.Executor]
	if e == nil || ev.Samples == 0 {
		return
	}
	u := c.factor(ev.CPUMean/float64(max(e.cores, 1)), ev.MemMeanBytes/float64(int64(c.cfg.MemMB)<<20))
	e.util.umax = max(e.util.umax, u)
}

// snapshotUtil is what the scaling policy reads of e's utilisation. An
// executor not yet measured over a whole epoch counts as fully busy, so it
// neither gives nor triggers reprovisioning; ForceUtilisation (a test
// hook) replaces measured values.
func (c *Context) snapshotUtil(e *execState) (cpu, mem float64) {
	if e.util.at.IsZero() {
		return 1, 1
	}
	if f := c.cfg.ForceUtilisation; f > 0 {
		return f, f
	}
	return e.util.cpu, e.util.mem
}
