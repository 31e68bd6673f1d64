package allocator

import (
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// shape groups frameworks whose tasks reserve the same vector (declared
// demand less the advisory bandwidths, which are never reserved). The
// fast selection paths work per shape: every framework of a shape fits the
// same agents and, for separable criteria, scores each agent with the same
// agent factor, so only the first framework of each shape matters.
type shape struct {
	d   resources.Vector
	set orderedSet // members, by (skey, index)
	// per cycle, the heap paths of joint selection only (prog_joint.go)
	gh, ih agentHeap
}

// oldKeys remembers a framework's keys before a change, so the sets can
// find it by binary search and move it.
type oldKeys struct{ key, skey float64 }

func (a *Allocator) keysOf(f *framework) oldKeys { return oldKeys{f.key, f.skey} }

// wantsGlobal and wantsShape say which set f belongs to: active and not
// suppressed frameworks are served from the global (oblivious) set, or from
// their shape's set in characterized mode when they declared a demand and
// still want tasks. A framework with an application demand (gang.go) is in
// neither: only the gang path serves it. In role mode no framework is in
// a set: the role-aware cycle reads the keys, not the sets' order, and
// keeping the order on every grant cost as much as the grant.
func (a *Allocator) wantsGlobal(f *framework) bool {
	return !a.rm && f.active && !f.suppressed && !(a.cfg.Mode == Characterized && f.hasDemand) && f.app == nil
}

func (a *Allocator) wantsShape(f *framework) bool {
	return !a.rm && f.active && !f.suppressed && a.cfg.Mode == Characterized && f.hasDemand && f.want != 0 && f.app == nil
}

// syncView refreshes what criteria see and recomputes both keys.
func (a *Allocator) syncView(f *framework) {
	f.view.Allocated = f.alloc.Scalars
	f.view.Weight = a.weight(f.role)
	if a.cfg.Mode == Characterized && f.hasDemand {
		f.view.Demand = f.demand.Scalars
	} else {
		f.view.Demand = resources.Vector{}
	}
	a.rank.keys(f, &a.cluster)
}

// computeMaxTasks sets N_n (TSF) from the agents' capacity classes.
func (a *Allocator) computeMaxTasks(f *framework) {
	f.view.MaxTasks = 0
	if !f.hasDemand {
		return
	}
	for c, count := range a.capClasses {
		f.view.MaxTasks += int64(count) * sorter.TaskCapacity(f.demand.Scalars, c)
	}
}

// leaveSets takes f out of whichever set holds it (keys must be unchanged
// since it joined or was last repositioned).
func (a *Allocator) leaveSets(f *framework) {
	if f.inGlobal {
		a.global.remove(f.idx)
		a.classLeave(f)
		f.inGlobal = false
		a.sampDirty = true
	}
	if f.shape >= 0 {
		a.shapes[f.shape].set.remove(f.idx)
		f.shape = -1
	}
}

// joinSets puts f where it belongs.
func (a *Allocator) joinSets(f *framework) {
	if a.wantsGlobal(f) {
		a.global.insert(f.idx)
		a.classJoin(f)
		f.inGlobal = true
		a.sampDirty = true
	}
	if a.wantsShape(f) {
		s, ok := a.shapeByVec[f.task]
		if !ok {
			s = int32(len(a.shapes))
			sh := &shape{d: f.task}
			sh.set.keyOf = func(n int32) float64 { return a.fws[n].skey }
			a.shapes = append(a.shapes, sh)
			a.shapeByVec[f.task] = s
		}
		a.shapes[s].set.insert(f.idx)
		f.shape = s
	}
}

// frameworkChanged re-derives everything about f after a rare event
// (registration, demand, suppression, weights).
func (a *Allocator) frameworkChanged(f *framework) {
	a.leaveSets(f)
	a.computeMaxTasks(f)
	a.syncView(f)
	a.joinSets(f)
}

// reposition moves f within its set after its allocation changed. While
// keys are dirty the sets are re-sorted at the next cycle anyway.
func (a *Allocator) reposition(f *framework, old oldKeys) {
	if f.shape >= 0 && !a.wantsShape(f) {
		// its demand is met: leave the shape set, found under its old key
		newKey := f.skey
		f.skey = old.skey
		a.shapes[f.shape].set.remove(f.idx)
		f.shape = -1
		f.skey = newKey
	}
	if a.keysDirty {
		return
	}
	if f.inGlobal {
		if f.key != old.key {
			a.global.move(f.idx, old.key)
		}
		if a.classes != nil {
			a.classMove(f)
		}
	}
	if f.shape >= 0 && f.skey != old.skey {
		a.shapes[f.shape].set.move(f.idx, old.skey)
	}
}

// rebuildKeys recomputes every key after the cluster's totals changed
// (agents joined, left or changed) and re-sorts every set.
func (a *Allocator) rebuildKeys() {
	for _, f := range a.fws {
		if f != nil {
			a.computeMaxTasks(f)
			a.syncView(f)
		}
	}
	a.global.rebuild()
	for _, s := range a.shapes {
		s.set.rebuild()
	}
	a.rebuildClasses()
	a.keysDirty = false
}

// grant allocates res on ag to f, counting tasks tasks' worth, and returns
// the index of f's holding on ag. A task's worth is scalars only, so that
// path works on the vectors directly and allocates nothing.
func (a *Allocator) grant(f *framework, ag *agent, res resources.Resources, tasks int64) int {
	scalarOnly := len(res.Ports) == 0 && len(res.Extra) == 0
	if scalarOnly {
		ag.avail.Scalars = ag.avail.Scalars.Sub(res.Scalars)
	} else {
		ag.avail = ag.avail.Sub(res)
	}
	ag.view.Available = ag.avail.Scalars
	ag.version++
	hi := -1
	for i := range ag.holds {
		if ag.holds[i].fw == f.idx {
			hi = i
			break
		}
	}
	if hi < 0 {
		if ag.holds == nil {
			// agents commonly host several frameworks: skip the 1-2-4
			// growth steps
			ag.holds = make([]holding, 0, 8)
		}
		hi = len(ag.holds)
		ag.holds = append(ag.holds, holding{fw: f.idx})
	}
	h := &ag.holds[hi]
	if scalarOnly {
		h.scalars = h.scalars.Add(res.Scalars)
	} else {
		h.set(h.res().Add(res))
	}
	h.tasks += tasks
	old := a.keysOf(f)
	if len(res.Extra) == 0 {
		f.alloc.Scalars = f.alloc.Scalars.Add(res.Scalars)
	} else {
		f.alloc = f.alloc.Add(resources.Resources{Scalars: res.Scalars, Extra: res.Extra})
	}
	f.view.Tasks += tasks
	if tasks > 0 && f.want > 0 {
		f.want -= tasks
		if f.want < 0 {
			f.want = 0
		}
	}
	a.syncView(f)
	a.reposition(f, old)
	return hi
}

// blocked reports whether a live filter of f on ag refuses res.
func (a *Allocator) blocked(f *framework, ag *agent, res resources.Resources) bool {
	if f.nfilters == 0 {
		return false
	}
	for i := range ag.filters {
		if fl := &ag.filters[i]; fl.fw == f.idx && fl.res.Contains(res) {
			return true
		}
	}
	return false
}

// allocatable reports whether avail reaches the min-allocatable floor:
// on the vectors where the floor names only well-known scalars (the
// default), as it is asked several times per agent and grant.
func (a *Allocator) allocatable(avail resources.Resources) bool {
	if a.minAllocVec != nil {
		for _, v := range a.minAllocVec {
			if avail.Scalars.Contains(v) {
				return true
			}
		}
		return false
	}
	for _, m := range a.minAlloc {
		if avail.Contains(m) {
			return true
		}
	}
	return false
}
