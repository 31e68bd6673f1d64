package allocator

import (
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Helpers shared by the fill paths (coarse_*.go, prog_*.go): recording
// placements, agent orders, weighted draws.

// candidate is a (framework, agent) pair under consideration, compared by
// (score, agent index, framework index).
type candidate struct {
	f     *framework
	ag    *agent
	score float64
}

func (c candidate) better(o candidate) bool {
	if o.f == nil {
		return c.f != nil
	}
	if c.f == nil {
		return false
	}
	if c.score != o.score {
		return c.score < o.score
	}
	if c.ag.idx != o.ag.idx {
		return c.ag.idx < o.ag.idx
	}
	return c.f.idx < o.f.idx
}

// gatherShapes lists the shapes with members in a.active and reports
// whether there are any. Shapes only lose members during a fill, so the
// list stays a superset; empty ones are skipped where they are met.
func (a *Allocator) gatherShapes() bool {
	a.active = a.active[:0]
	for _, s := range a.shapes {
		if len(s.set.items) > 0 {
			a.active = append(a.active, s)
		}
	}
	return len(a.active) > 0
}

// place grants one task's worth of c.f's demand on c.ag.
func (a *Allocator) place(c candidate) {
	hi := a.grant(c.f, c.ag, resources.Resources{Scalars: c.f.task}, 1)
	a.emitTask(c.f, c.ag, hi, c.score)
}

// grantWhole gives f all of offer on ag and records the offer.
func (a *Allocator) grantWhole(f *framework, ag *agent, offer resources.Resources, score float64) {
	a.grant(f, ag, offer, 0)
	a.emit(f, ag, offer, score)
}

// emit records a whole-agent placement as an offer: an agent is offered
// whole at most once per cycle, so these are never merged.
func (a *Allocator) emit(f *framework, ag *agent, res resources.Resources, score float64) {
	a.trace(f, ag, res, score)
	a.out = append(a.out, Offer{
		Framework: f.id, Agent: ag.id, Resources: res.Clone(),
		Reason: a.reason(score), Role: f.role,
	})
}

func (a *Allocator) reason(score float64) Reason {
	return Reason{Criterion: a.crit.Name(), Selection: a.cfg.AgentSelection, Mode: a.cfg.Mode, Score: score}
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
				Reason:    a.reason(h.pscore), Role: f.role,
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

// sampleExact draws a framework from items with probability proportional
// to s's weight, among those ok accepts, in O(len(items)).
func (a *Allocator) sampleExact(s sorter.Sampler, items []int32, ok func(*framework) bool) (*framework, float64) {
	sum := 0.0
	for _, n := range items {
		if f := a.fws[n]; ok(f) {
			sum += s.Weight(&f.view)
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
			if u -= s.Weight(&f.view); u < 0 {
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
