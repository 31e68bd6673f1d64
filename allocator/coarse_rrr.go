package allocator

import (
	"math"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// coarseRRR offers whole agents in a random order (Mesos's default
// shuffle); on each agent pick chooses the framework, or none. New sets
// pick from the criterion's shape.
type coarseRRR struct {
	a    *Allocator
	pick func(ag *agent, offer resources.Resources) (*framework, float64)
}

func (p *coarseRRR) fill() {
	a := p.a
	if len(a.global.items) == 0 {
		return
	}
	perm := a.liveAgents()
	a.shuffle(perm)
	for i, ai := range perm {
		ag := a.agents[ai]
		offer := ag.avail.Reservable()
		if !a.allocatable(offer) {
			continue
		}
		f, score := p.pick(ag, offer)
		if f != nil {
			if a.out == nil {
				// at most one offer per remaining agent
				a.out = make([]Offer, 0, len(perm)-i)
			}
			a.grantWhole(f, ag, offer, score)
		}
	}
}

// firstInOrder (Ordering): the first unfiltered framework in the global
// order.
func (p *coarseRRR) firstInOrder(ag *agent, offer resources.Resources) (*framework, float64) {
	a := p.a
	for _, n := range a.global.items {
		if f := a.fws[n]; !a.blocked(f, ag, offer) {
			return f, f.key
		}
	}
	return nil, 0
}

// scan (PerAgent): scores every unfiltered framework on the agent.
func (p *coarseRRR) scan(ag *agent, offer resources.Resources) (*framework, float64) {
	a := p.a
	var best *framework
	bs := math.Inf(1)
	for _, n := range a.global.items {
		f := a.fws[n]
		if a.blocked(f, ag, offer) {
			continue
		}
		if s := a.rank.score(f, ag, &a.cluster); best == nil || s < bs {
			best, bs = f, s
		}
	}
	return best, bs
}

// firstInClass (CapacityScored): the first unfiltered framework in the
// order of the agent's capacity class, which is the argmin scan would
// find; a scan while there are too many classes to keep orders for.
func (p *coarseRRR) firstInClass(ag *agent, offer resources.Resources) (*framework, float64) {
	a := p.a
	if a.classes == nil {
		return p.scan(ag, offer)
	}
	co := a.classes[ag.total.Scalars]
	for _, n := range co.set.items {
		if f := a.fws[n]; !a.blocked(f, ag, offer) {
			return f, co.keys[n]
		}
	}
	return nil, 0
}

// drawWeighted (Sampler) draws a framework with probability proportional
// to its weight. It keeps prefix sums of the weights over the global set,
// rebuilt when the set changed (a.sampDirty).
type drawWeighted struct {
	a      *Allocator
	s      sorter.Sampler
	prefix []float64
}

func (d *drawWeighted) draw(ag *agent, offer resources.Resources) (*framework, float64) {
	a := d.a
	return d.sample(a.global.items, func(f *framework) bool { return !a.blocked(f, ag, offer) })
}

// sample draws a framework from items among those ok accepts. Rejection
// sampling on the prefix sums keeps the common case O(log n); after a few
// misses it falls back to an exact O(n) draw over the accepted ones, so
// the distribution is exact.
func (d *drawWeighted) sample(items []int32, ok func(*framework) bool) (*framework, float64) {
	a := d.a
	if a.sampDirty || len(d.prefix) != len(items) {
		d.prefix = d.prefix[:0]
		sum := 0.0
		for _, n := range items {
			sum += d.s.Weight(&a.fws[n].view)
			d.prefix = append(d.prefix, sum)
		}
		a.sampDirty = false
	}
	if len(items) == 0 {
		return nil, 0
	}
	total := d.prefix[len(d.prefix)-1]
	for try := 0; try < 8; try++ {
		u := a.rng.Float64() * total
		lo, hi := 0, len(d.prefix)-1
		for lo < hi {
			m := (lo + hi) / 2
			if d.prefix[m] > u {
				hi = m
			} else {
				lo = m + 1
			}
		}
		if f := a.fws[items[lo]]; ok(f) {
			return f, 0
		}
	}
	return a.sampleExact(d.s, items, ok)
}
