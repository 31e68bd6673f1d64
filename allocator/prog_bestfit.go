package allocator

import (
	"math"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// progBestFit is progressive filling by best fit (Ordering criteria only):
// the criterion picks the framework, then the agent with the smallest
// best-fit distance to its task takes one task's worth.
type progBestFit struct {
	a         *Allocator
	exhausted []bool // per framework, within one cycle: no agent takes its task
}

func (p *progBestFit) fill() {
	a := p.a
	if cap(p.exhausted) < len(a.fws) {
		p.exhausted = make([]bool, len(a.fws))
	}
	p.exhausted = p.exhausted[:len(a.fws)]
	clear(p.exhausted)
	live := a.liveAgents()
	for {
		f := p.next()
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
			p.exhausted[f.idx] = true
			continue
		}
		a.place(candidate{f, bag, f.skey})
	}
}

// next is the framework with the lowest key over the shapes' first
// members not yet exhausted.
func (p *progBestFit) next() *framework {
	a := p.a
	var f *framework
	for _, s := range a.active {
		for _, n := range s.set.items {
			if !p.exhausted[n] {
				if g := a.fws[n]; f == nil || g.skey < f.skey || (g.skey == f.skey && g.idx < f.idx) {
					f = g
				}
				break
			}
		}
	}
	return f
}
