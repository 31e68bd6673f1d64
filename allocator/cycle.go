package allocator

import (
	"math"
	"time"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Allocate runs one allocation cycle at the clock's current time and
// returns the offers it makes (at most one per framework and agent). The
// caller owns the returned slice.
func (a *Allocator) Allocate() []Offer {
	now := a.clock.Now()
	a.pruneFilters(now)
	if a.keysDirty {
		a.rebuildKeys()
	}
	a.out = nil // sized on first use: most cycles in a busy cluster offer little
	if a.cfg.Mode == Characterized {
		a.fill()
		a.flushPending()
	}
	if len(a.global.items) > 0 {
		a.coarse()
	}
	return a.out
}

// pruneFilters drops expired filters; a sweep per cycle keeps every
// agent's list short and blocked() free of clock reads.
func (a *Allocator) pruneFilters(now time.Time) {
	for _, ag := range a.agents {
		if ag == nil || len(ag.filters) == 0 {
			continue
		}
		w := 0
		for _, fl := range ag.filters {
			if !now.Before(fl.until) {
				if f := a.fws[fl.fw]; f != nil {
					f.nfilters--
				}
				continue
			}
			ag.filters[w] = fl
			w++
		}
		clear(ag.filters[w:])
		ag.filters = ag.filters[:w]
	}
}

// emit records a whole-agent placement as an offer: an agent is offered
// whole at most once per cycle, so these are never merged.
func (a *Allocator) emit(f *framework, ag *agent, res resources.Resources, score float64) {
	a.trace(f, ag, res, score)
	a.out = append(a.out, Offer{
		Framework: f.id, Agent: ag.id, Resources: res.Clone(),
		Reason: Reason{Criterion: a.crit.Name(), Selection: a.cfg.AgentSelection, Mode: a.cfg.Mode, Score: score},
	})
}

func (a *Allocator) trace(f *framework, ag *agent, res resources.Resources, score float64) {
	if a.cfg.Trace != nil {
		a.cfg.Trace(Placement{Framework: f.id, Agent: ag.id, FrameworkIndex: int(f.idx), AgentIndex: int(ag.idx), Resources: res.Clone(), Score: score})
	}
}

// emitTask records one task's worth placed during progressive filling on
// holding hi of ag. Pending counts live on the holdings themselves, so
// building an offer per (framework, agent) costs no extra allocation; they
// turn into offers once, at the end of the fill.
func (a *Allocator) emitTask(f *framework, ag *agent, hi int, score float64) {
	if a.cfg.Trace != nil {
		a.trace(f, ag, resources.Resources{Scalars: f.task}, score)
	}
	if ag.npend == 0 {
		a.touched = append(a.touched, ag.idx)
	}
	h := &ag.holds[hi]
	if h.pend == 0 {
		ag.npend++
		h.pscore = score
	}
	h.pend++
}

// flushPending turns the fill's pending placements into offers, agents in
// the order they were first served, frameworks in holding order.
func (a *Allocator) flushPending() {
	n := 0
	for _, ai := range a.touched {
		n += int(a.agents[ai].npend)
	}
	if cap(a.out)-len(a.out) < n {
		out := make([]Offer, len(a.out), len(a.out)+n)
		copy(out, a.out)
		a.out = out
	}
	for _, ai := range a.touched {
		ag := a.agents[ai]
		for i := range ag.holds {
			h := &ag.holds[i]
			if h.pend == 0 {
				continue
			}
			f := a.fws[h.fw]
			a.out = append(a.out, Offer{
				Framework: f.id, Agent: ag.id, Tasks: int(h.pend),
				Resources: resources.Resources{Scalars: f.task.Times(int64(h.pend))},
				Reason:    Reason{Criterion: a.crit.Name(), Selection: a.cfg.AgentSelection, Mode: a.cfg.Mode, Score: h.pscore},
			})
			h.pend = 0
		}
		ag.npend = 0
	}
	a.touched = a.touched[:0]
}

// liveAgents fills a.perm with the indices of live agents.
func (a *Allocator) liveAgents() []int32 {
	a.perm = a.perm[:0]
	for _, ag := range a.agents {
		if ag != nil {
			a.perm = append(a.perm, ag.idx)
		}
	}
	return a.perm
}

func (a *Allocator) shuffle(p []int32) {
	a.rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
}

// ---------------------------------------------------------------------
// Oblivious (coarse-grained) offers: a selected framework gets all that is
// left on the agent.

func (a *Allocator) coarse() {
	switch a.cfg.AgentSelection {
	case sorter.RRR:
		perm := a.liveAgents()
		a.shuffle(perm)
		for i, ai := range perm {
			ag := a.agents[ai]
			offer := ag.avail.Reservable()
			if !a.allocatable(offer) {
				continue
			}
			f, score := a.coarsePick(ag, offer)
			if f != nil {
				if a.out == nil {
					// at most one offer per remaining agent
					a.out = make([]Offer, 0, len(perm)-i)
				}
				a.grant(f, ag, offer, 0)
				a.emit(f, ag, offer, score)
			}
		}
	case sorter.BestFit:
		a.coarseBestFit()
	case sorter.Joint:
		a.coarseJoint()
	}
}

// coarsePick chooses the framework for a whole agent.
func (a *Allocator) coarsePick(ag *agent, offer resources.Resources) (*framework, float64) {
	switch {
	case a.ordering != nil:
		for _, n := range a.global.items {
			if f := a.fws[n]; !a.blocked(f, ag, offer) {
				return f, f.key
			}
		}
	case a.sampler != nil:
		return a.sample(a.global.items, func(f *framework) bool { return !a.blocked(f, ag, offer) })
	case a.classes != nil:
		co := a.classes[ag.total.Scalars]
		for _, n := range co.set.items {
			if f := a.fws[n]; !a.blocked(f, ag, offer) {
				return f, co.keys[n]
			}
		}
	default:
		var best *framework
		bs := math.Inf(1)
		for _, n := range a.global.items {
			f := a.fws[n]
			if a.blocked(f, ag, offer) {
				continue
			}
			if s := a.perAgent.Score(&f.view, &ag.view, &a.cluster); best == nil || s < bs {
				best, bs = f, s
			}
		}
		return best, bs
	}
	return nil, 0
}

// sample draws a framework from items with probability proportional to its
// weight, among those ok accepts. Rejection sampling on the prefix sums
// keeps the common case O(log n); after a few misses it falls back to an
// exact O(n) draw over the accepted ones, so the distribution is exact.
func (a *Allocator) sample(items []int32, ok func(*framework) bool) (*framework, float64) {
	if a.sampDirty || len(a.sampPrefix) != len(items) {
		a.sampPrefix = a.sampPrefix[:0]
		sum := 0.0
		for _, n := range items {
			sum += a.sampler.Weight(&a.fws[n].view)
			a.sampPrefix = append(a.sampPrefix, sum)
		}
		a.sampDirty = false
	}
	if len(items) == 0 {
		return nil, 0
	}
	total := a.sampPrefix[len(a.sampPrefix)-1]
	for try := 0; try < 8; try++ {
		u := a.rng.Float64() * total
		lo, hi := 0, len(a.sampPrefix)-1
		for lo < hi {
			m := (lo + hi) / 2
			if a.sampPrefix[m] > u {
				hi = m
			} else {
				lo = m + 1
			}
		}
		if f := a.fws[items[lo]]; ok(f) {
			return f, 0
		}
	}
	return a.sampleExact(items, ok)
}

func (a *Allocator) sampleExact(items []int32, ok func(*framework) bool) (*framework, float64) {
	sum := 0.0
	for _, n := range items {
		if f := a.fws[n]; ok(f) {
			sum += a.sampler.Weight(&f.view)
		}
	}
	if sum == 0 {
		return nil, 0
	}
	u := a.rng.Float64() * sum
	var last *framework
	for _, n := range items {
		if f := a.fws[n]; ok(f) {
			last = f
			if u -= a.sampler.Weight(&f.view); u < 0 {
				return f, 0
			}
		}
	}
	return last, 0 // rounding left u >= 0 at the end
}

// demandDirection is the vector best fit matches against: the declared
// demand, else the allocation so far (the paper's inferred demand).
func (f *framework) demandDirection() resources.Vector {
	if f.hasDemand {
		return f.demand.Scalars
	}
	return f.alloc.Scalars
}

// coarseBestFit: frameworks in criterion order each take the agent whose
// free resources best fit their demand direction; a framework with no
// direction yet takes agents in a fresh random order.
func (a *Allocator) coarseBestFit() {
	pool := a.liveAgents()
	a.shuffle(pool)
	for {
		granted := false
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
			if bi < 0 {
				continue
			}
			ag := a.agents[pool[bi]]
			offer := ag.avail.Reservable()
			score := f.key
			a.grant(f, ag, offer, 0)
			a.emit(f, ag, offer, score)
			pool = append(pool[:bi], pool[bi+1:]...)
			granted = true
			break
		}
		if !granted {
			return
		}
	}
}

// coarseJoint scores every (framework, agent) pair and grants the best,
// whole agent by whole agent: O(frameworks x agents) per grant, meant for
// small clusters and experiments.
func (a *Allocator) coarseJoint() {
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
				s := f.key
				if a.perAgent != nil {
					s = a.perAgent.Score(&f.view, &ag.view, &a.cluster)
				}
				if bf == nil || s < bs || (s == bs && (ag.idx < bag.idx || ag.idx == bag.idx && f.idx < bf.idx)) {
					bf, bag, bs = f, ag, s
				}
			}
		}
		if bf == nil {
			return
		}
		offer := bag.avail.Reservable()
		a.grant(bf, bag, offer, 0)
		a.emit(bf, bag, offer, bs)
	}
}
