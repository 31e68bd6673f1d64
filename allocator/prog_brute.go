package allocator

import "github.com/allot-sched/allot/resources"

// progBrute is joint selection by scoring every (framework, agent) pair for
// every task placed: O(frameworks x agents) per task. It is the reference
// the heap paths of prog_joint.go are tested against (Config.bruteForce),
// and the joint path of criteria that do not factor (Tetris).
type progBrute struct{ a *Allocator }

func (p progBrute) fill() {
	a := p.a
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
					if c := (candidate{f, ag, a.rank.score(f, ag, &a.cluster)}); c.better(best) {
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
