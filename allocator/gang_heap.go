package allocator

import (
	"github.com/allot-sched/allot/internal/heapq"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// shapeScores keeps a shape's fitting agents for one cycle in a lazy
// min-heap by (score, position in p.ags), each entry stamped with the
// agent's version when scored. A placement bumps the version of the E
// agents it used, so a round rescores only the stale entries it meets
// while taking the E best: O(E log A) per round after an O(A) build.
// Within a cycle an agent's cpu/mem only shrink and its timeline and
// peaks only grow, so an agent dropped as unfit never fits again in it.
type shapeScores struct {
	d     *profile.AppDemand
	h     gangHeap
	built bool
	best  []int32 // the E best agents this round, by (score, position)
	norms []float64
	ok    bool
	app   float64
	fresh bool
	// pending counts its applications not yet done this cycle; seen is the
	// last round whose candidate walk met it. apps are their positions in
	// the cycle's applications, in order, first the first not known done;
	// counted says they are in the cycle's liveRanks (while s.ok).
	pending int
	seen    uint64
	apps    []int32
	first   int
	counted bool
	// idle are the shape's scores on idle agents (profile.IdleFrom) by
	// capacity: the same on every such agent, so computed once each.
	idle []idleScore
	// exec is exec(d)'s scalars, which fits checks on every agent it meets.
	exec resources.Vector
	// prep is d.Profile prepared, for the executors note adds.
	prep *profile.Prepared
	// idx is the shape's position in the cycle's shapeList (placedMemo's).
	idx int32
	// vers are the versions of best's agents when selected; kept says
	// best is still the walk's answer while they hold (keepBest).
	vers []uint32
	kept bool
}

type idleScore struct {
	cap   [profile.NumResources]int64
	score float64
}

// reset empties s for reuse in another cycle, keeping its storage.
func (s *shapeScores) reset(d *profile.AppDemand) {
	h, best, norms, idle, vers, apps := s.h, s.best[:0], s.norms[:0], s.idle[:0], s.vers[:0], s.apps[:0]
	h.Reset()
	*s = shapeScores{d: d, h: h, best: best, norms: norms, idle: idle, vers: vers, apps: apps, exec: exec(d).Scalars}
}

type gangHeap = heapq.Heap[float64, int32, uint32]

type gangEntry = heapq.Entry[float64, int32, uint32]

// evaluate selects s's E best fitting agents, once per round.
func (p *gangPath) evaluate(s *shapeScores) *shapeScores {
	if s.fresh {
		return s
	}
	s.fresh = true
	if !s.built {
		s.built = true
		for i, ag := range p.ags {
			if p.fits(s, ag, i) {
				s.h.Append(gangEntry{Key: p.score(s, ag, i), Tie: int32(i), Val: ag.version})
			}
		}
		s.h.Init()
	}
	if s.kept && p.unchanged(s) {
		p.keptHits++
		if sortBest(s.best, s.norms, s.vers) && s.ok {
			s.app = p.appScore(s.norms) // the sum in the new order
		}
		if checkKept != nil {
			checkKept(p, s)
		}
		return s
	}
	s.best, s.norms = p.selectE(s, nil, s.best[:0], s.norms[:0])
	s.vers = s.vers[:0]
	for _, i := range s.best {
		s.vers = append(s.vers, p.ags[i].version)
	}
	s.kept = keepBest
	s.ok = len(s.best) == s.d.Executors
	if s.ok {
		s.app = p.appScore(s.norms)
	}
	return s
}

// keepBest lets a shape keep last round's E best while none of their
// agents changed (unchanged): the walk of the lazy heap would take the
// same entries again. After a walk, every entry it did not take ranks
// above every entry it took, by (score, position): each take is the least
// entry not taken; an entry met stale is rescored, and if it then ranks
// below an entry taken before, it is the only such entry and the least,
// so it is taken next (the walk stops only on a take). A placement
// changes only the agents it used (their versions; their scores, fits and
// memo states change with nothing else), so if no agent of best was used,
// the next walk meets exactly best again, all fresh, takes them in (score,
// position) order — not necessarily the order they were taken in, when a
// rescored entry overtook one taken before it, so sortBest puts them in
// it — and changes nothing in the heap; if fewer than E fit, best is the
// whole heap and the same holds. A walk with a refuse filter (placeGang) goes past the
// last entry taken and may rescore entries there, so it clears kept.
// Only the agents a placement touched change score; a shape whose best
// avoided them (about half the shapes a round when an idle cluster
// fills) is not walked at all. A variable so that a test can compare
// decisions with and without it.
var keepBest = true

// checkKept, if set (tests), is called with every shape whose best was
// kept, to compare it with a walk from scratch.
var checkKept func(p *gangPath, s *shapeScores)

// sortBest puts best (with its norms and vers) in (score, position)
// order, the order a walk meeting them all fresh takes them in, and
// reports whether it moved any. Insertion sort: E is small, and after the
// first round kept the lists are in order already.
func sortBest(best []int32, norms []float64, vers []uint32) bool {
	moved := false
	for k := 1; k < len(best); k++ {
		for j := k; j > 0 && (norms[j] < norms[j-1] || norms[j] == norms[j-1] && best[j] < best[j-1]); j-- {
			best[j], best[j-1] = best[j-1], best[j]
			norms[j], norms[j-1] = norms[j-1], norms[j]
			vers[j], vers[j-1] = vers[j-1], vers[j]
			moved = true
		}
	}
	return moved
}

// unchanged reports whether no agent of s.best changed (was granted to)
// since s selected it.
func (p *gangPath) unchanged(s *shapeScores) bool {
	for k, i := range s.best {
		if p.ags[i].version != s.vers[k] {
			return false
		}
	}
	return true
}

// selectE appends to best and norms the E lowest-scored agents of s's
// heap that accept takes (all, if nil), rescoring stale entries and
// dropping agents that no longer fit; it leaves the heap holding every
// fitting agent. It is the lazy heap's walk: take the lowest entry not yet
// taken; a stale one is rescored (or dropped) and the walk goes on. For a
// small E the entries stay in place (selectSmall); otherwise they are
// popped and pushed back (selectPop). Both take the same entries in the
// same order and leave the heap with the same entries.
func (p *gangPath) selectE(s *shapeScores, accept func(i int) bool, best []int32, norms []float64) ([]int32, []float64) {
	if s.d.Executors <= selectInPlaceMax {
		return p.selectSmall(s, accept, best, norms)
	}
	return p.selectPop(s, accept, best, norms)
}

// selectInPlaceMax bounds E for selectSmall, whose search for the next
// entry costs O(taken^2) against a pop and a push's O(log A) each.
var selectInPlaceMax = 16 // a variable so that a test can compare the two walks

// refresh rescores the stale entry x of s for agent i: the entry to put
// back, or false if the agent no longer fits.
func (p *gangPath) refresh(s *shapeScores, x gangEntry) (gangEntry, bool) {
	i := int(x.Tie)
	ag := p.ags[i]
	if !p.fits(s, ag, i) {
		return x, false
	}
	return gangEntry{Key: p.score(s, ag, i), Tie: x.Tie, Val: ag.version}, true
}

// selectSmall is selectE without popping: the entries taken so far stay
// in the heap, and the next is the lowest of the others (heapq.Least); a
// stale one is replaced in place. Every round of a cycle selects each
// shape's E again, so the E pops and pushes this saves are most of the
// selection's cost.
func (p *gangPath) selectSmall(s *shapeScores, accept func(i int) bool, best []int32, norms []float64) ([]int32, []float64) {
	e := s.d.Executors
	p.taken = p.taken[:0]
	for len(best) < e {
		var at int
		at, p.frontier = s.h.Least(p.taken, p.frontier)
		if at < 0 {
			break
		}
		x := s.h.At(at)
		if x.Val != p.ags[x.Tie].version {
			if y, ok := p.refresh(s, x); ok {
				s.h.Set(at, y)
			} else {
				s.h.RemoveAt(at)
			}
			continue
		}
		p.taken = append(p.taken, x.Tie)
		if accept != nil && !accept(int(x.Tie)) {
			continue
		}
		best, norms = append(best, x.Tie), append(norms, x.Key)
	}
	return best, norms
}

// selectPop is selectE by popping entries and pushing the taken ones back.
func (p *gangPath) selectPop(s *shapeScores, accept func(i int) bool, best []int32, norms []float64) ([]int32, []float64) {
	e := s.d.Executors
	p.skipped = p.skipped[:0]
	for len(best) < e && s.h.Len() > 0 {
		x := s.h.Pop()
		if x.Val != p.ags[x.Tie].version {
			if y, ok := p.refresh(s, x); ok {
				s.h.Push(y)
			}
			continue
		}
		p.skipped = append(p.skipped, x)
		if accept != nil && !accept(int(x.Tie)) {
			continue
		}
		best, norms = append(best, x.Tie), append(norms, x.Key)
	}
	for _, x := range p.skipped {
		s.h.Push(x)
	}
	return best, norms
}

// appScore combines E per-agent scores. tetris-peak's are negated
// alignments, combined by the mean whatever Combine says.
func (p *gangPath) appScore(norms []float64) float64 {
	if p.rule != sorter.GangProphet {
		return profile.AppScore(profile.CombineMean, norms)
	}
	return profile.AppScore(p.p.Combine, norms)
}
