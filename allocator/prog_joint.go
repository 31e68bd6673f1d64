package allocator

import (
	"github.com/allot-sched/allot/internal/heapq"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// The heap paths of joint selection in characterized mode: O(shapes x log
// agents) per task instead of scoring every pair (prog_brute.go). They
// serve the criteria whose score on an agent factors: an Ordering, whose
// agent factor is constant (jointOrdered), and a Separable criterion,
// framework factor x agent factor (jointSeparable). Per shape the agents
// sit in a heap; within a shape the first unfiltered member (by framework
// key) is the shape's best, so each task costs a heap top per shape.

// agentHeap is a lazy min-heap of agents by (key, agent index); Val is the
// agent's version when the entry was pushed. An entry is current only
// while its version equals the agent's: a placement bumps the version and
// pushes a fresh entry, so stale entries are skipped rather than searched
// for. That keeps memory per shape proportional to the agents and
// placements of one cycle, with no position index per (shape, agent).
type agentHeap = heapq.Heap[float64, int32, uint32]

type agentEntry = heapq.Entry[float64, int32, uint32]

// topValid drops entries valid rejects (stale ones) and returns the best
// remaining entry, or false when none is left.
func topValid(h *agentHeap, valid func(agentEntry) bool) (agentEntry, bool) {
	for h.Len() > 0 {
		if e := h.Top(); valid(e) {
			return e, true
		}
		h.Pop()
	}
	return agentEntry{}, false
}

// firstAgent is the best valid entry of h whose agent does not refuse f's
// task: the top when f has no filters, else a best-first walk that leaves
// the heap as it is for the shape's other members.
func (a *Allocator) firstAgent(h *agentHeap, valid func(agentEntry) bool, f *framework, task resources.Vector) (agentEntry, bool) {
	if f.nfilters == 0 {
		return topValid(h, valid)
	}
	t := resources.Resources{Scalars: task}
	return h.First(func(e agentEntry) bool { return valid(e) && !a.blocked(f, a.agents[e.Tie], t) })
}

// bestOverShapes is the best pair over the active shapes.
func (a *Allocator) bestOverShapes(shapeBest func(*shape) candidate) candidate {
	var best candidate
	for _, s := range a.active {
		if len(s.set.items) == 0 {
			continue
		}
		if c := shapeBest(s); c.better(best) {
			best = c
		}
	}
	return best
}

// jointOrdered is joint selection for an Ordering: every agent scores the
// framework's key, so a shape's heap holds the agents that fit by index
// and an agent leaves it once the shape no longer fits there (what is
// left only shrinks during a fill).
type jointOrdered struct{ a *Allocator }

func (j jointOrdered) fill() {
	a := j.a
	for _, s := range a.active {
		s.gh.Reset()
		if len(s.set.items) == 0 {
			continue
		}
		for _, ag := range a.agents {
			if ag != nil && ag.avail.Scalars.Contains(s.d) {
				s.gh.Append(agentEntry{Tie: ag.idx, Val: ag.version})
			}
		}
		s.gh.Init()
	}
	for {
		best := a.bestOverShapes(j.shapeBest)
		if best.f == nil {
			return
		}
		a.place(best) // agent keys are constant: fit is checked on use
	}
}

func (j jointOrdered) shapeBest(s *shape) candidate {
	a := j.a
	fits := func(e agentEntry) bool { return a.agents[e.Tie].avail.Scalars.Contains(s.d) }
	var best candidate
	for _, n := range s.set.items {
		f := a.fws[n]
		if e, ok := a.firstAgent(&s.gh, fits, f, s.d); ok {
			if c := (candidate{f, a.agents[e.Tie], f.skey}); c.better(best) {
				best = c
			}
		}
		if f.nfilters == 0 {
			// later members have larger keys: they cannot do better; and
			// if nothing fits this member, nothing fits the shape
			break
		}
	}
	return best
}

// jointSeparable is joint selection for a Separable criterion. Per shape
// it keeps agents in a heap by (agent factor, index), re-pushed after each
// placement on them; a framework with factor zero scores zero everywhere,
// so it takes the lowest-index agent that fits instead, kept in a second
// heap by index.
type jointSeparable struct {
	a   *Allocator
	sep sorter.Separable
}

func (j jointSeparable) fill() {
	a := j.a
	for _, s := range a.active {
		s.gh.Reset()
		s.ih.Reset()
		if len(s.set.items) == 0 {
			continue
		}
		for _, ag := range a.agents {
			if ag == nil || !ag.avail.Scalars.Contains(s.d) {
				continue
			}
			s.ih.Append(agentEntry{Tie: ag.idx})
			s.gh.Append(agentEntry{Key: j.sep.AgentFactor(s.d, &ag.view), Tie: ag.idx, Val: ag.version})
		}
		s.gh.Init()
		s.ih.Init()
	}
	for {
		best := a.bestOverShapes(j.shapeBest)
		if best.f == nil {
			return
		}
		a.place(best)
		ag := best.ag
		for _, s := range a.active {
			if len(s.set.items) > 0 && ag.avail.Scalars.Contains(s.d) {
				s.gh.Push(agentEntry{Key: j.sep.AgentFactor(s.d, &ag.view), Tie: ag.idx, Val: ag.version})
			}
		}
	}
}

func (j jointSeparable) shapeBest(s *shape) candidate {
	a := j.a
	fits := func(e agentEntry) bool { return a.agents[e.Tie].avail.Scalars.Contains(s.d) }
	// agent factors may depend on what is left (rPS-DSF): only the entry
	// pushed at the agent's latest version is current
	current := func(e agentEntry) bool { return a.agents[e.Tie].version == e.Val }
	var best candidate
	for _, n := range s.set.items {
		f := a.fws[n]
		h, valid := &s.gh, current
		if f.skey == 0 {
			h, valid = &s.ih, fits
		}
		if e, ok := a.firstAgent(h, valid, f, s.d); ok {
			ag := a.agents[e.Tie]
			if c := (candidate{f, ag, j.sep.Score(&f.view, &ag.view, &a.cluster)}); c.better(best) {
				best = c
			}
		}
		if f.nfilters == 0 {
			// later members have larger factors: they cannot do better
			break
		}
	}
	return best
}
