package allocator

import (
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// progRRR is progressive filling by randomized round robin: agents are
// visited in rounds, each a fresh random permutation of the agents that
// could still take a task; each visit places one task, of the framework
// pick chooses. New sets pick from the criterion's shape.
type progRRR struct {
	a    *Allocator
	pick func(ag *agent) candidate
	// keyScores: the score on every agent is the framework's key (an
	// Ordering), read from f.skey; an interface call per shape and visit
	// cost this hot loop several percent
	keyScores bool
	sampler   sorter.Sampler // drawOnAgent's criterion
}

func (p *progRRR) fill() { visitRRR(p.a, p.pick) }

// visitRRR is progressive filling by randomized round robin: rounds over
// the agents that could still take something, each round a fresh seeded
// permutation, one placement per visit as pick chooses it; an agent where
// pick finds nothing leaves the rounds for this cycle. The bandit path
// (prog_bandit.go) visits the same way with its own pick.
func visitRRR(a *Allocator, pick func(*agent) candidate) {
	active := a.liveAgents()
	for len(active) > 0 {
		a.shuffle(active)
		w := 0
		for _, ai := range active {
			c := pick(a.agents[ai])
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

// firstOnAgent (Ordering, Separable): shape members are sorted by a key
// that orders their scores on any one agent, so the first unfiltered
// member of each shape that fits is that shape's best.
func (p *progRRR) firstOnAgent(ag *agent) candidate { return p.onAgent(ag, true) }

// scanOnAgent (other PerAgent criteria): every unfiltered member of every
// shape that fits is scored.
func (p *progRRR) scanOnAgent(ag *agent) candidate { return p.onAgent(ag, false) }

func (p *progRRR) onAgent(ag *agent, firstOnly bool) candidate {
	a := p.a
	var best candidate
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
			score := f.skey
			if !p.keyScores {
				score = a.rank.score(f, ag, &a.cluster)
			}
			if c := (candidate{f, ag, score}); c.better(best) {
				best = c
			}
			if firstOnly {
				break
			}
		}
	}
	return best
}

// drawOnAgent (Sampler): a weighted draw among the members of the shapes
// that fit and do not refuse the agent.
func (p *progRRR) drawOnAgent(ag *agent) candidate {
	a := p.a
	var pool []int32
	for _, sh := range a.active {
		if len(sh.set.items) > 0 && ag.avail.Scalars.Contains(sh.d) {
			pool = append(pool, sh.set.items...)
		}
	}
	f, _ := a.sampleExact(p.sampler, pool, func(f *framework) bool {
		return !a.blocked(f, ag, resources.Resources{Scalars: f.task})
	})
	if f == nil {
		return candidate{}
	}
	return candidate{f: f, ag: ag}
}
