package allocator

import (
	"math"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// coarseBestFit offers whole agents by best fit (Ordering criteria only):
// frameworks in criterion order each take the agent whose free resources
// best fit their demand direction; a framework with no direction yet
// takes agents in a fresh random order.
type coarseBestFit struct{ a *Allocator }

func (p coarseBestFit) fill() {
	a := p.a
	if len(a.global.items) == 0 {
		return
	}
	pool := a.liveAgents()
	a.shuffle(pool)
	for {
		f, bi := p.next(pool)
		if f == nil {
			return
		}
		ag := a.agents[pool[bi]]
		a.grantWhole(f, ag, ag.avail.Reservable(), f.key)
		pool = append(pool[:bi], pool[bi+1:]...)
	}
}

// next is the first framework in criterion order that some agent of pool
// can be offered to, with the position in pool of its best-fitting agent.
func (p coarseBestFit) next(pool []int32) (*framework, int) {
	a := p.a
	for _, n := range a.global.items {
		f := a.fws[n]
		dir := f.demandDirection()
		bi, bd := -1, math.Inf(1)
		for pi, ai := range pool {
			ag := a.agents[ai]
			offer := ag.avail.Reservable()
			if !a.allocatable(offer) || a.blocked(f, ag, offer) {
				continue
			}
			d := 0.0
			if dir != (resources.Vector{}) {
				d = sorter.BestFitDistance(dir, offer.Scalars, a.cluster.Total)
			}
			if bi < 0 || d < bd {
				bi, bd = pi, d
			}
		}
		if bi >= 0 {
			return f, bi
		}
	}
	return nil, -1
}
