package ispark

import "github.com/allot-sched/allot/framework/elastic"

// Where the cluster's unused CPU goes in an iterative run (docs/ispark.md,
// "Utilisation"): every second, every core of the cluster that no lane
// used is put in one class, so the classes and the cpu used add up to
// cores x makespan. The classes say what would have to change for an idle
// core to do work: a core no executor holds; an executor with nothing to
// run this second; or one running below its core, classed by why iSpark's
// scale-down left it alone as its policy sees it (the same utilisation,
// gamma and "others are waiting" the driver hands the policy). Dynamic
// allocation's runs are classed the same way, as if by iSpark's rule,
// which says what iSpark had to work with.

// IdleBreakdown is core-seconds unused, by class (in an IterResult), or
// fractions of the cluster's core-seconds, cores x makespan (in an
// ISparkRow, where with cpu_util they add up to 1).
type IdleBreakdown struct {
	// Unreserved: cores no executor held; UnreservedWanted the part of it
	// while some application declared unmet demand (a core free and
	// wanted: allocation latency).
	Unreserved       float64 `json:"unreserved"`
	UnreservedWanted float64 `json:"unreserved_wanted"`
	// Leaving: executors handing off (partitions in flight), not yet
	// released.
	Leaving float64 `json:"leaving"`
	// NoWork: executors with no lane running this second (at the
	// iteration's barrier, waiting for partitions in flight, or emptied);
	// NoWorkRecompute the part of it while a lane of the application that
	// still had work was recomputing partitions it found in no cache (the
	// barrier waits for it).
	NoWork          float64 `json:"no_work"`
	NoWorkRecompute float64 `json:"no_work_recompute"`
	// The rest is the unused part of executors running below their core.
	// Warmup: their application was in its first two iterations (iSpark
	// does not shrink yet). NotAsked: no inverse offer in force (nobody
	// waits, or the allocator asked others); NotAskedQueued the part of it
	// while some application had arrived and not started. AboveGamma: the
	// executor's factor was above gamma; MemBound the part of it where its
	// cpu was at or below gamma and memory held it up (DF). UnderGamma: at
	// or below gamma while asked, and kept: no receiver had room for it.
	Warmup         float64 `json:"warmup"`
	NotAsked       float64 `json:"not_asked"`
	NotAskedQueued float64 `json:"not_asked_queued"`
	AboveGamma     float64 `json:"above_gamma"`
	MemBound       float64 `json:"mem_bound"`
	UnderGamma     float64 `json:"under_gamma"`
}

// scaled is b with every class times f.
func (b IdleBreakdown) scaled(f float64) IdleBreakdown {
	return IdleBreakdown{b.Unreserved * f, b.UnreservedWanted * f, b.Leaving * f, b.NoWork * f, b.NoWorkRecompute * f,
		b.Warmup * f, b.NotAsked * f, b.NotAskedQueued * f, b.AboveGamma * f, b.MemBound * f, b.UnderGamma * f}
}

// plus is b and c added class by class.
func (b IdleBreakdown) plus(c IdleBreakdown) IdleBreakdown {
	return IdleBreakdown{b.Unreserved + c.Unreserved, b.UnreservedWanted + c.UnreservedWanted, b.Leaving + c.Leaving,
		b.NoWork + c.NoWork, b.NoWorkRecompute + c.NoWorkRecompute, b.Warmup + c.Warmup, b.NotAsked + c.NotAsked,
		b.NotAskedQueued + c.NotAskedQueued, b.AboveGamma + c.AboveGamma, b.MemBound + c.MemBound, b.UnderGamma + c.UnderGamma}
}

// Total is every core-second unused.
func (b IdleBreakdown) Total() float64 {
	return b.Unreserved + b.Leaving + b.NoWork + b.Warmup + b.NotAsked + b.AboveGamma + b.UnderGamma
}

// idleExec classes the unused part of e's core for dt seconds, given its
// lanes' demand d this second.
func (r *iterRun) idleExec(a *iapp, e *iexec, d, dt float64) {
	idle := (1 - min(d, 1)) * dt
	b := &r.res.Idle
	switch {
	case idle <= 0:
		return
	case e.leaveAt > 0:
		b.Leaving += idle
		return
	case d <= 0:
		b.NoWork += idle
		if a.recomputing() {
			b.NoWorkRecompute += idle
		}
		return
	case a.iter < 2:
		b.Warmup += idle
		return
	case r.now >= a.othersUntil:
		b.NotAsked += idle
		if r.queued > 0 {
			b.NotAskedQueued += idle
		}
		return
	}
	gamma := elastic.ISpark{Gamma: r.cfg.Gamma}.WithDefaults().Gamma
	cpu := max(r.taskCPU(a, e), e.ecpu)
	mem := max(r.memUtil(a, e), e.emem)
	switch {
	case r.factor(cpu, mem) <= gamma:
		b.UnderGamma += idle
	case cpu <= gamma:
		b.AboveGamma += idle
		b.MemBound += idle
	default:
		b.AboveGamma += idle
	}
}

// recomputing: a lane of a with work left recomputes partitions this
// iteration.
func (a *iapp) recomputing() bool {
	for i := range a.lanes {
		if a.lanes[i].left > 0 && a.lanes[i].missed > 0 {
			return true
		}
	}
	return false
}

// idleCluster classes the cores no executor holds for dt seconds, and
// counts the applications arrived and not started.
func (r *iterRun) idleCluster(dt float64) {
	held, wanted := 0, false
	r.queued = 0
	for _, a := range r.apps {
		if a.done {
			continue
		}
		held += len(a.execs)
		wanted = wanted || a.declared > 0
		if a.declared != 0 && !a.started {
			r.queued++
		}
	}
	free := float64(ISparkWorkers*ISparkWorkerCores-held) * dt
	if free <= 0 {
		return
	}
	r.res.Idle.Unreserved += free
	if wanted {
		r.res.Idle.UnreservedWanted += free
	}
}
