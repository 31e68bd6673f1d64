package allocator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// liveFilter is the test's own record of a decline with a filter.
type liveFilter struct {
	fw, agent string
	res       resources.Resources
	until     time.Time
}

// driver plays a random but seeded master against an allocator and checks
// the properties of every cycle against its own model of filters and
// suppression.
type driver struct {
	t        testing.TB
	rng      *rand.Rand
	fx       *fixture
	mode     Mode
	agents   []string
	fws      []string
	filters  []liveFilter
	suppress map[string]bool
	holds    []Offer // offers accepted and still held
	log      []string
	ids      int
}

func (d *driver) newID(prefix string) string {
	d.ids++
	return fmt.Sprintf("%s%d", prefix, d.ids)
}

func newDriver(t testing.TB, cfg Config, seed uint64) *driver {
	cfg.Seed = seed
	d := &driver{t: t, rng: rand.New(rand.NewPCG(seed, 99)), fx: newFixture(t, cfg), mode: cfg.Mode, suppress: map[string]bool{}}
	return d
}

var propertyAgents = []string{"cpus:4;mem:4096", "cpus:16;mem:2048;gpus:1", "cpus:8;mem:16384;ports:[31000-31099]", "cpus:2;mem:1024;disk_bw:100"}
var propertyDemands = []string{"cpus:1;mem:512", "cpus:2;mem:256", "cpus:0.5;mem:2048", "cpus:1;gpus:1;mem:128", "cpus:3;mem:3000"}

func (d *driver) step() {
	a := d.fx.a
	switch r := d.rng.IntN(100); {
	case r < 8 || len(d.agents) == 0:
		id := d.newID("a")
		d.must(a.AddAgent(id, AgentInfo{Total: resources.MustParse(propertyAgents[d.rng.IntN(len(propertyAgents))])}))
		d.agents = append(d.agents, id)
	case r < 14 || len(d.fws) == 0:
		id := d.newID("f")
		d.must(a.AddFramework(id, []string{"a", "b"}[d.rng.IntN(2)]))
		d.fws = append(d.fws, id)
		if d.mode == Characterized && d.rng.IntN(4) > 0 {
			d.must(a.SetDemand(id, Demand{Task: resources.MustParse(propertyDemands[d.rng.IntN(len(propertyDemands))]), Tasks: d.rng.IntN(12) - 2}))
		}
	case r < 16 && len(d.agents) > 1:
		i := d.rng.IntN(len(d.agents))
		id := d.agents[i]
		d.must(a.RemoveAgent(id))
		d.agents = append(d.agents[:i], d.agents[i+1:]...)
		d.dropHolds(func(o Offer) bool { return o.Agent == id })
		d.dropFilters(func(f liveFilter) bool { return f.agent == id })
	case r < 18 && len(d.fws) > 1:
		i := d.rng.IntN(len(d.fws))
		id := d.fws[i]
		d.must(a.RemoveFramework(id))
		d.fws = append(d.fws[:i], d.fws[i+1:]...)
		d.dropHolds(func(o Offer) bool { return o.Framework == id })
		d.dropFilters(func(f liveFilter) bool { return f.fw == id })
	case r < 23:
		id := d.fws[d.rng.IntN(len(d.fws))]
		d.must(a.Suppress(id))
		d.suppress[id] = true
	case r < 28:
		id := d.fws[d.rng.IntN(len(d.fws))]
		d.must(a.Revive(id))
		delete(d.suppress, id)
		d.dropFilters(func(f liveFilter) bool { return f.fw == id })
	case r < 32 && d.mode == Characterized:
		id := d.fws[d.rng.IntN(len(d.fws))]
		d.must(a.SetDemand(id, Demand{Task: resources.MustParse(propertyDemands[d.rng.IntN(len(propertyDemands))]), Tasks: d.rng.IntN(8) - 1}))
	case r < 36 && len(d.holds) > 0:
		// a held allocation finishes
		i := d.rng.IntN(len(d.holds))
		o := d.holds[i]
		d.must(a.Recover(o.Framework, o.Agent, o.Resources, nil))
		d.holds = append(d.holds[:i], d.holds[i+1:]...)
	case r < 40:
		d.fx.clk.Advance(time.Duration(d.rng.IntN(4000)) * time.Millisecond)
	case r < 42:
		d.must(a.SetWeights(map[string]float64{"a": 0.5 + 2*d.rng.Float64()}))
	default:
		d.cycle()
	}
	checkInvariants(d.t, a)
}

func (d *driver) cycle() {
	now := d.fx.clk.Now()
	d.dropFilters(func(f liveFilter) bool { return !now.Before(f.until) })
	out := d.fx.a.Allocate().Offers
	for _, o := range out {
		d.log = append(d.log, fmt.Sprintf("%s %s %s %d", o.Framework, o.Agent, o.Resources, o.Tasks))
		if d.suppress[o.Framework] {
			d.t.Fatalf("suppressed framework %s got %s on %s", o.Framework, o.Resources, o.Agent)
		}
		for _, f := range d.filters {
			if f.fw == o.Framework && f.agent == o.Agent && f.res.Contains(o.Resources) {
				d.t.Fatalf("%s filtered %s on %s until %v but got %s at %v", f.fw, f.res, f.agent, f.until, o.Resources, now)
			}
		}
		switch d.rng.IntN(3) {
		case 0: // keep it (tasks run)
			d.holds = append(d.holds, o)
		case 1: // decline with a filter
			refuse := float64(d.rng.IntN(8))
			d.must(d.fx.a.Recover(o.Framework, o.Agent, o.Resources, &Filter{RefuseSeconds: refuse}))
			if refuse > 0 {
				until := now.Add(time.Duration(math.Max(refuse, 1) * float64(time.Second)))
				d.filters = append(d.filters, liveFilter{o.Framework, o.Agent, o.Resources, until})
			}
		default: // decline without one
			d.must(d.fx.a.Recover(o.Framework, o.Agent, o.Resources, nil))
		}
	}
}

func (d *driver) must(err error) {
	d.t.Helper()
	if err != nil {
		d.t.Fatal(err)
	}
}

func (d *driver) dropHolds(drop func(Offer) bool) {
	w := 0
	for _, o := range d.holds {
		if !drop(o) {
			d.holds[w] = o
			w++
		}
	}
	d.holds = d.holds[:w]
}

func (d *driver) dropFilters(drop func(liveFilter) bool) {
	w := 0
	for _, f := range d.filters {
		if !drop(f) {
			d.filters[w] = f
			w++
		}
	}
	d.filters = d.filters[:w]
}

func policyName(cfg Config) string {
	return fmt.Sprintf("%s/%s/%s", cfg.Sorter.Name(), cfg.AgentSelection, cfg.Mode)
}

// TestPropertyRandomEvents runs seeded random event sequences through every
// accepted policy. After every event the invariants hold (nothing is ever
// allocated beyond an agent's capacity; the books balance), and every cycle
// respects filters and suppression.
func TestPropertyRandomEvents(t *testing.T) {
	steps := 400
	if testing.Short() {
		steps = 100
	}
	for _, cfg := range validPolicies() {
		t.Run(policyName(cfg), func(t *testing.T) {
			for seed := uint64(1); seed <= 4; seed++ {
				d := newDriver(t, cfg, seed)
				for i := 0; i < steps; i++ {
					d.step()
				}
			}
		})
	}
}

// TestPropertySameSeedSameOffers replays the same seeded script twice.
func TestPropertySameSeedSameOffers(t *testing.T) {
	for _, cfg := range validPolicies() {
		t.Run(policyName(cfg), func(t *testing.T) {
			run := func() []string {
				d := newDriver(t, cfg, 42)
				for i := 0; i < 300; i++ {
					d.step()
				}
				return d.log
			}
			a, b := run(), run()
			if len(a) == 0 {
				t.Fatal("no offers at all: the script exercises nothing")
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("same seed, different offers:\n%v\n%v", a, b)
			}
		})
	}
}

// TestPropertyJointFastEqualsBrute checks the per-shape heap path of joint
// selection against scoring every pair, on random clusters with filters.
func TestPropertyJointFastEqualsBrute(t *testing.T) {
	for _, name := range []string{"psdsf", "rpsdsf", "drf", "tsf", "fifo", "capacity"} {
		crit, _ := sorter.Lookup(name)
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 30; seed++ {
				run := func(brute bool) []string {
					cfg := Config{Sorter: crit, AgentSelection: sorter.Joint, Mode: Characterized, bruteForce: brute}
					d := newDriver(t, cfg, seed)
					for i := 0; i < 250; i++ {
						d.step()
					}
					return d.log
				}
				fast, brute := run(false), run(true)
				if !reflect.DeepEqual(fast, brute) {
					for i := range fast {
						if i >= len(brute) || fast[i] != brute[i] {
							t.Fatalf("seed %d: offer %d differs: fast %q, brute %q", seed, i, fast[i], brute[min(i, len(brute)-1)])
						}
					}
					t.Fatalf("seed %d: brute force made %d offers, fast %d", seed, len(brute), len(fast))
				}
			}
		})
	}
}

// TestPropertyClassOrdersEqualScan checks PS-DSF's per-capacity-class
// framework orders (oblivious offers) against scoring every framework on
// every agent.
func TestPropertyClassOrdersEqualScan(t *testing.T) {
	for _, mode := range []Mode{Oblivious, Characterized} {
		t.Run(mode.String(), func(t *testing.T) {
			for seed := uint64(1); seed <= 30; seed++ {
				run := func(brute bool) []string {
					d := newDriver(t, Config{Sorter: sorter.PSDSF{}, Mode: mode, bruteForce: brute}, seed)
					for i := 0; i < 250; i++ {
						d.step()
					}
					d.cycle()
					if on := d.fx.a.classes != nil; on == brute {
						t.Fatalf("class orders on=%v with bruteForce=%v", on, brute)
					}
					return d.log
				}
				fast, brute := run(false), run(true)
				if len(fast) == 0 || !reflect.DeepEqual(fast, brute) {
					t.Fatalf("seed %d: class orders made %d offers, scanning %d; differ", seed, len(fast), len(brute))
				}
			}
		})
	}
}

// TestPropertyDRFWithinOneTask: in characterized mode on one agent, every
// task DRF places goes to a framework whose dominant share is the smallest
// among the frameworks with unmet demand whose task fits; so right after
// each placement the served framework is within one of its tasks' share of
// every framework that could still be served.
func TestPropertyDRFWithinOneTask(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		total := resources.MustParse(fmt.Sprintf("cpus:%d;mem:%d", 16+rng.IntN(64), 8192+rng.IntN(65536)))
		fx := newFixture(t, Config{Mode: Characterized, Seed: seed})
		fx.agent("a1", total.String())
		demand := map[string]resources.Vector{}
		for i := 0; i < 2+rng.IntN(5); i++ {
			id := fmt.Sprintf("f%d", i)
			d := resources.MustParse(fmt.Sprintf("cpus:%g;mem:%d", 0.5+float64(rng.IntN(6))/2, 128*(1+rng.IntN(16))))
			fx.framework(id, "").demand(id, d.String(), -1)
			demand[id] = d.Scalars
		}
		a := fx.a
		placements := 0
		a.cfg.Trace = func(p Placement) {
			placements++
			// the trace runs after the grant: reconstruct what DRF saw
			after := map[string]float64{}
			for id := range demand {
				st, _ := a.Framework(id)
				after[id] = st.Share
			}
			ag, _ := a.Agent("a1")
			availAfter := ag.Available.Scalars
			availBefore := availAfter.Add(p.Resources.Scalars)
			chosen := p.Framework
			before := demand[chosen].Times(0)
			st, _ := a.Framework(chosen)
			before = st.Allocated.Scalars.Sub(p.Resources.Scalars)
			shareBefore := before.DominantShare(a.Total())
			one := demand[chosen].DominantShare(a.Total())
			for id, d := range demand {
				if id == chosen {
					continue
				}
				if availBefore.Contains(d) && after[id] < shareBefore-1e-12 {
					t.Fatalf("seed %d: %s (share %.4f) served while %s (share %.4f) fit", seed, chosen, shareBefore, id, after[id])
				}
				if availAfter.Contains(d) && after[chosen] > after[id]+one+1e-12 {
					t.Fatalf("seed %d: %s at %.4f is more than one task (%.4f) ahead of %s at %.4f", seed, chosen, after[chosen], one, id, after[id])
				}
			}
		}
		fx.cycle()
		if placements == 0 {
			t.Fatalf("seed %d: nothing placed", seed)
		}
	}
}
