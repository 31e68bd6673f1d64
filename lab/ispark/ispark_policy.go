package ispark

import (
	"sort"
	"time"

	"github.com/allot-sched/allot/framework/elastic"
)

// The driver's monitoring epoch in the iterative model: measure, fail
// overloaded tasks, ask the runtime's policy, carry out its decision.

// epoch closes a's monitoring epoch.
func (r *iterRun) epoch(a *iapp) error {
	a.nextEpoch = r.now + r.cfg.Epoch
	for _, e := range a.execs {
		e.ecpu, e.emem = 0, 0
		if e.accN > 0 {
			e.ecpu, e.emem = e.acc[0]/e.accN, e.acc[1]/e.accN
		}
		e.acc, e.accN = [2]float64{}, 0
		r.countReceiver(e)
	}
	if err := r.failures(a); err != nil {
		return err
	}
	r.steal(a)
	if a.policy != nil {
		d := a.policy.Decide(r.clk.Now(), r.pool(a))
		if err := r.apply(a, d); err != nil {
			return err
		}
	}
	return r.declare(a)
}

// countReceiver adds e's epoch to the receivers' figures if e is a
// receiver that ran in it.
func (r *iterRun) countReceiver(e *iexec) {
	if e.slots < 2 || e.ecpu <= 0 {
		return
	}
	n := float64(r.res.RecvEpochs)
	r.res.RecvCPU = (r.res.RecvCPU*n + e.ecpu) / (n + 1)
	r.res.RecvMem = (r.res.RecvMem*n + e.emem) / (n + 1)
	r.res.RecvEpochs++
	if e.ecpu > 1 {
		r.res.RecvOverCore++
	}
}

// factor is the utilisation iSpark watches (DF: max of cpu and memory).
func (r *iterRun) factor(cpu, mem float64) float64 {
	if r.cfg.Policy == IterISparkCF {
		return cpu
	}
	return max(cpu, mem)
}

// failures applies the model's two failure causes to a's executors: out of
// memory (execution memory above the executor's: it dies, its tasks fail,
// its lanes go to the others and the target asks for a replacement) and
// sustained cpu overload (each running task fails with probability
// FailPerOverload x (D - 1)).
func (r *iterRun) failures(a *iapp) error {
	for i := 0; i < len(a.execs); i++ {
		e := a.execs[i]
		if e.leaveAt > 0 {
			continue
		}
		if ExecBaseMB+r.execMem(a, e) > r.cfg.MemMB {
			r.res.OOMKills++
			if err := r.kill(a, e); err != nil {
				return err
			}
			i--
			continue
		}
		if e.ecpu <= 1 {
			continue
		}
		p := min(1, FailPerOverload*(e.ecpu-1))
		for _, l := range e.lanes {
			if ln := &a.lanes[l]; ln.left > 0 && r.rng.Float64() < p {
				r.res.Failures++
				ln.left += 0.5 / float64(a.Shape.Parts)
			}
		}
	}
	return nil
}

// kill loses e: its running tasks fail, its cache is gone, its lanes go to
// the executors with the fewest lanes (or wait for a new one).
func (r *iterRun) kill(a *iapp, e *iexec) error {
	lanes := append([]int(nil), e.lanes...)
	for _, l := range lanes {
		if a.lanes[l].left > 0 {
			r.res.Failures++
			a.lanes[l].left += 0.5 / float64(a.Shape.Parts)
		}
		a.lanes[l].exec = nil
	}
	e.lanes, e.cache, e.cacheTot = nil, map[elastic.Partition]float64{}, 0
	if err := r.release(a, e); err != nil {
		return err
	}
	for _, l := range lanes {
		if to := a.fewest(); to != nil {
			r.moveLane(a, l, to)
		}
	}
	return nil
}

func (a *iapp) fewest() *iexec {
	var best *iexec
	for _, e := range a.execs {
		if e.leaveAt == 0 && (best == nil || len(e.lanes) < len(best.lanes)) {
			best = e
		}
	}
	return best
}

// pool is what a's driver hands its policy.
func (r *iterRun) pool(a *iapp) elastic.Pool {
	// Before two iterations have ended the iController has no utilisation
	// history to pack by (the first is the pool's ramp-up, its executors
	// joining mid-iteration and its lanes moving): it does not shrink yet.
	p := elastic.Pool{Target: a.target, Backlog: a.backlog, OthersWaiting: a.iter >= 2 && r.now < a.othersUntil}
	epoch0 := r.clk.Now().Add(-time.Duration(r.now * float64(time.Second)))
	for l := range a.lanes {
		if a.lanes[l].exec == nil && a.lanes[l].left > 0 {
			p.Pending++
		}
	}
	for _, e := range a.execs {
		if e.leaveAt > 0 {
			continue
		}
		active := 0
		for _, l := range e.lanes {
			if a.lanes[l].left > 0 {
				active++
			}
		}
		p.Pending += max(0, active-e.slots)
		x := elastic.Executor{ID: e.id, Cores: ExecCores, Running: min(active, ExecCores),
			IdleSince:    epoch0.Add(time.Duration(e.idleSince * float64(time.Second))),
			CachedBlocks: len(e.cache), CachedPartitions: len(e.cache), MemMB: int(r.cfg.MemMB),
			CPUUtil: max(r.taskCPU(a, e), e.ecpu), MemUtil: max(r.memUtil(a, e), e.emem), UMax: e.umax}
		if !r.cfg.PlainEviction {
			x.CacheBytes = int64(StorageFrac * (r.cfg.MemMB - ExecBaseMB) * 1e6)
		}
		x.Cache = r.cacheView(a, e)
		p.Executors = append(p.Executors, x)
	}
	return p
}

func (r *iterRun) cacheView(a *iapp, e *iexec) []elastic.CachedPartition {
	out := make([]elastic.CachedPartition, 0, len(e.cache))
	for p, mb := range e.cache {
		out = append(out, elastic.CachedPartition{Partition: p, Bytes: int64(mb * 1e6), VIP: a.vip(p), Done: a.isDone(p)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].Part < out[j].Part
	})
	return out
}

func (a *iapp) exec(id string) *iexec {
	for _, e := range a.execs {
		if e.id == id {
			return e
		}
	}
	return nil
}

// apply carries out d as the runtime does: a new target (declared as
// demand by the caller), idle executors released, givers handed off.
func (r *iterRun) apply(a *iapp, d elastic.Decision) error {
	a.target, a.backlog = d.Target, d.Backlog
	kept := 0 // releases not carried out keep their executor in the target
	defer func() { a.target += kept }()
	r.res.Added += d.Additions
	moves := map[string][]elastic.Move{}
	for _, m := range d.Moves {
		moves[m.From] = append(moves[m.From], m)
	}
	for _, rel := range d.Releases {
		e := a.exec(rel.Executor)
		if e == nil || e.leaveAt > 0 {
			continue
		}
		to := a.exec(rel.Receiver)
		if rel.Receiver == "" || to == nil {
			// an idle release; an executor whose lanes are in flight to
			// it looks idle to the policy but is not
			if len(e.lanes) > 0 {
				kept++
				continue
			}
			if err := r.release(a, e); err != nil {
				return err
			}
			continue
		}
		if r.cfg.WarmGivers && e.joined > a.iterStart {
			kept++
			continue
		}
		r.handoff(a, e, to, moves[e.id])
	}
	return nil
}

// handoff makes e a giver: its partitions go where the moves say (first
// evicting what they say), its lanes to its receiver, stalled until their
// partitions land; e is released when the last transfer ends. Without the
// cache manager (IterNoCache) nothing moves and e goes at once. With
// IterWeigh, a partition whose transfer would land later than recomputing
// it would take is left to recomputation instead.
func (r *iterRun) handoff(a *iapp, e, to *iexec, moves []elastic.Move) {
	r.res.Givers++
	if e.joined > a.iterStart {
		r.res.YoungGivers++
	}
	if len(e.cache) == 0 {
		r.res.EmptyGivers++
	}
	land := r.now
	if r.cfg.Policy != IterNoCache {
		for _, m := range moves {
			dest := a.exec(m.To)
			if dest == nil {
				continue
			}
			if !r.cfg.PlainEviction {
				for _, v := range m.Evict {
					uncache(dest, v)
				}
			}
			for _, p := range m.Partitions {
				if r.cfg.Policy == IterWeigh && dest.agent != e.agent && r.recomputeSooner(a, e, p) {
					continue
				}
				land = max(land, r.transfer(a, e, dest, p))
			}
		}
	}
	e.cache, e.cacheTot = map[elastic.Partition]float64{}, 0
	to.slots += e.slots // the receiver is oversubscribed: it runs the giver's lanes beside its own
	for _, l := range append([]int(nil), e.lanes...) {
		r.moveLane(a, l, to)
		a.lanes[l].stall = max(a.lanes[l].stall, land)
	}
	e.leaveAt = land
	if land <= r.now {
		e.leaveAt = r.now + 1e-9 // released at the end of this step
	}
}

// recomputeSooner: p's transfer, queued behind the giver link's backlog,
// lands later than its recomputation (RecomputeSec of lane work) would end.
func (r *iterRun) recomputeSooner(a *iapp, e *iexec, p elastic.Partition) bool {
	mb := e.cache[p]
	land := max(r.now, r.netFree[e.agent]) + mb/ISparkWorkerNetBW
	return land-r.now > a.Shape.RecomputeSec
}

// taskCPU is e's utilisation as eq. 3 estimates it: the sum of its tasks'
// utilisation measured in the last iteration (u_i), scaled by the share of
// its lanes it runs at once. 0 before any iteration has been measured.
func (r *iterRun) taskCPU(a *iapp, e *iexec) float64 {
	if len(e.lanes) == 0 {
		return 0
	}
	u := 0.0
	for _, l := range e.lanes {
		u += a.lanes[l].meas
	}
	return u * float64(min(len(e.lanes), e.slots)) / float64(len(e.lanes))
}
