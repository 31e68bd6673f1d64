package allocator

import (
	"strconv"

	"github.com/allot-sched/allot/allocator/policy/prophet"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// exec is one executor's reservation: cpus and mem.
func exec(d *profile.AppDemand) resources.Resources {
	var v resources.Vector
	v[resources.CPUs], _ = resources.QuantityFromFloat(d.Cpus)
	v[resources.Mem], _ = resources.QuantityFromFloat(d.Mem)
	return resources.Resources{Scalars: v}
}

// fits: shape s's executor's cpus and mem fit on agent i; tetris-peak also needs
// its lifetime bandwidth peaks to fit under the agent's capacity less the
// peaks already placed there. A peak above the agent's capacity reserves
// the whole device (an executor can use no more), so it still fits an
// idle agent; an agent that advertises none of a bandwidth takes no
// executor that needs it.
func (p *gangPath) fits(s *shapeScores, ag *agent, i int) bool {
	d := s.d
	if !ag.avail.Scalars.Contains(s.exec) {
		return false
	}
	if p.rule == sorter.GangProphet {
		return true
	}
	tl := p.tls[i]
	if tl == nil {
		return false
	}
	used := p.peaks(i)
	for r := profile.Resource(0); r < profile.NumResources; r++ {
		c := tl.TL.Capacity(r)
		if pk := min(prophet.PeakOf(&d.Profile, r), c); pk > 0 && used[r]+pk > c+1e-9 {
			return false
		}
		if c == 0 && prophet.PeakOf(&d.Profile, r) > 0 {
			return false
		}
	}
	return true
}

func (p *gangPath) peaks(i int) [profile.NumResources]float64 {
	used := p.tls[i].Peak
	if p.local[i] != nil { // note set both
		l := p.lpeak[i]
		for r := range used {
			used[r] += l[r]
		}
	}
	return used
}

// score is the executor of shape sh's score on agent i, lower better:
// Prophet's norm against the timeline (0 on an agent the model does not
// know), or tetris-peak's negated alignment of the four peaks with what is
// free.
func (p *gangPath) score(sh *shapeScores, ag *agent, i int) float64 {
	d := sh.d
	tl := p.tls[i]
	if tl == nil {
		return 0
	}
	if p.rule == sorter.GangProphet {
		l := p.local[i]
		if l == nil {
			return p.prophetScore(sh, tl.TL)
		}
		if !memoPlaced {
			return p.prophetScore(sh, l)
		}
		v, ok, slot := p.memo.lookup(i, sh.idx)
		if ok {
			return v
		}
		if p.memo.memoised(i) {
			l = p.memo.timeline(i, tl.TL, p.now, p.shapePrep)
		}
		v = p.prophetScore(sh, l)
		if slot != nil {
			*slot = v
		}
		return v
	}
	used := p.peaks(i)
	var s float64
	for _, k := range []resources.Kind{resources.CPUs, resources.Mem} {
		if c := ag.total.Scalars[k].Units(); c > 0 {
			dem := exec(d).Scalars[k].Units()
			s += dem / c * ag.avail.Scalars[k].Units() / c
		}
	}
	for r := profile.Resource(0); r < profile.NumResources; r++ {
		if c := tl.TL.Capacity(r); c > 0 {
			s += min(prophet.PeakOf(&d.Profile, r), c) / c * (c - used[r]) / c
		}
	}
	return -s
}

// prophetScore is Prophet's norm for shape s on timeline t. On an idle
// timeline the score depends on the capacities alone (profile.IdleFrom),
// so it is computed once per capacity and shape in a cycle: in a cluster
// of many idle agents that is most of the scoring.
func (p *gangPath) prophetScore(s *shapeScores, t *profile.Timeline) float64 {
	prof := &s.d.Profile
	if len(prof.Stages) == 0 || !t.IdleFrom(p.now.Add(prof.Stages[0].Start)) {
		return t.Score(p.now, prof, p.p.Score).Norm
	}
	c := t.Capacities()
	for _, x := range s.idle {
		if x.cap == c {
			return x.score
		}
	}
	v := t.Score(p.now, prof, p.p.Score).Norm
	s.idle = append(s.idle, idleScore{cap: c, score: v})
	return v
}

// shapePrep is the prepared profile of the shape at index sh.
func (p *gangPath) shapePrep(sh int32) *profile.Prepared { return p.shapeList[sh].prep }

// cycleKeys are the scratch timelines' executor keys, made once.
var cycleKeys = func() (k [16]string) {
	for i := range k {
		k[i] = "cycle/" + strconv.Itoa(i)
	}
	return k
}()

// cycleKey names the n-th executor on a scratch timeline (unique there).
func cycleKey(n int) string {
	if n < len(cycleKeys) {
		return cycleKeys[n]
	}
	return "cycle/" + strconv.Itoa(n)
}

// note adds an executor placed this cycle to agent i's scratch timeline
// and peaks, so the rest of the cycle scores against it.
func (p *gangPath) note(i int, s *shapeScores) {
	tl := p.tls[i]
	if tl == nil || s.prep == nil {
		return
	}
	d := s.d
	memo := p.rule == sorter.GangProphet && memoPlaced
	if memo {
		p.memo.placed(i, tl.TL, p.now, s.idx)
	}
	l := p.local[i]
	switch {
	case memo && p.memo.memoised(i):
		// its executors live in its memo state (placedMemo.timeline);
		// p.local[i] only marks the agent as changed this cycle
		if l == nil {
			p.local[i] = tl.TL
		}
	default:
		if l == nil {
			l = tl.TL.Clone()
			p.local[i] = l
		}
		_ = l.AddPrepared(cycleKey(l.Len()), p.now, s.prep)
	}
	pk := p.lpeak[i]
	for r := range pk {
		pk[r] += tl.Reserve(&d.Profile, profile.Resource(r))
	}
	p.lpeak[i] = pk
	// grant bumped the agent's version, so every shape rescores it
}
