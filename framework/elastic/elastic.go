package elastic

import (
	"fmt"
	"sort"
	"time"
)

// Policy decides one round of scaling.
type Policy interface {
	Decide(now time.Time, p Pool) Decision
}

// Executor is a registered executor as the driver sees it.
type Executor struct {
	ID      string
	Cores   int
	Running int // tasks running on it
	// IdleSince is when its last task ended (or it registered).
	IdleSince time.Time
	// CachedBlocks is how many blocks it last reported holding (cached
	// partitions and shuffle outputs); CachedPartitions how many cached
	// partitions the driver would read from it.
	CachedBlocks, CachedPartitions int

	// What iSpark decides on (zero for a policy that does not read them).
	// MemMB is the executor's reserved memory; CPUUtil and MemUtil are CPU
	// and memory used over reserved in the last monitoring epoch (the
	// framework runtime counts as CPU used the CPU its tasks waited for on
	// a run queue, so a starved executor is not taken for an idle one);
	// UMax is the highest utilisation (by the policy's factor) seen in
	// earlier iterations, 0 while there is no history; ISpark takes the
	// highest of the pool's as the application's U_max.
	MemMB            int
	CPUUtil, MemUtil float64
	UMax             float64
	// Cache is what the executor holds in its block manager, and
	// CacheBytes the room it has for cached partitions (0: no limit known).
	Cache      []CachedPartition
	CacheBytes int64
}

// CachedPartition is a cached partition as the driver's DAG sees it.
type CachedPartition struct {
	Partition
	Bytes int64
	// VIP: a stage not yet finished reads it. Done: every stage known to
	// read it has finished (evict these first).
	VIP, Done bool
}

// Pool is the snapshot a policy decides on.
type Pool struct {
	Executors []Executor
	Pending   int // tasks waiting for a free slot
	Target    int // executors currently asked for
	Backlog   Backlog
	// OthersWaiting: the cluster has frameworks that want resources they
	// cannot get (the master's inverse offers or pressure say so). Only
	// iSpark reads it.
	OthersWaiting bool
}

// Backlog is IdleBacklog's memory between decisions. The zero value means
// no backlog is being timed.
type Backlog struct {
	Since time.Time // when the current backlog started (or last scaled up)
	Step  int       // executors the next scale-up adds (0 means 1)
	// Ceiling, when positive, caps the backlog rule's target: iSpark sets it
	// when it shrinks the pool so that the backlog its shrinking creates
	// does not grow the pool straight back. 0: no cap.
	Ceiling int
}

// Release asks to stop one executor.
type Release struct {
	Executor string
	Reason   string
	// Receiver, for a scale-down that packs load (iSpark), is the
	// executor that takes over the released one's work.
	Receiver string
	// Dropped are cached partitions of the executor that no other
	// executor has room for: lost with it, recomputed from lineage if a
	// later stage reads them. Never a partition an unfinished stage reads.
	Dropped []Partition
}

// Move asks to hand cached partitions from one executor to another before
// the first is released (iSpark's givers and receivers).
type Move struct {
	From, To   string
	Partitions []Partition
	// Evict are partitions To drops (spills) first to make room: those
	// whose reading stages are all done.
	Evict []Partition
}

// Partition names a cached partition: a dataset node and a partition index.
type Partition struct{ Node, Part int }

// Decision is what the pool should do now.
type Decision struct {
	// Releases are executors to stop, in order; the target drops by one
	// for each, not below the policy's minimum.
	Releases []Release
	// Moves run before the releases they make safe.
	Moves []Move
	// Additions is how many executors the target grows by.
	Additions int
	// Target is the executor target after this decision.
	Target int
	// Backlog is carried into the next decision's Pool.
	Backlog Backlog
	// Why names the rule behind Additions ("backlog", or iSpark's
	// "utilisation of EXEC above h x capacity"), for the log and the
	// event log: both rules otherwise read the same.
	Why string
}

// IdleBacklog is today's dynamic allocation rule.
//
// Scale up: while tasks are pending and no executor has a free core, time
// the backlog; once it has lasted BacklogTimeout and the target is below
// Max, add Step executors (1, then 2, 4, ... while the backlog lasts, as
// Spark does) and time again from now. A free core or no pending task
// resets the backlog and the step.
//
// Scale down: with no pending task, release each executor that runs
// nothing, holds no cached data (reported blocks or partitions the driver
// would read from it), and has been idle for IdleTimeout, while more than
// Min executors remain. Executors holding cache are kept so that cached
// datasets are not recomputed.
type IdleBacklog struct {
	Min, Max                    int
	IdleTimeout, BacklogTimeout time.Duration
}

var _ Policy = IdleBacklog{}

// Decide applies the rule. Executors are considered in id order, so the
// same pool gives the same releases.
func (r IdleBacklog) Decide(now time.Time, p Pool) Decision {
	d := Decision{Target: p.Target, Backlog: p.Backlog}
	r.scaleUp(now, p, &d)
	r.releaseIdle(now, p, &d)
	return d
}

func (r IdleBacklog) scaleUp(now time.Time, p Pool, d *Decision) {
	free := 0
	for _, e := range p.Executors {
		free += e.Cores - e.Running
	}
	if p.Pending == 0 || free != 0 {
		d.Backlog = Backlog{Step: 1}
		return
	}
	if p.Backlog.Since.IsZero() {
		d.Backlog.Since = now
		return
	}
	if now.Sub(p.Backlog.Since) < r.BacklogTimeout || p.Target >= r.Max {
		return
	}
	step := max(p.Backlog.Step, 1)
	d.Target = min(r.Max, p.Target+step)
	d.Additions = d.Target - p.Target
	d.Why = "backlog"
	d.Backlog = Backlog{Since: now, Step: step * 2}
}

func (r IdleBacklog) releaseIdle(now time.Time, p Pool, d *Decision) {
	if p.Pending != 0 {
		return
	}
	execs := append([]Executor(nil), p.Executors...)
	sort.Slice(execs, func(i, j int) bool { return execs[i].ID < execs[j].ID })
	live := len(execs)
	for _, e := range execs {
		if e.Running != 0 || e.CachedBlocks != 0 || e.CachedPartitions != 0 || now.Sub(e.IdleSince) < r.IdleTimeout || live <= r.Min {
			continue
		}
		live--
		d.Target = max(r.Min, d.Target-1)
		d.Releases = append(d.Releases, Release{Executor: e.ID, Reason: fmt.Sprintf("idle for %v with no cached data (dynamic allocation)", r.IdleTimeout)})
	}
}
