package allocator

import (
	"reflect"
	"strings"
	"testing"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// history gives fx a state worth carrying: weights, two frameworks with
// demands and one without, a suppressed one, tasks held, and a decline
// filter that is still live.
func history(fx *fixture) {
	fx.t.Helper()
	fx.agent("s1", "cpus:8;mem:16384").agent("s2", "cpus:8;mem:16384").agent("s3", "cpus:4;mem:4096")
	fx.framework("a", "r1").framework("b", "r2").framework("c", "r1").framework("d", "r3")
	if err := fx.a.SetWeights(map[string]float64{"r2": 2}); err != nil {
		fx.t.Fatal(err)
	}
	fx.demand("a", "cpus:1;mem:1024", 5).demand("b", "cpus:2;mem:512", -1)
	if err := fx.a.Suppress("d"); err != nil {
		fx.t.Fatal(err)
	}
	out := fx.cycle()
	// c declines what it got for 60 s; the rest keep theirs (accepted).
	var declined []Offer
	for _, o := range out {
		if o.Framework == "c" {
			declined = append(declined, o)
		}
	}
	fx.decline(declined, 60)
	fx.clk.Advance(2e9)
}

// Switching to the same policy changes nothing: the next cycles of the
// switched allocator are the old allocator's, offer for offer. Selections
// without randomness (bestfit, joint) make the cycles comparable; rrr draws
// from a fresh source after a switch.
func TestReconfigureSamePolicyIsInvisible(t *testing.T) {
	for _, cfg := range validPolicies() {
		if cfg.AgentSelection == sorter.RRR || cfg.Sorter.Name() == "random" {
			continue
		}
		name := cfg.Sorter.Name() + "/" + cfg.AgentSelection.String() + "/" + cfg.Mode.String()
		t.Run(name, func(t *testing.T) {
			fx := newFixture(t, cfg)
			history(fx)
			b, dropped, err := fx.a.Reconfigure(Reconfiguration{Sorter: cfg.Sorter, AgentSelection: cfg.AgentSelection, Mode: cfg.Mode})
			if err != nil || len(dropped) > 0 {
				t.Fatalf("Reconfigure: %v, dropped %v", err, dropped)
			}
			checkInvariants(t, b)
			for _, id := range fx.a.Frameworks() {
				fa, _ := fx.a.Framework(id)
				fb, _ := b.Framework(id)
				if !reflect.DeepEqual(fa, fb) {
					t.Errorf("framework %s: before %+v, after %+v", id, fa, fb)
				}
			}
			for i := 0; i < 3; i++ {
				want, gotOut := got(fx.cycle()), got(b.Allocate().Offers)
				checkInvariants(t, b)
				if !reflect.DeepEqual(want, gotOut) {
					t.Fatalf("cycle %d: old allocator offers %v, switched one %v", i, want, gotOut)
				}
				fx.clk.Advance(61e9) // past the filter, so later cycles see it lift in both
			}
		})
	}
}

// A switch keeps holdings and filters and takes effect at the next cycle:
// under fifo the first-registered framework that wants something is served
// first, and the declined framework is still refused until its filter ends.
func TestReconfigureSwitchesCriterion(t *testing.T) {
	drf, _ := sorter.Lookup("drf")
	fx := newFixture(t, Config{Sorter: drf, AgentSelection: sorter.BestFit, Mode: Oblivious})
	fx.agent("s1", "cpus:4;mem:4096").agent("s2", "cpus:4;mem:4096")
	fx.framework("a", "*").framework("b", "*").framework("c", "*")
	out := fx.cycle() // drf: a and b get one agent each
	var cOffers, rest []Offer
	for _, o := range out {
		if o.Framework == "a" {
			cOffers = append(cOffers, o)
		} else {
			rest = append(rest, o)
		}
	}
	fx.decline(cOffers, 60) // a refuses its agent for a minute
	fx.decline(rest, -1)    // the other offer comes back with no filter
	fifo, _ := sorter.Lookup("fifo")
	b, dropped, err := fx.a.Reconfigure(Reconfiguration{Sorter: fifo, AgentSelection: sorter.RRR, Mode: Oblivious})
	if err != nil || len(dropped) > 0 {
		t.Fatalf("Reconfigure: %v, dropped %v", err, dropped)
	}
	if b.Config().Sorter.Name() != "fifo" || fx.a.Config().Sorter.Name() != "drf" {
		t.Fatalf("sorters: new %s, old %s", b.Config().Sorter.Name(), fx.a.Config().Sorter.Name())
	}
	refused := cOffers[0].Agent
	if why := b.Explain("a", refused); !strings.Contains(why, "filter") {
		t.Errorf("the decline filter did not survive the switch: %s", why)
	}
	offers := got(b.Allocate().Offers)
	checkInvariants(t, b)
	var free string
	for _, ag := range []string{"s1", "s2"} {
		if ag != refused {
			free = ag
		}
	}
	if len(offers) != 2 || offers["a@"+free] == "" || offers["b@"+refused] == "" {
		t.Errorf("fifo after the switch offered %v; want a (first registered) on %s and b on %s (a refuses it)", offers, free, refused)
	}
}

// A switch the allocator cannot make (bestfit needs an agent-independent
// sorter) fails and leaves nothing half done.
func TestReconfigureRefusesBadCombination(t *testing.T) {
	drf, _ := sorter.Lookup("drf")
	fx := newFixture(t, Config{Sorter: drf, AgentSelection: sorter.RRR, Mode: Oblivious})
	fx.agent("s1", "cpus:4;mem:4096").framework("a", "*")
	fx.cycle()
	psdsf, _ := sorter.Lookup("psdsf")
	if _, _, err := fx.a.Reconfigure(Reconfiguration{Sorter: psdsf, AgentSelection: sorter.BestFit, Mode: Oblivious}); err == nil || !strings.Contains(err.Error(), "bestfit") {
		t.Fatalf("psdsf with bestfit: err = %v, want the reason", err)
	}
	if st, _ := fx.a.Framework("a"); !st.Allocated.Equal(resources.MustParse("cpus:4;mem:4096")) {
		t.Errorf("the old allocator changed: a holds %s", st.Allocated)
	}
}
