package allocator

import (
	"math"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

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

// fill is progressive filling in characterized mode: one task's worth at a
// time, until no framework with outstanding demand fits anywhere it is not
// filtered.
func (a *Allocator) fill() {
	// shapes only lose members during a fill, so the active list gathered
	// here stays a superset; empty ones are skipped where they are met
	a.active = a.active[:0]
	for _, s := range a.shapes {
		if len(s.set.items) > 0 {
			a.active = append(a.active, s)
		}
	}
	if len(a.active) == 0 {
		return
	}
	switch a.cfg.AgentSelection {
	case sorter.RRR:
		a.fillRRR()
	case sorter.BestFit:
		a.fillBestFit()
	case sorter.Joint:
		if a.separable != nil || a.ordering != nil {
			if !a.cfg.bruteForce {
				a.fillJoint()
				return
			}
		}
		a.fillBrute()
	}
}

// place grants one task's worth of c.f's demand on c.ag.
func (a *Allocator) place(c candidate) {
	hi := a.grant(c.f, c.ag, resources.Resources{Scalars: c.f.task}, 1)
	a.emitTask(c.f, c.ag, hi, c.score)
}

// pairScore is the criterion's score of f on ag.
func (a *Allocator) pairScore(f *framework, ag *agent) float64 {
	if a.ordering != nil {
		return f.skey
	}
	return a.perAgent.Score(&f.view, &ag.view, &a.cluster)
}

// bestOnAgent picks the framework to serve on ag, or none.
func (a *Allocator) bestOnAgent(ag *agent) candidate {
	var best candidate
	if a.sampler != nil {
		var pool []int32
		for _, s := range a.active {
			if len(s.set.items) > 0 && ag.avail.Scalars.Contains(s.d) {
				pool = append(pool, s.set.items...)
			}
		}
		f, _ := a.sampleExact(pool, func(f *framework) bool {
			return !a.blocked(f, ag, resources.Resources{Scalars: f.task})
		})
		if f != nil {
			best = candidate{f: f, ag: ag}
		}
		return best
	}
	for _, s := range a.active {
		if len(s.set.items) == 0 || !ag.avail.Scalars.Contains(s.d) {
			continue
		}
		task := resources.Resources{Scalars: s.d}
		first := a.ordering != nil || a.separable != nil
		for _, n := range s.set.items {
			f := a.fws[n]
			if a.blocked(f, ag, task) {
				continue
			}
			if c := (candidate{f, ag, a.pairScore(f, ag)}); c.better(best) {
				best = c
			}
			if first {
				// members are sorted by a key that orders their scores on
				// any one agent: the first unfiltered member is the best
				break
			}
		}
	}
	return best
}

// fillRRR visits agents in rounds, each a fresh random permutation of the
// agents that could still take a task; each visit places one task.
func (a *Allocator) fillRRR() {
	active := a.liveAgents()
	for len(active) > 0 {
		a.shuffle(active)
		w := 0
		for _, ai := range active {
			ag := a.agents[ai]
			c := a.bestOnAgent(ag)
			if c.f == nil {
				continue // nothing fits or everything is filtered: it stays so this cycle
			}
			a.place(c)
			active[w] = ai
			w++
		}
		active = active[:w]
	}
}

// fillBestFit picks the framework by the criterion, then the agent with the
// smallest best-fit distance to its demand.
func (a *Allocator) fillBestFit() {
	if cap(a.exhausted) < len(a.fws) {
		a.exhausted = make([]bool, len(a.fws))
	}
	a.exhausted = a.exhausted[:len(a.fws)]
	clear(a.exhausted)
	live := a.liveAgents()
	for {
		var f *framework
		for _, s := range a.active {
			for _, n := range s.set.items {
				if !a.exhausted[n] {
					if g := a.fws[n]; f == nil || g.skey < f.skey || (g.skey == f.skey && g.idx < f.idx) {
						f = g
					}
					break
				}
			}
		}
		if f == nil {
			return
		}
		task := resources.Resources{Scalars: f.task}
		var bag *agent
		bd := math.Inf(1)
		for _, ai := range live {
			ag := a.agents[ai]
			if !ag.avail.Scalars.Contains(task.Scalars) || a.blocked(f, ag, task) {
				continue
			}
			if d := sorter.BestFitDistance(task.Scalars, ag.avail.Scalars, a.cluster.Total); bag == nil || d < bd {
				bag, bd = ag, d
			}
		}
		if bag == nil {
			a.exhausted[f.idx] = true
			continue
		}
		a.place(candidate{f, bag, f.skey})
	}
}

// fillBrute scores every (framework, agent) pair for every task placed:
// O(frameworks x agents) per task. It is the reference the fast joint path
// is tested against, and the joint path of criteria that do not factor
// (Tetris).
func (a *Allocator) fillBrute() {
	for {
		var best candidate
		for _, ag := range a.agents {
			if ag == nil {
				continue
			}
			for _, s := range a.active {
				if len(s.set.items) == 0 || !ag.avail.Scalars.Contains(s.d) {
					continue
				}
				task := resources.Resources{Scalars: s.d}
				for _, n := range s.set.items {
					f := a.fws[n]
					if a.blocked(f, ag, task) {
						continue
					}
					if c := (candidate{f, ag, a.pairScore(f, ag)}); c.better(best) {
						best = c
					}
				}
			}
		}
		if best.f == nil {
			return
		}
		a.place(best)
	}
}

// fillJoint is joint selection in O(shapes x log agents) per task for
// criteria that factor as framework factor x agent factor (and for
// agent-independent orderings, whose agent factor is constant). Per shape
// it keeps agents in a heap by (agent factor, index); a framework with
// factor zero scores zero everywhere, so it takes the lowest-index agent
// that fits instead, kept in a second heap by index. Within a shape the
// first unfiltered member (by framework factor) is the shape's best.
func (a *Allocator) fillJoint() {
	sep := a.separable
	for _, s := range a.active {
		s.gh.e, s.ih.e = s.gh.e[:0], s.ih.e[:0]
		if len(s.set.items) == 0 {
			continue
		}
		for _, ag := range a.agents {
			if ag == nil || !ag.avail.Scalars.Contains(s.d) {
				continue
			}
			key := 0.0
			if sep != nil {
				key = sep.AgentFactor(s.d, &ag.view)
				s.ih.e = append(s.ih.e, heapEntry{agent: ag.idx})
			}
			s.gh.e = append(s.gh.e, heapEntry{key: key, agent: ag.idx, version: ag.version})
		}
		s.gh.heapify()
		s.ih.heapify()
	}
	for {
		var best candidate
		for _, s := range a.active {
			if len(s.set.items) == 0 {
				continue
			}
			if c := a.jointShapeBest(s); c.better(best) {
				best = c
			}
		}
		if best.f == nil {
			return
		}
		a.place(best)
		if sep == nil {
			continue // ordering: agent keys are constant; fit is checked on use
		}
		ag := best.ag
		for _, s := range a.active {
			if len(s.set.items) > 0 && ag.avail.Scalars.Contains(s.d) {
				s.gh.push(heapEntry{key: sep.AgentFactor(s.d, &ag.view), agent: ag.idx, version: ag.version})
			}
		}
	}
}

// jointShapeBest returns the best (framework, agent) pair of shape s.
func (a *Allocator) jointShapeBest(s *shape) candidate {
	task := resources.Resources{Scalars: s.d}
	fits := func(e heapEntry) bool { return a.agents[e.agent].avail.Scalars.Contains(s.d) }
	current := fits
	if a.separable != nil {
		// agent factors may depend on what is left (rPS-DSF): only the
		// entry pushed at the agent's latest version is current
		current = func(e heapEntry) bool { return a.agents[e.agent].version == e.version }
	}
	var best candidate
	for _, n := range s.set.items {
		f := a.fws[n]
		h, valid := &s.gh, current
		if a.separable != nil && f.skey == 0 {
			h, valid = &s.ih, fits
		}
		var e heapEntry
		var ok bool
		if f.nfilters == 0 {
			e, ok = h.top(valid)
		} else {
			e, ok = h.first(valid, func(e heapEntry) bool { return !a.blocked(f, a.agents[e.agent], task) })
		}
		if ok {
			ag := a.agents[e.agent]
			score := f.skey
			if a.separable != nil {
				score = a.perAgent.Score(&f.view, &ag.view, &a.cluster)
			}
			if c := (candidate{f, ag, score}); c.better(best) {
				best = c
			}
		}
		if f.nfilters == 0 && ok {
			// later members have larger factors: they cannot do better
			break
		}
		if !ok && f.nfilters == 0 {
			break // nothing fits this shape at all
		}
	}
	return best
}
