package ispark

import (
	"sort"

	"github.com/allot-sched/allot/framework/elastic"
)

// Iterations, lanes and the executors' caches of the iterative model.

// part names partition j of lane l in dataset node: node 0 is the cached
// input, node k+1 what iteration k derived.
func part(a *iapp, node, l, j int) elastic.Partition {
	return elastic.Partition{Node: node, Part: l*a.Shape.Parts + j}
}

func (a *iapp) laneOf(p elastic.Partition) int { return p.Part / a.Shape.Parts }

// partMB is one partition's size.
func partMB(a *iapp, node int) float64 {
	if node == 0 {
		return a.Shape.InputMB / float64(a.Shape.Parts)
	}
	return a.Shape.DerivedMB / float64(a.Shape.Parts)
}

// vip: the running (or next) iteration reads it. done: every iteration
// that reads it has ended.
func (a *iapp) vip(p elastic.Partition) bool    { return p.Node == 0 || p.Node == a.iter }
func (a *iapp) isDone(p elastic.Partition) bool { return p.Node != 0 && p.Node < a.iter }

// reads are the datasets an iteration after the first reads: the input
// and, if the shape derives one, the last iteration's dataset.
func (a *iapp) reads() []int {
	if a.Shape.DerivedMB <= 0 {
		return []int{0}
	}
	return []int{0, a.iter}
}

// beginIter starts iteration a.iter: draws each lane's demand and reads
// its partitions, recomputing those no executor of the application holds.
func (r *iterRun) beginIter(a *iapp) {
	s := a.Shape
	a.iterStart = r.now
	for l := range a.lanes {
		ln := &a.lanes[l]
		ln.rho = s.rho(a.iter) * (1 + IterNoise*(2*r.rng.Float64()-1))
		ln.memf = 1 + IterNoise*(2*r.rng.Float64()-1)
		ln.left, ln.missed = 1, 0
		r.res.Tasks += s.Parts
		for j := 0; j < s.Parts; j++ {
			if a.iter == 0 {
				// first read of the input, from storage: cache it
				r.admitHome(a, l, part(a, 0, l, j))
				continue
			}
			for _, node := range a.reads() {
				p := part(a, node, l, j)
				r.res.Reads++
				if a.holder(p) != nil {
					r.res.Hits++
					continue
				}
				r.res.Recomputed++
				ln.left += s.RecomputeSec / s.IterSec
				ln.missed++
				r.admitHome(a, l, p)
			}
		}
	}
}

// endIter caches what the iteration derived, unpersists the dataset two
// iterations old, and starts the next iteration or finishes the
// application (returning 1).
func (r *iterRun) endIter(a *iapp) (int, error) {
	k := a.iter
	a.iter++
	for _, e := range a.execs {
		// the monitor's per-iteration utilisation; U_max over iterations
		if e.joined <= a.iterStart && e.iaccN > 0 {
			e.umax = max(e.umax, r.factor(e.iacc[0]/e.iaccN, e.iacc[1]/e.iaccN))
		}
		e.iacc, e.iaccN = [2]float64{}, 0
	}
	for l := range a.lanes {
		a.lanes[l].meas = a.lanes[l].rho // the task metrics of the iteration that ended
	}
	for l := range a.lanes {
		for j := 0; j < a.Shape.Parts && a.Shape.DerivedMB > 0; j++ {
			r.admitHome(a, l, part(a, k+1, l, j))
		}
	}
	for _, e := range a.execs {
		for _, p := range held(e) {
			if p.Node != 0 && p.Node < k {
				uncache(e, p)
			}
		}
	}
	if a.iter < a.Shape.Iters {
		r.beginIter(a)
		return 0, nil
	}
	a.done, a.finish = true, r.now+1
	for len(a.execs) > 0 {
		if err := r.release(a, a.execs[0]); err != nil {
			return 0, err
		}
	}
	return 1, r.al.RemoveFramework(a.Name)
}

// holder is the executor of a holding p, or nil.
func (a *iapp) holder(p elastic.Partition) *iexec {
	for _, e := range a.execs {
		if _, ok := e.cache[p]; ok {
			return e
		}
	}
	return nil
}

// admitHome caches p on its lane's executor (if the lane has one).
func (r *iterRun) admitHome(a *iapp, l int, p elastic.Partition) {
	if e := a.lanes[l].exec; e != nil {
		r.admit(a, e, p, partMB(a, p.Node))
	}
}

// execMem is the working memory of the lanes e runs at once.
func (r *iterRun) execMem(a *iapp, e *iexec) float64 {
	if len(e.lanes) == 0 {
		return 0
	}
	m := 0.0
	for _, l := range e.lanes {
		m += a.Shape.ExecMB * a.lanes[l].memf
	}
	return m * float64(min(len(e.lanes), e.slots)) / float64(len(e.lanes))
}

func cacheMB(e *iexec) float64 { return e.cacheTot }

// uncache drops p from e's cache.
func uncache(e *iexec, p elastic.Partition) {
	if mb, ok := e.cache[p]; ok {
		delete(e.cache, p)
		e.cacheTot -= mb
	}
}

// held is e's cached partitions in (node, part) order: every walk over a
// cache goes in this order, so runs are reproducible.
func held(e *iexec) []elastic.Partition {
	out := make([]elastic.Partition, 0, len(e.cache))
	for p := range e.cache {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].Part < out[j].Part
	})
	return out
}

// storageMB is the room e's cache has: the storage region, less what
// execution memory takes beyond the rest.
func (r *iterRun) storageMB(a *iapp, e *iexec) float64 {
	region := StorageFrac * (r.cfg.MemMB - ExecBaseMB)
	return max(0, min(region, r.cfg.MemMB-ExecBaseMB-r.execMem(a, e)))
}

// memUtil is what the monitor reports: Spark's own accounting of
// execution and storage memory over the executor's memory (the JVM's
// reserved ExecBaseMB is not the application's to pack).
func (r *iterRun) memUtil(a *iapp, e *iexec) float64 {
	return (r.execMem(a, e) + cacheMB(e)) / r.cfg.MemMB
}

// admit caches p (mb) on e, evicting to make room: done partitions first
// (lowest id first), then partitions no running iteration reads; VIP
// partitions are never evicted for another, and p is not cached (it
// spills) when no room can be made. With PlainEviction, victims are drawn
// at random among everything held.
func (r *iterRun) admit(a *iapp, e *iexec, p elastic.Partition, mb float64) {
	if _, ok := e.cache[p]; ok {
		return
	}
	room := r.storageMB(a, e)
	for cacheMB(e)+mb > room+1e-9 {
		v, ok := r.victim(a, e)
		if !ok {
			return
		}
		uncache(e, v)
	}
	e.cache[p] = mb
	e.cacheTot += mb
}

func (r *iterRun) victim(a *iapp, e *iexec) (elastic.Partition, bool) {
	hs := held(e)
	if len(hs) == 0 {
		return elastic.Partition{}, false
	}
	if r.cfg.PlainEviction {
		return hs[r.rng.IntN(len(hs))], true
	}
	for _, p := range hs {
		if a.isDone(p) {
			return p, true
		}
	}
	for _, p := range hs {
		if !a.vip(p) {
			return p, true
		}
	}
	return elastic.Partition{}, false
}

// trim evicts until e's cache fits beside its execution memory.
func (r *iterRun) trim(a *iapp, e *iexec) {
	room := r.storageMB(a, e)
	for cacheMB(e) > room+1e-9 {
		v, ok := r.victim(a, e)
		if !ok {
			// execution memory wins (unified memory): VIP partitions spill
			v = anyPart(e)
		}
		uncache(e, v)
	}
}

func anyPart(e *iexec) elastic.Partition {
	var best elastic.Partition
	first := true
	for p := range e.cache {
		if first || p.Node > best.Node || (p.Node == best.Node && p.Part > best.Part) {
			best, first = p, false
		}
	}
	return best
}

// transfer moves p from e to to over e's agent link and returns when it
// lands (now for a move inside one agent).
func (r *iterRun) transfer(a *iapp, from, to *iexec, p elastic.Partition) float64 {
	mb, ok := from.cache[p]
	if !ok {
		return r.now
	}
	uncache(from, p)
	r.admit(a, to, p, mb)
	r.res.MovedMB += mb
	if from.agent == to.agent {
		return r.now
	}
	t := max(r.now, r.netFree[from.agent]) + mb/ISparkWorkerNetBW
	r.netFree[from.agent] = t
	return t
}

// moveLane puts lane l on to with its partitions; the lane stalls until
// they land.
func (r *iterRun) moveLane(a *iapp, l int, to *iexec) {
	ln := &a.lanes[l]
	if from := ln.exec; from != nil {
		for i, x := range from.lanes {
			if x == l {
				from.lanes = append(from.lanes[:i], from.lanes[i+1:]...)
				break
			}
		}
		from.slots = max(1, min(from.slots, len(from.lanes)))
		if len(from.lanes) == 0 {
			from.idleSince = r.now
		}
		land := r.now
		for _, p := range held(from) {
			if a.laneOf(p) == l {
				land = max(land, r.transfer(a, from, to, p))
			}
		}
		ln.stall = max(ln.stall, land)
	}
	ln.exec = to
	to.lanes = append(to.lanes, l)
	r.trim(a, to)
}

// giveLanes gives a new executor work: every orphaned lane, else one lane
// of the executor with the most (the hottest among equals) if it has two
// or more.
func (r *iterRun) giveLanes(a *iapp, e *iexec) {
	orphan := false
	for l := range a.lanes {
		if a.lanes[l].exec == nil {
			r.moveLane(a, l, e)
			orphan = true
		}
	}
	if orphan {
		return
	}
	var donor *iexec
	for _, x := range a.execs {
		if x == e || x.leaveAt > 0 || len(x.lanes) < 2 {
			continue
		}
		if donor == nil || len(x.lanes) > len(donor.lanes) || (len(x.lanes) == len(donor.lanes) && x.ecpu > donor.ecpu) {
			donor = x
		}
	}
	if donor != nil {
		r.moveLane(a, donor.lanes[len(donor.lanes)-1], e)
	}
}

// steal gives each executor of a that has no unfinished lane one lane
// queued (beyond its slots) on the executor with the most queued, as
// Spark's scheduler hands pending tasks to a free slot; the lane's
// partitions follow it.
func (r *iterRun) steal(a *iapp) {
	for _, e := range a.execs {
		if e.leaveAt > 0 || a.active(e) > 0 {
			continue
		}
		var from *iexec
		for _, x := range a.execs {
			if x.leaveAt == 0 && a.active(x) > x.slots && (from == nil || a.active(x)-x.slots > a.active(from)-from.slots) {
				from = x
			}
		}
		if from == nil {
			return
		}
		for i := len(from.lanes) - 1; i >= 0; i-- {
			if l := from.lanes[i]; a.lanes[l].left > 0 {
				r.moveLane(a, l, e)
				break
			}
		}
	}
}

// active counts e's lanes with work left in the iteration.
func (a *iapp) active(e *iexec) int {
	n := 0
	for _, l := range e.lanes {
		if a.lanes[l].left > 0 {
			n++
		}
	}
	return n
}
