package allocator

import (
	"sort"

	"fmt"
	"github.com/allot-sched/allot/allocator/policy/bandit"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// progBandit is progressive filling for the co-location bandit
// (sorter.CoLocating): agents are visited in rounds of random
// permutations, as progRRR, and on each visit one task's worth goes to
//
//  1. the first job already placed (holding resources anywhere, or offered
//     any since it registered: a job between two stages has started) that
//     still wants tasks, fits the agent and does not refuse it, in queue
//     order (registration order): a job that started is served before
//     any other starts, as the paper's queue runs a job on all the
//     containers it asked for; else
//  2. a job drawn among the first n queued jobs (holding nothing) that fit
//     the agent and do not refuse it: a type is drawn with the pooled
//     softmax over the rows of the agent's resident types
//     (sorter.Preferences.Policy) times the wait weight of that type's
//     first candidate (bandit.Config.WaitScale), renormalised, with a
//     uniform number from the allocator's seeded source; that first
//     candidate of the drawn type is placed, the draw recorded as the
//     agent's decision (policy/bandit) and the job counts as placed from then
//     on.
//
// Frameworks without a declared demand are served by the whole-agent path
// in FIFO order, as the sets are kept in queue order (rank byKey{FIFO}).
type progBandit struct {
	a      *Allocator
	m      *bandit.Model
	window int
	// per cycle: the frameworks that want tasks, placed and queued, each
	// in queue order
	placed, queued []int32
	// scratch for a draw
	cand  []*framework
	types []string
	res   []string
	probs []float64
}

var _ filler = (*progBandit)(nil)

// chooseBanditPath is choosePath for a CoLocating criterion.
func (a *Allocator) chooseBanditPath(crit sorter.CoLocating) error {
	if a.cfg.Mode != Characterized {
		return fmt.Errorf("allocator: sorter %q starts jobs by their declared task counts and needs characterized mode", crit.Name())
	}
	if a.cfg.AgentSelection != sorter.RRR {
		return fmt.Errorf("allocator: sorter %q draws the job for each agent itself; use rrr agent selection, not %v", crit.Name(), a.cfg.AgentSelection)
	}
	a.rank = byKey{sorter.FIFO{}} // the sets are the queue, in order
	m := bandit.New(a.cfg.Bandit)
	a.addModel(m)
	p := &progBandit{a: a, m: m, window: a.cfg.Bandit.WindowOrDefault()}
	a.path = characterized{a: a, tasks: p, wholeAgents: a.wholeAgentPath(crit)}
	return nil
}

func (p *progBandit) fill() {
	p.collect()
	if p.a.cfg.Bandit.Chunk > 1 {
		visitRRR(p.a, p.pickChunk)
		return
	}
	visitRRR(p.a, p.pick)
}

// pickChunk is pick that places up to Chunk-1 more tasks of the picked job
// on ag itself, leaving the last one to visitRRR; it stops where the next
// task would not fit or would exceed what the job wants, so visitRRR's own
// placement always fits.
func (p *progBandit) pickChunk(ag *agent) candidate {
	c := p.pick(ag)
	for k := 1; c.f != nil && k < p.a.cfg.Bandit.Chunk; k++ {
		f := c.f
		if (f.want >= 0 && f.want < 2) || !ag.avail.Scalars.Contains(f.task.Times(2)) ||
			p.a.blocked(f, ag, resources.Resources{Scalars: f.task.Times(2)}) {
			break
		}
		p.a.place(c)
	}
	return c
}

// collect splits the frameworks that want tasks into placed and queued.
func (p *progBandit) collect() {
	a := p.a
	p.placed, p.queued = p.placed[:0], p.queued[:0]
	for _, s := range a.active {
		for _, n := range s.set.items {
			if f := a.fws[n]; f.alloc.Scalars != (resources.Vector{}) || p.m.Started(f.id) {
				p.placed = append(p.placed, n)
			} else {
				p.queued = append(p.queued, n)
			}
		}
	}
	slices.Sort(p.placed)
	slices.Sort(p.queued)
}

func (p *progBandit) pick(ag *agent) candidate {
	if c := p.firstPlaced(ag); c.f != nil {
		return c
	}
	return p.draw(ag)
}

// fits reports whether one task of f fits on ag and f does not refuse it.
func (p *progBandit) fits(f *framework, ag *agent) bool {
	return ag.avail.Scalars.Contains(f.task) && !p.a.blocked(f, ag, resources.Resources{Scalars: f.task})
}

// firstPlaced is rule 1; it drops frameworks that no longer want tasks.
func (p *progBandit) firstPlaced(ag *agent) candidate {
	a := p.a
	w := 0
	var found *framework
	for i, n := range p.placed {
		f := a.fws[n]
		if f == nil || f.shape < 0 {
			continue // its demand is met
		}
		p.placed[w] = n
		w++
		if p.fits(f, ag) {
			found = f
			w += copy(p.placed[w:], p.placed[i+1:])
			break
		}
	}
	p.placed = p.placed[:w]
	if found == nil {
		return candidate{}
	}
	return candidate{f: found, ag: ag, score: float64(found.idx)}
}

// draw is rule 2. The score it reports is minus the drawn type's
// probability.
func (p *progBandit) draw(ag *agent) candidate {
	a := p.a
	p.cand, p.types = p.cand[:0], p.types[:0]
	for _, n := range p.queued {
		if len(p.cand) == p.window {
			break
		}
		if f := a.fws[n]; f != nil && f.shape >= 0 && p.fits(f, ag) {
			p.cand = append(p.cand, f)
			p.types = append(p.types, p.m.TypeOf(f.id))
		}
	}
	if len(p.cand) == 0 {
		return candidate{}
	}
	p.res = a.residentTypes(p.m, ag, p.res)
	rows, setRows := p.res, []string(nil)
	if a.cfg.Bandit.ResidentSet && len(p.res) > 0 {
		setRows = []string{strings.Join(p.res, "+")} // sorted: one key per set
		rows = setRows
	}
	types, probs := p.m.Prefs().Policy(rows, p.types)
	now := a.clock.Now()
	sum := 0.0
	for i, t := range types {
		probs[i] *= p.waitWeight(p.firstOfType(t), now)
		sum += probs[i]
	}
	for i := range probs {
		probs[i] /= sum
	}
	i := sorter.Draw(probs, a.rng.Float64())
	f := p.firstOfType(types[i])
	p.m.Decide(ag.id, bandit.Decision{At: now.UnixNano(), Framework: f.id, Type: types[i],
		Residents: slices.Clone(p.res), Rows: setRows, Window: types})
	p.queued = slices.DeleteFunc(p.queued, func(n int32) bool { return n == f.idx })
	at, _ := slices.BinarySearch(p.placed, f.idx)
	p.placed = slices.Insert(p.placed, at, f.idx)
	return candidate{f: f, ag: ag, score: -probs[i]}
}

// firstOfType is the first candidate of type t.
func (p *progBandit) firstOfType(t string) *framework {
	for i, ct := range p.types {
		if ct == t {
			return p.cand[i]
		}
	}
	return nil
}

// waitWeight is 1 + wait/WaitScale, 1 when the weight is off.
func (p *progBandit) waitWeight(f *framework, now time.Time) float64 {
	scale := p.a.cfg.Bandit.WaitScale
	if scale < 0 {
		return 1
	}
	if scale == 0 {
		scale = bandit.DefaultWaitScale
	}
	added, ok := p.m.Added(f.id)
	if !ok || now.Before(added) {
		return 1
	}
	return 1 + math.Max(0, float64(now.Sub(added))/float64(scale))
}

// residentTypes returns the distinct job types holding resources on ag,
// sorted (so that the pooled logits sum in one order on every replica).
func (a *Allocator) residentTypes(m *bandit.Model, ag *agent, buf []string) []string {
	buf = buf[:0]
	for _, h := range ag.holds {
		t := m.TypeOf(a.fws[h.fw].id)
		dup := false
		for _, s := range buf {
			if s == t {
				dup = true
				break
			}
		}
		if !dup {
			buf = append(buf, t)
		}
	}
	sort.Strings(buf)
	return buf
}
