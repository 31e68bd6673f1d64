package allocator

import (
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// maxClassOrders bounds the per-capacity-class orders: each allocation
// change repositions a framework in every class, so with many distinct
// agent shapes scanning every framework per agent is the cheaper path.
const maxClassOrders = 32

// classOrder is the order of the coarse (global) frameworks on agents of
// one capacity, for a CapacityScored criterion: the first unfiltered
// framework in it is the argmin of the score on any such agent, exactly
// what scoring every framework would find (ties by framework index).
type classOrder struct {
	view sorter.Agent // Capacity set; the criterion reads nothing else
	keys []float64    // score by framework index
	set  orderedSet
}

func (co *classOrder) key(n int32) float64 {
	if int(n) < len(co.keys) {
		return co.keys[n]
	}
	return 0
}

// rebuildClasses recreates the class orders from scratch after agents
// changed; a no-op unless the whole-agent path reads them (a.classCrit
// set by choosePath: rrr with a CapacityScored criterion).
func (a *Allocator) rebuildClasses() {
	a.classes = nil
	if a.classCrit == nil || len(a.capClasses) > maxClassOrders {
		return
	}
	a.classes = make(map[resources.Vector]*classOrder, len(a.capClasses))
	for c := range a.capClasses {
		co := &classOrder{view: sorter.Agent{Capacity: c}}
		co.set.keyOf = co.key
		co.keys = make([]float64, len(a.fws))
		for _, n := range a.global.items {
			co.keys[n] = a.classCrit.Score(&a.fws[n].view, &co.view, &a.cluster)
			co.set.items = append(co.set.items, n)
		}
		co.set.rebuild()
		a.classes[c] = co
	}
}

func (a *Allocator) classScore(co *classOrder, f *framework) float64 {
	return a.classCrit.Score(&f.view, &co.view, &a.cluster)
}

// classJoin, classLeave and classMove mirror the global set's changes.
func (a *Allocator) classJoin(f *framework) {
	for _, co := range a.classes {
		for len(co.keys) <= int(f.idx) {
			co.keys = append(co.keys, 0)
		}
		co.keys[f.idx] = a.classScore(co, f)
		co.set.insert(f.idx)
	}
}

func (a *Allocator) classLeave(f *framework) {
	for _, co := range a.classes {
		co.set.remove(f.idx)
	}
}

func (a *Allocator) classMove(f *framework) {
	for _, co := range a.classes {
		old := co.keys[f.idx]
		if k := a.classScore(co, f); k != old {
			co.keys[f.idx] = k
			co.set.move(f.idx, old)
		}
	}
}
