package allocator

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/allot-sched/allot/allocator/policy/prophet"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// gangFirst puts the gang path in front of the path choosePath chose, and
// the timelines model beside it.
func (a *Allocator) gangFirst(g sorter.Gang) error {
	params := DefaultGangParams()
	if a.cfg.Gang != nil {
		params = *a.cfg.Gang
	}
	if err := params.Validate(); err != nil {
		return fmt.Errorf("allocator: %s: %w", g.Name(), err)
	}
	m := prophet.New(params.DeadlineFactor, params.DeadlineMean == DeadlinePending)
	a.addModel(m)
	a.path = &gangPath{a: a, m: m, rule: g.Rule(), p: params, next: a.path}
	return nil
}

// gangPath places applications' gangs, then runs the mode's usual path
// (next) for the frameworks without an application demand, on what is
// left: gangs go first because they need E agents at once and would
// otherwise starve behind per-task and whole-agent offers.
type gangPath struct {
	a    *Allocator
	m    *prophet.Model
	rule sorter.GangRule
	p    GangParams
	next filler

	// per cycle
	now time.Time
	ags []*agent
	tls []*prophet.Agent
	// local and lpeak are, by position in ags, the agents changed this
	// cycle (model + this cycle's executors; nil: unchanged) and the peaks
	// placed on them: slices, not maps, for score reads local on every
	// score.
	local  []*profile.Timeline
	lpeak  [][profile.NumResources]float64
	apps   []gangApp
	shapes map[gangShape]*shapeScores
	// spare are last cycle's shapeScores, reset and reused so that their
	// heaps keep their storage (a cycle otherwise grows one heap of every
	// agent per shape from nothing).
	spare []*shapeScores
	// shapeList is shapes in first-met order (maps iterate at random);
	// overdue the applications past their deadline, earliest first;
	// cursor the first application not yet done; round counts rounds.
	shapeList []*shapeScores
	overdue   []*gangApp
	cursor    int
	round     uint64
	// need counts the executors of the applications not yet done: the
	// room the cycle's offers may still take.
	need int
	// reasonText is the chosen application's Reason.Why
	reasonText string
	sel        []int32     // scratch: a filtered selection
	selNorms   []float64   // its scores
	skipped    []gangEntry // scratch: entries popped and to be pushed back
	taken      []int32     // scratch: selectSmall's entries taken so far
	frontier   []int       // scratch: heapq.Least's
	memo       placedMemo  // prophet's scores on agents idle but for this cycle's placements
	ranks      liveRanks   // the pending applications of fitting shapes, by position (rankCandidates)
	cands      []int32     // scratch: rankCandidates' candidates
	keptHits   int         // rounds a shape kept its best (keepBest; for tests)
}

var _ filler = (*gangPath)(nil)

// gangApp is one pending application this cycle.
type gangApp struct {
	f    *framework
	rec  *prophet.App
	sh   *shapeScores
	done bool
	// next leads towards the next application not done (nextLive): i+1
	// at first, then further once the ones after are done.
	next int32
	at   int32 // its position in the cycle's applications
}

// gangShape identifies applications that score alike on every agent: the
// same E, cpus, mem and profile (the profile by its first stage's address
// would be unsafe across declarations, so by value, as a string).
type gangShape struct {
	e         int
	cpus, mem float64
	prof      string
}

func (p *gangPath) fill() {
	if p.collect() {
		p.place()
	}
	p.next.fill()
}

// collect lists this cycle's pending applications, longest waiting first,
// and the live agents; it reports whether there is anything to place.
func (p *gangPath) collect() bool {
	a := p.a
	p.apps = p.apps[:0]
	for _, f := range a.fws {
		if f == nil || f.app == nil || !f.active || f.suppressed {
			continue
		}
		if r := p.m.App(f.id); r != nil && r.Pending {
			p.apps = append(p.apps, gangApp{f: f, rec: r})
		}
	}
	if len(p.apps) == 0 {
		return false
	}
	sort.SliceStable(p.apps, func(i, j int) bool {
		x, y := p.apps[i], p.apps[j]
		if x.rec.Arrival != y.rec.Arrival {
			return x.rec.Arrival < y.rec.Arrival
		}
		return x.f.idx < y.f.idx
	})
	for i := range p.apps {
		p.apps[i].next, p.apps[i].at = int32(i+1), int32(i)
	}
	p.now = a.clock.Now()
	p.ags, p.tls = p.ags[:0], p.tls[:0]
	for _, ag := range a.agents {
		if ag != nil {
			p.ags = append(p.ags, ag)
			p.tls = append(p.tls, p.m.Agent(ag.id))
		}
	}
	if p.shapes == nil {
		p.shapes = map[gangShape]*shapeScores{}
	}
	p.local, p.lpeak = resize(p.local, len(p.ags)), resize(p.lpeak, len(p.ags))
	clear(p.shapes)
	if p.rule == sorter.GangProphet && memoPlaced {
		p.memo.reset(len(p.ags))
	}
	p.spare = append(p.spare, p.shapeList...)
	p.shapeList, p.overdue, p.cursor = p.shapeList[:0], p.overdue[:0], 0
	for i := range p.apps {
		p.group(i)
	}
	sort.SliceStable(p.overdue, func(i, j int) bool { return p.overdue[i].rec.Deadline < p.overdue[j].rec.Deadline })
	p.ranks.reset(len(p.apps))
	return true
}

// group puts application i with the others of its shape (making the
// shape on first meeting it) and among the overdue if its deadline passed.
func (p *gangPath) group(i int) {
	d := &p.apps[i].rec.Demand
	k := gangShape{e: d.Executors, cpus: d.Cpus, mem: d.Mem, prof: p.apps[i].rec.Shape()}
	s := p.shapes[k]
	if s == nil {
		s = p.newShape(d)
		s.prep = p.apps[i].rec.Prepared() // equal stages, equal preparation
		s.idx = int32(len(p.shapeList))
		p.shapes[k] = s
		p.shapeList = append(p.shapeList, s)
	}
	// applications of one shape have equal stages, to the bit, and so
	// equal preparations (the same pointer sharing as among one
	// declaration's executors)
	p.apps[i].rec.SharePrepared(s.prep)
	s.pending++
	s.apps = append(s.apps, int32(i))
	s.counted = true
	p.apps[i].sh = s
	if r := p.apps[i].rec; p.rule == sorter.GangProphet && r.Deadline != 0 && p.now.UnixNano() >= r.Deadline {
		p.overdue = append(p.overdue, &p.apps[i])
	}
}

// resize is s with n zero elements, in s's storage if it has room.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// newShape is a reset shapeScores for d, a spare one if there is one.
func (p *gangPath) newShape(d *profile.AppDemand) *shapeScores {
	n := len(p.spare)
	if n == 0 {
		return &shapeScores{d: d, exec: exec(d).Scalars}
	}
	s := p.spare[n-1]
	p.spare[n-1] = nil
	p.spare = p.spare[:n-1]
	s.reset(d)
	return s
}

// place repeats rounds while an application fits: score every shape's E
// best agents, choose among the candidates, place its gang.
func (p *gangPath) place() {
	p.need = 0
	for i := range p.apps {
		p.need += p.apps[i].rec.Demand.Executors
	}
	for {
		for _, s := range p.shapeList {
			s.fresh = false
		}
		best := p.choose()
		if best == nil {
			return
		}
		p.placeGang(best)
	}
}

// choose picks this round's application: an overdue one first (earliest
// deadline), else the lowest score among the longest-waiting Fraction of
// the pending applications that fit (ties: longer wait, then registration).
// tetris-peak takes every fitting application as a candidate and has no
// deadlines. Applications of one shape score alike, so the walk through
// the candidates stops once it has met every fitting shape.
func (p *gangPath) choose() *gangApp {
	nFit, okShapes := 0, 0
	for _, s := range p.shapeList {
		if s.pending > 0 && p.evaluate(s).ok {
			nFit += s.pending
			okShapes++
		}
		if s.pending > 0 && s.counted != s.ok {
			p.recount(s)
		}
	}
	if nFit == 0 {
		return nil
	}
	for _, g := range p.overdue {
		if !g.done && g.sh.ok {
			p.reasonText = "deadline passed " + time.Duration(p.now.UnixNano()-g.rec.Deadline).String() + " ago"
			return g
		}
	}
	half := nFit
	if p.rule == sorter.GangProphet {
		half = int(math.Ceil(p.p.Fraction * float64(nFit)))
	}
	var best *gangApp
	var bestRank int
	if rankedCandidates {
		best, bestRank = p.rankCandidates(half)
	} else {
		best, bestRank = p.walkCandidates(half, okShapes)
	}
	if p.rule == sorter.GangProphet {
		// as fmt's "candidate half (%d of the %d longest-waiting of %d
		// fitting)", without its cost in every round
		p.reasonText = "candidate half (" + strconv.Itoa(bestRank) + " of the " + strconv.Itoa(half) +
			" longest-waiting of " + strconv.Itoa(nFit) + " fitting)"
	} else {
		p.reasonText = "best alignment of " + strconv.Itoa(nFit) + " fitting applications"
	}
	return best
}

// walkCandidates is the candidate walk: the application of the lowest
// score among the first half of the pending applications that fit
// (ties: the first met), and its rank among them. Applications of one
// shape score alike, so the walk stops once it has met every fitting
// shape. rankCandidates gives the same answer without the walk.
func (p *gangPath) walkCandidates(half, okShapes int) (*gangApp, int) {
	p.cursor = p.nextLive(p.cursor)
	p.round++
	var best *gangApp
	rank, bestRank, seen := 0, 0, 0
	for i := p.cursor; i < len(p.apps) && rank < half && seen < okShapes; i = p.nextLive(i + 1) {
		g := &p.apps[i]
		if !g.sh.ok {
			continue
		}
		rank++
		if g.sh.seen == p.round {
			continue // an earlier application of its shape scores the same
		}
		g.sh.seen = p.round
		seen++
		if best == nil || g.sh.app < best.sh.app {
			best, bestRank = g, rank
		}
	}
	return best, bestRank
}

// nextLive is the position of the first application at or after i that
// is not done (len(p.apps) if none). The gang placed in a round is the
// best-scored candidate, not the first, so done applications pile up
// between pending ones; the candidate walk of every round stepped over
// each of them again. Each application's next skips the run of done ones
// after it, shortened on every walk (path compression), so a walk costs
// about the candidates it meets.
func (p *gangPath) nextLive(i int) int {
	j := i
	for j < len(p.apps) && p.apps[j].done {
		j = int(p.apps[j].next)
	}
	for i < j {
		nx := int(p.apps[i].next)
		p.apps[i].next = int32(j)
		i = nx
	}
	return j
}

// placeGang offers the chosen application's E executors on its E best
// agents. A framework with refuse filters gets its own selection that
// skips the agents it filtered; if fewer than E remain it waits for the
// next cycle.
func (p *gangPath) placeGang(g *gangApp) {
	g.done = true
	if g.sh.counted {
		p.ranks.add(int(g.at), -1)
	}
	s := g.sh
	s.pending--
	p.need -= s.d.Executors
	best, norms := s.best, s.norms
	if g.f.nfilters > 0 {
		res := exec(s.d)
		accept := func(i int) bool { return !p.a.blocked(g.f, p.ags[i], res) }
		s.kept = false // the walk below may rescore entries past s.best
		p.sel, p.selNorms = p.selectE(s, accept, p.sel[:0], p.selNorms[:0])
		if len(p.sel) < s.d.Executors {
			return
		}
		best, norms = p.sel, p.selNorms
	}
	score := p.appScore(norms)
	res := exec(s.d)
	if a := p.a; cap(a.out)-len(a.out) < len(best) {
		// Growing the offers from nothing by append copied them ~log2(n)
		// times; room for every executor still pending cleared far more
		// than a full cluster places. So: at first room for as many more
		// as there are agents, then doubling, never beyond the pending
		// executors; a cycle that places nothing allocates nothing.
		more := min(p.need, max(len(p.ags), cap(a.out)))
		if cap(a.out) == 0 && p.need > len(p.ags) {
			// more executors pending than agents: room for as many as can
			// fit at all, in one allocation rather than three or four
			more = min(p.need, p.room())
		}
		out := make([]Offer, len(a.out), len(a.out)+len(best)+more)
		copy(out, a.out)
		a.out = out
	}
	for _, i := range best {
		ag := p.ags[i]
		p.a.grant(g.f, ag, res, 1)
		p.a.trace(g.f, ag, res, score)
		r := p.a.reason(score)
		r.Why = p.reasonText
		p.a.out = append(p.a.out, Offer{Framework: g.f.id, Agent: ag.id, Resources: res.Clone(), Tasks: 1, Reason: r, Role: g.f.role})
		p.note(int(i), s)
	}
}

// room bounds how many more executors of the cycle's shapes the agents
// can take: per agent, its cpus and its memory over the smallest cpus and
// memory of any shape (an executor of any shape needs at least those),
// plus one against rounding. It sizes the cycle's offers; decisions never
// read it, and an offer past it would only grow them again.
func (p *gangPath) room() int {
	var minC, minM float64
	for k, s := range p.shapeList {
		c, m := s.exec[resources.CPUs].Units(), s.exec[resources.Mem].Units()
		if k == 0 || c < minC {
			minC = c
		}
		if k == 0 || m < minM {
			minM = m
		}
	}
	if !(minC > 0 || minM > 0) {
		return p.need
	}
	n := 0
	for _, ag := range p.ags {
		fit := math.MaxInt32
		if minC > 0 {
			fit = min(fit, int(ag.avail.Scalars[resources.CPUs].Units()/minC)+1)
		}
		if minM > 0 {
			fit = min(fit, int(ag.avail.Scalars[resources.Mem].Units()/minM)+1)
		}
		if n += fit; n >= p.need {
			return p.need
		}
	}
	return n
}
