package allocator

import (
	"fmt"
	"math"
	"sort"
	"time"

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
	if !(p.DeadlineFactor >= 0) || math.IsInf(p.DeadlineFactor, 0) {
		return fmt.Errorf("gang: deadline factor %v must be a finite number >= 0", p.DeadlineFactor)
	}
	return nil
}

// SetAppDemand declares framework's application: E executors of cpus/mem
// each, following d.Profile from their launch. From then on only the gang
// path serves the framework: one gang of E executor-sized offers on
// distinct agents, after which it gets nothing until it declares again
// (a framework whose gang was declined declares again to ask anew). The
// zero AppDemand withdraws the declaration (as ClearAppDemand). It needs a
// gang criterion (prophet, tetris-peak).
func (a *Allocator) SetAppDemand(framework string, d profile.AppDemand) error {
	if d.Executors == 0 && d.Cpus == 0 && d.Mem == 0 && len(d.Profile.Stages) == 0 {
		return a.ClearAppDemand(framework)
	}
	f, err := a.framework(framework)
	if err != nil {
		return fmt.Errorf("set app demand: %w", err)
	}
	if _, ok := a.crit.(sorter.Gang); !ok {
		return fmt.Errorf("set app demand for %q: sorter %q does not place applications; use prophet or tetris-peak", framework, a.crit.Name())
	}
	if err := d.Validate(); err != nil {
		return fmt.Errorf("set app demand for %q: %w", framework, err)
	}
	c := cloneDemand(d)
	a.leaveSets(f)
	f.app = &c
	a.frameworkChanged(f)
	a.tell(event{kind: evAppDemandSet, framework: framework, app: &c})
	return nil
}

// ClearAppDemand withdraws framework's application demand: it is served by
// its declared task demand or whole agents again, and its pending gang, if
// any, is forgotten. Executors already placed stay on their timelines until
// their resources are recovered.
func (a *Allocator) ClearAppDemand(framework string) error {
	f, err := a.framework(framework)
	if err != nil {
		return fmt.Errorf("clear app demand: %w", err)
	}
	a.leaveSets(f)
	f.app = nil
	a.frameworkChanged(f)
	if len(a.models) > 0 {
		a.tell(event{kind: evAppDemandSet, framework: framework})
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
	now    time.Time
	ags    []*agent
	tls    []*agentTL
	local  map[int]*profile.Timeline // agents changed this cycle: model + this cycle's executors
	lpeak  map[int][profile.NumResources]float64
	apps   []gangApp
	shapes map[gangShape]*shapeScores
	// reasonText is the chosen application's Reason.Why
	reasonText string
	sel        []int32   // scratch: a filtered selection
	selNorms   []float64 // its scores
}

var _ filler = (*gangPath)(nil)

// gangApp is one pending application this cycle.
type gangApp struct {
	f    *framework
	rec  *appRec
	sh   *shapeScores
	done bool
}

// gangShape identifies applications that score alike on every agent: the
// same E, cpus, mem and profile (the profile by its first stage's address
// would be unsafe across declarations, so by value, as a string).
type gangShape struct {
	e         int
	cpus, mem float64
	prof      string
}

// shapeScores caches a shape's score on each agent for one cycle; an
// agent's entry is stale when its version changed (a placement this cycle).
type shapeScores struct {
	d     *profile.AppDemand
	score []float64
	fits  []bool
	ver   []uint64
	valid []bool
	best  []int32 // the E best agents this round, by (score, index)
	norms []float64
	ok    bool
	app   float64
	fresh bool
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
	p.now = a.clock.Now()
	p.ags, p.tls = p.ags[:0], p.tls[:0]
	for _, ag := range a.agents {
		if ag != nil {
			p.ags = append(p.ags, ag)
			p.tls = append(p.tls, p.m.agents[ag.id])
		}
	}
	p.local, p.lpeak = map[int]*profile.Timeline{}, map[int][profile.NumResources]float64{}
	p.shapes = map[gangShape]*shapeScores{}
	for i := range p.apps {
		d := &p.apps[i].rec.Demand
		k := gangShape{e: d.Executors, cpus: d.Cpus, mem: d.Mem, prof: fmt.Sprint(d.Profile.Stages)}
		s := p.shapes[k]
		if s == nil {
			n := len(p.ags)
			s = &shapeScores{d: d, score: make([]float64, n), fits: make([]bool, n), ver: make([]uint64, n), valid: make([]bool, n)}
			p.shapes[k] = s
		}
		p.apps[i].sh = s
	}
	return true
}

// place repeats rounds while an application fits: score every shape's E
// best agents, choose among the candidates, place its gang.
func (p *gangPath) place() {
	for {
		for _, s := range p.shapes {
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
// deadlines.
func (p *gangPath) choose() *gangApp {
	nFit := 0
	for i := range p.apps {
		g := &p.apps[i]
		if !g.done && p.evaluate(g.sh).ok {
			nFit++
		}
	}
	if nFit == 0 {
		return nil
	}
	half := nFit
	prophet := p.rule == sorter.GangProphet
	if prophet {
		half = int(math.Ceil(p.p.Fraction * float64(nFit)))
	}
	var best *gangApp
	bestOver := false
	rank := 0
	nowNs := p.now.UnixNano()
	for i := range p.apps {
		g := &p.apps[i]
		if g.done || !g.sh.ok {
			continue
		}
		rank++
		over := prophet && g.rec.Deadline != 0 && nowNs >= g.rec.Deadline
		if rank > half && !over {
			continue
		}
		switch {
		case best == nil, over && !bestOver:
		case bestOver && !over:
			continue
		case over: // both overdue: earliest deadline (apps are in arrival order)
			if g.rec.Deadline >= best.rec.Deadline {
				continue
			}
		default:
			if g.sh.app >= best.sh.app {
				continue
			}
		}
		best, bestOver = g, over
		p.why(g, over, rank, half, nFit)
	}
	return best
}

// why records, on the chosen application's shape scratch, the reason text.
func (p *gangPath) why(g *gangApp, over bool, rank, half, nFit int) {
	switch {
	case p.rule != sorter.GangProphet:
		p.reasonText = fmt.Sprintf("tetris-peak: best alignment of %d fitting applications", nFit)
	case over:
		p.reasonText = fmt.Sprintf("deadline passed %v ago", time.Duration(p.now.UnixNano()-g.rec.Deadline))
	default:
		p.reasonText = fmt.Sprintf("candidate half (%d of the %d longest-waiting of %d fitting)", rank, half, nFit)
	}
}

// evaluate brings s's per-agent scores up to date and selects its E best
// fitting agents (lowest score, then lowest index), once per round.
func (p *gangPath) evaluate(s *shapeScores) *shapeScores {
	if s.fresh {
		return s
	}
	s.fresh = true
	s.best, s.norms = s.best[:0], s.norms[:0]
	for i, ag := range p.ags {
		v := p.version(i)
		if !s.valid[i] || s.ver[i] != v {
			s.fits[i] = p.fits(s.d, ag, i)
			if s.fits[i] {
				s.score[i] = p.score(s.d, ag, i)
			}
			s.ver[i], s.valid[i] = v, true
		}
		if s.fits[i] {
			s.best, s.norms = insertBest(s.best, s.norms, s.d.Executors, int32(i), s.score[i])
		}
	}
	s.ok = len(s.best) == s.d.Executors
	if s.ok {
		s.app = p.appScore(s.norms)
	}
	return s
}

// version is agent i's state as the scores see it: its avail (allocator)
// and its timeline (model, plus this cycle's placements).
func (p *gangPath) version(i int) uint64 {
	v := uint64(p.ags[i].version) << 32
	if tl := p.tls[i]; tl != nil {
		v += tl.ver
	}
	return v
}

// appScore combines E per-agent scores. tetris-peak's are negated
// alignments, combined by the mean whatever Combine says.
func (p *gangPath) appScore(norms []float64) float64 {
	if p.rule != sorter.GangProphet {
		return profile.AppScore(profile.CombineMean, norms)
	}
	return profile.AppScore(p.p.Combine, norms)
}

// insertBest keeps best (agent indices) and their scores sorted by (score,
// index), at most e long.
func insertBest(best []int32, sc []float64, e int, i int32, v float64) ([]int32, []float64) {
	if len(best) == e && !(v < sc[e-1]) {
		return best, sc // ties keep the lower index, met first
	}
	j := sort.Search(len(sc), func(k int) bool { return sc[k] > v })
	if len(best) < e {
		best, sc = append(best, 0), append(sc, 0)
	}
	copy(best[j+1:], best[j:len(best)-1])
	copy(sc[j+1:], sc[j:len(sc)-1])
	best[j], sc[j] = i, v
	return best, sc
}

// exec is one executor's reservation: cpus and mem.
func exec(d *profile.AppDemand) resources.Resources {
	var v resources.Vector
	v[resources.CPUs], _ = resources.QuantityFromFloat(d.Cpus)
	v[resources.Mem], _ = resources.QuantityFromFloat(d.Mem)
	return resources.Resources{Scalars: v}
}

// fits: the executor's cpus and mem fit on agent i; tetris-peak also needs
// its lifetime bandwidth peaks to fit under the agent's capacity less the
// peaks already placed there (an agent that advertises none of a
// bandwidth takes no executor that needs it).
func (p *gangPath) fits(d *profile.AppDemand, ag *agent, i int) bool {
	if !ag.avail.Scalars.Contains(exec(d).Scalars) {
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
		if pk := peakOf(&d.Profile, r); pk > 0 && used[r]+pk > tl.tl.Capacity(r)+1e-9 {
			return false
		}
	}
	return true
}

func (p *gangPath) peaks(i int) [profile.NumResources]float64 {
	used := p.tls[i].peak
	if l, ok := p.lpeak[i]; ok {
		for r := range used {
			used[r] += l[r]
		}
	}
	return used
}

// score is the executor's score on agent i, lower better: Prophet's norm
// against the timeline (0 on an agent the model does not know), or
// tetris-peak's negated alignment of the four peaks with what is free.
func (p *gangPath) score(d *profile.AppDemand, ag *agent, i int) float64 {
	tl := p.tls[i]
	if tl == nil {
		return 0
	}
	if p.rule == sorter.GangProphet {
		t := tl.tl
		if l := p.local[i]; l != nil {
			t = l
		}
		return t.Score(p.now, &d.Profile, p.p.Score).Norm
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
			s += peakOf(&d.Profile, r) / c * (c - used[r]) / c
		}
	}
	return -s
}

// placeGang offers the chosen application's E executors on its E best
// agents. A framework with refuse filters gets its own selection that
// skips the agents it filtered; if fewer than E remain it waits for the
// next cycle.
func (p *gangPath) placeGang(g *gangApp) {
	g.done = true
	s := g.sh
	best, norms := s.best, s.norms
	if g.f.nfilters > 0 {
		res := exec(s.d)
		p.sel, p.selNorms = p.sel[:0], p.selNorms[:0]
		for i, ag := range p.ags {
			if s.fits[i] && !p.a.blocked(g.f, ag, res) {
				p.sel, p.selNorms = insertBest(p.sel, p.selNorms, s.d.Executors, int32(i), s.score[i])
			}
		}
		if len(p.sel) < s.d.Executors {
			return
		}
		best, norms = p.sel, p.selNorms
	}
	score := p.appScore(norms)
	res := exec(s.d)
	for _, i := range best {
		ag := p.ags[i]
		p.a.grant(g.f, ag, res, 1)
		p.a.trace(g.f, ag, res, score)
		r := p.a.reason(score)
		r.Why = p.reasonText
		p.a.out = append(p.a.out, Offer{Framework: g.f.id, Agent: ag.id, Resources: res.Clone(), Tasks: 1, Reason: r})
		p.note(int(i), s.d)
	}
}

// note adds an executor placed this cycle to agent i's scratch timeline
// and peaks, so the rest of the cycle scores against it.
func (p *gangPath) note(i int, d *profile.AppDemand) {
	tl := p.tls[i]
	if tl == nil {
		return
	}
	l := p.local[i]
	if l == nil {
		l, _ = profile.NewTimeline(tl.tl.Capacity(profile.Disk), tl.tl.Capacity(profile.Net))
		for _, x := range tl.execs {
			_ = l.Add(x.Key, time.Unix(0, x.Launch), &x.Profile)
		}
		p.local[i] = l
	}
	_ = l.Add(fmt.Sprintf("cycle/%d", l.Len()), p.now, &d.Profile)
	pk := p.lpeak[i]
	for r := range pk {
		pk[r] += peakOf(&d.Profile, profile.Resource(r))
	}
	p.lpeak[i] = pk
	// grant bumped the agent's version, so every shape rescores it
}
