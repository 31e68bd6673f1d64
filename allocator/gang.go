package allocator

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/allot-sched/allot/internal/heapq"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// GangParams parameterise the gang criteria (prophet, tetris-peak).
type GangParams struct {
	// Score holds eta and the normalisation across disk and network.
	Score profile.Options
	// Combine turns the E per-agent scores into the application's.
	Combine profile.Combine
	// Fraction is the longest-waiting fraction of the pending applications
	// that fit which are candidates each round, in (0, 1].
	Fraction float64
	// DeadlineFactor: an application's deadline is its arrival plus this
	// times the mean wait of the applications placed before it arrived.
	DeadlineFactor float64
	// DeadlineMean is whose mean wait the deadline multiplies.
	DeadlineMean DeadlineMean
}

// DeadlineMean says which waits "the current average waiting time" of
// the paper's deadline rule averages. The paper assigns each application
// a deadline when it arrives, "according to current average waiting time
// (e.g. three times of its average)", for "starvation avoidance", and
// says no more.
type DeadlineMean int

const (
	// DeadlinePlaced averages the waits (declaration to first offer) of
	// the applications placed so far. In a backlog that grows, as the
	// paper's 90 applications in 1200 s, those waits lag the waits ahead:
	// the early applications, placed at once, pull the mean towards zero,
	// and deadlines expire within seconds of arrival.
	DeadlinePlaced DeadlineMean = iota
	// DeadlinePending averages how long the applications still waiting
	// at the arrival have waited so far: the queue's current average
	// waiting time. With none waiting (or all just arrived) there is no
	// deadline, as before the first placement under DeadlinePlaced.
	DeadlinePending
)

func (d DeadlineMean) String() string {
	switch d {
	case DeadlinePlaced:
		return "placed"
	case DeadlinePending:
		return "pending"
	}
	return fmt.Sprintf("DeadlineMean(%d)", int(d))
}

// DefaultGangParams are the paper's: eta 0.3, raw areas, the mean of the E
// scores, the longest-waiting half, deadlines at 3x the mean wait.
func DefaultGangParams() GangParams {
	return GangParams{Score: profile.PaperOptions, Combine: profile.CombineMean, Fraction: 0.5, DeadlineFactor: 3}
}

// Validate reports a parameter out of range.
func (p GangParams) Validate() error {
	if err := p.Score.Validate(); err != nil {
		return err
	}
	if p.Combine != profile.CombineMean && p.Combine != profile.CombineSum && p.Combine != profile.CombineMax {
		return fmt.Errorf("gang: unknown combine %v", p.Combine)
	}
	if !(p.Fraction > 0 && p.Fraction <= 1) {
		return fmt.Errorf("gang: fraction %v is not in (0, 1]", p.Fraction)
	}
	if p.DeadlineMean != DeadlinePlaced && p.DeadlineMean != DeadlinePending {
		return fmt.Errorf("gang: unknown deadline mean %v", p.DeadlineMean)
	}
	if !(p.DeadlineFactor >= 0) || math.IsInf(p.DeadlineFactor, 0) {
		return fmt.Errorf("gang: deadline factor %v must be a finite number >= 0", p.DeadlineFactor)
	}
	return nil
}

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
	m := newTimelines(params.DeadlineFactor)
	m.mean = params.DeadlineMean
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
	m    *timelines
	rule sorter.GangRule
	p    GangParams
	next filler

	// per cycle
	now time.Time
	ags []*agent
	tls []*agentTL
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
	rec  *appRec
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

// shapeKey encodes stages exactly (offsets and the bits of the peaks): a
// key equal for equal profiles, as their text was, at a fraction of the
// cost of formatting them, which every declaration pays.
func shapeKey(stages []profile.Stage) string {
	b := make([]byte, 0, 32*len(stages))
	for _, st := range stages {
		b = binary.LittleEndian.AppendUint64(b, uint64(st.Start))
		b = binary.LittleEndian.AppendUint64(b, uint64(st.End))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(st.DiskBW))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(st.NetBW))
	}
	return string(b)
}

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
		if r := p.m.apps[f.id]; r != nil && r.Pending {
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
			p.tls = append(p.tls, p.m.agents[ag.id])
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
	if p.apps[i].rec.shape == "" {
		p.apps[i].rec.shape = shapeKey(d.Profile.Stages)
	}
	k := gangShape{e: d.Executors, cpus: d.Cpus, mem: d.Mem, prof: p.apps[i].rec.shape}
	s := p.shapes[k]
	if s == nil {
		s = p.newShape(d)
		s.prep = p.apps[i].rec.prepared() // equal stages, equal preparation
		s.idx = int32(len(p.shapeList))
		p.shapes[k] = s
		p.shapeList = append(p.shapeList, s)
	}
	if r := p.apps[i].rec; r.prep == nil {
		// Applications of one shape have equal stages, to the bit
		// (shapeKey), and so equal preparations: the model's offered
		// takes this one instead of preparing each declaration anew
		// (the same pointer sharing as among one declaration's
		// executors; nothing writes a Prepared).
		r.prep = s.prep
	}
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
		c := tl.tl.Capacity(r)
		if pk := min(peakOf(&d.Profile, r), c); pk > 0 && used[r]+pk > c+1e-9 {
			return false
		}
		if c == 0 && peakOf(&d.Profile, r) > 0 {
			return false
		}
	}
	return true
}

func (p *gangPath) peaks(i int) [profile.NumResources]float64 {
	used := p.tls[i].peak
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
			return p.prophetScore(sh, tl.tl)
		}
		if !memoPlaced {
			return p.prophetScore(sh, l)
		}
		v, ok, slot := p.memo.lookup(i, sh.idx)
		if ok {
			return v
		}
		if p.memo.memoised(i) {
			l = p.memo.timeline(i, tl.tl, p.now, p.shapePrep)
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
		if c := tl.tl.Capacity(r); c > 0 {
			s += min(peakOf(&d.Profile, r), c) / c * (c - used[r]) / c
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
		p.a.out = append(p.a.out, Offer{Framework: g.f.id, Agent: ag.id, Resources: res.Clone(), Tasks: 1, Reason: r})
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
		p.memo.placed(i, tl.tl, p.now, s.idx)
	}
	l := p.local[i]
	switch {
	case memo && p.memo.memoised(i):
		// its executors live in its memo state (placedMemo.timeline);
		// p.local[i] only marks the agent as changed this cycle
		if l == nil {
			p.local[i] = tl.tl
		}
	default:
		if l == nil {
			l = tl.tl.Clone()
			p.local[i] = l
		}
		_ = l.AddPrepared(cycleKey(l.Len()), p.now, s.prep)
	}
	pk := p.lpeak[i]
	for r := range pk {
		pk[r] += tl.reserve(&d.Profile, profile.Resource(r))
	}
	p.lpeak[i] = pk
	// grant bumped the agent's version, so every shape rescores it
}
