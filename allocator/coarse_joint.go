package allocator

import "math"

// coarseJoint scores every (framework, agent) pair and grants the best,
// whole agent by whole agent: O(frameworks x agents) per grant, meant for
// small clusters and experiments.
type coarseJoint struct{ a *Allocator }

func (p coarseJoint) fill() {
	a := p.a
	if len(a.global.items) == 0 {
		return
	}
	for {
		var bf *framework
		var bag *agent
		bs := math.Inf(1)
		for _, ag := range a.agents {
			if ag == nil {
				continue
			}
			offer := ag.avail.Reservable()
			if !a.allocatable(offer) {
				continue
			}
			for _, n := range a.global.items {
				f := a.fws[n]
				if a.blocked(f, ag, offer) {
					continue
				}
				s := a.rank.score(f, ag, &a.cluster)
				if bf == nil || s < bs || (s == bs && (ag.idx < bag.idx || ag.idx == bag.idx && f.idx < bf.idx)) {
					bf, bag, bs = f, ag, s
				}
			}
		}
		if bf == nil {
			return
		}
		a.grantWhole(bf, bag, bag.avail.Reservable(), bs)
	}
}
