package framework

import (
	"time"

	"github.com/allot-sched/allot/framework/elastic"
	"github.com/allot-sched/allot/framework/eventlog"
)

// execUtil is an executor's utilisation as iSpark's monitoring sees it.
// Guarded by Context.mu with the rest of the executor's record.
//
// CPU utilisation is demand over reservation: the cores the executor kept
// busy plus the cores its tasks' threads wanted but waited for on a run
// queue, per core reserved (cpuDemand). The paper measures CPU used over
// reserved on hosts where an executor gets the cores it reserved; where
// other work shares the host's cores (an oversubscribed host, or one other
// people load), used over reserved cannot tell an executor with nothing to
// do from one starved while its task slots are full, and iSpark would pack
// a starved executor's load onto another as if it were slack. Run-queue
// wait is the part of a busy executor's time that the host, not the
// application, left unused; with it added back the figure is what the
// executor would show on a host with CPU to spare, and on such a host it
// is the paper's figure unchanged (the wait is 0). A task's wait in the
// driver's queue for one of the executor's slots is demand the same way:
// it is what lets an executor asked for more than its cores read more
// than 1 (cpuDemand), as a receiver does when its one slot runs a giver's
// partitions too; where every task finds a free slot it is ~0.
type execUtil struct {
	// cpu and mem are demanded (cpu) and used (mem) over reserved in the
	// last complete monitoring epoch: (cores busy + cores waited for) /
	// cores, RSS / the executor's memory; wait is the waited-for part of
	// cpu. at is when that epoch ended (zero: no epoch measured yet).
	cpu, mem, wait float64
	at             time.Time
	// umax is the highest utilisation (by the scaling policy's factor) of
	// a completed stage on the executor (stageCPU).
	umax float64
	// sizes are the cached blocks' sizes as the last heartbeat reported.
	sizes map[string]int64
	// taskWait sums the wait of the tasks that ended on the executor in
	// the epoch under way, ns: their threads' run-queue wait and their
	// wait in the driver's queue for a slot, each task's share of it that
	// falls in this epoch (noteTask). slotTime sums those tasks' time
	// demanding a slot (queued or running) in this epoch, ns.
	taskWait, slotTime int64
}

// noteTask adds a task that ended at end on the executor to the epoch that
// started at epochStart: queued at queued, sent to the executor at
// launched, its threads waiting runQueue ns on a run queue. Its wait (in
// the driver's queue for a slot, then on the run queue) is spread evenly
// over the time from queued to end and only the part in this epoch is
// counted: a task that ran across epochs would otherwise report all of its
// wait in the epoch it ended in. What fell in epochs already closed is
// dropped (an underestimate, never a spike). A zero epochStart (no epoch
// yet) counts it whole.
func (u *execUtil) noteTask(epochStart, queued, launched, end time.Time, runQueue int64) {
	if queued.IsZero() || end.Before(queued) {
		queued = end // a task without a known queue time: its run-queue wait only
	}
	if launched.Before(queued) || launched.After(end) {
		launched = queued
	}
	span := end.Sub(queued)
	in := span
	if epochStart.After(queued) {
		in = max(0, end.Sub(epochStart))
	}
	wait := float64(launched.Sub(queued)) + float64(max(runQueue, 0))
	if span > 0 {
		wait *= float64(in) / float64(span)
	}
	u.taskWait += int64(wait)
	u.slotTime += int64(in)
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
		taskWait, slotTime := e.util.taskWait, e.util.slotTime
		e.util.taskWait, e.util.slotTime = 0, 0
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
		cores := float64(max(e.cores, 1))
		e.util.cpu, e.util.wait = cpuDemand(cpu/float64(n)/cores, float64(taskWait)/float64(epoch)/cores,
			float64(slotTime)/float64(epoch)/cores)
		e.util.mem = mem / float64(n) / memBytes
		e.util.at = now
		c.emit(&eventlog.ExecutorUtilisation{Time: to, Executor: id, CPU: e.util.cpu, CPUWait: e.util.wait, Mem: e.util.mem, UMax: e.util.umax,
			EpochS: epoch.Seconds(), Samples: n})
	}
}

// noteStageUsageLocked raises the executor's U_max with a completed
// stage's utilisation there (stageCPU). Caller holds c.mu.
func (c *Context) noteStageUsageLocked(ev *eventlog.ExecutorStage) {
	e := c.pool.execs[ev.Executor]
	if e == nil || ev.Samples == 0 {
		return
	}
	u := c.factor(stageCPU(ev, float64(max(e.cores, 1))), ev.MemMeanBytes/float64(int64(c.cfg.MemMB)<<20))
	e.util.umax = max(e.util.umax, u)
}

// cpuDemand is an epoch's CPU utilisation from used (cores busy per core
// reserved), waited (cores the tasks waited for, on a run queue or in the
// driver's queue for a slot, per core reserved) and slots (task slots
// demanded, queued or running, on average over the epoch, per core
// reserved): used + waited, with waited bounded by max(1, slots) - used.
// It returns the utilisation and the waited part of it.
//
// The bound is the executor's task slots demanded, not its cores: an
// executor asked to run more tasks at once than it has cores (a receiver
// packed with a giver's partitions, whose tasks queue for its one slot)
// demands more than its cores, and iSpark's reprovisioning rule (more than
// h x min(theta, U_max), 1.1 of the cores by default) can only fire on a
// figure that can pass 1. CPU is soft: such an executor runs, slower. The
// bound used to be 1 - used (the cores wholly demanded), because a task
// that ran across epochs reported all of its wait in the epoch it ended in;
// noteTask now spreads a task's wait over the time it was queued and ran,
// so an epoch's wait is at most the slot time in it, and the bound only
// guards against clocks (the executor's run-queue reading against the
// driver's). Its floor of one core per core reserved keeps the old bound
// where no slot time was recorded.
func cpuDemand(used, waited, slots float64) (util, wait float64) {
	wait = max(0, min(waited, max(1, slots)-used))
	return used + wait, wait
}

// stageCPU is a completed stage's CPU utilisation on an executor of cores
// cores, the larger of two lower bounds of the demand while it ran there:
// the mean of the executor's one-second samples over the stage (the
// executor's every thread, but a stage shorter than a second is averaged
// with the idle time around it), and its tasks' own CPU time plus run-queue
// wait over the stage's time on the executor (exact for stages of any
// length, but only the tasks' threads). Taking only the samples made U_max
// of an iterative program of short stages (kmeans: 20-100 ms) the same
// figure as its epoch utilisation, so eq. 3's capacity min(theta, U_max)
// never had room for another executor's load.
func stageCPU(ev *eventlog.ExecutorStage, cores float64) float64 {
	u := ev.CPUMean / cores
	if d := ev.End - ev.Start; d > 0 {
		// Bounded by the cores wholly demanded (the floor of cpuDemand's
		// bound: a stage's window has no slot time). A stage of a few
		// tasks far shorter than the clocks' resolution can otherwise
		// divide whole ticks of task time by almost nothing (a cold
		// executor's U_max read 29.3).
		u = max(u, min(1, (ev.TaskCPUTimeS+ev.TaskRunQueueS)/d/cores))
	}
	return u
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
