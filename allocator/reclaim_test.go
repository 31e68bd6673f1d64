package allocator

import (
	"reflect"
	"strings"
	"testing"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// inv is an inverse offer as "holder@agent resources".
func invs(d Decisions) []string {
	var out []string
	for _, io := range d.InverseOffers {
		out = append(out, io.Framework+"@"+io.Agent+" "+io.Resources.String())
	}
	return out
}

// reclaimCase is one TestReclaim row: the events, then who starves and
// which inverse offers the cycle asks for.
type reclaimCase struct {
	name     string
	cfg      Config
	setup    func(fx *fixture)
	starving []string
	inverse  []string
}

func TestReclaim(t *testing.T) {
	cases := append(reclaimWhoStarves(t), reclaimWhoGives(t)...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runReclaimCase(t, tc) })
	}
}

// reclaimWhoStarves are the rows about which frameworks starve.
func reclaimWhoStarves(t *testing.T) []reclaimCase {
	const task = "cpus:1;mem:1024"
	return []reclaimCase{
		{name: "f1 holds the agent, f2 arrives with a demand: f1 gives one task's worth",
			cfg: Config{Mode: Characterized, Reclaim: true},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:4;mem:4096").framework("f1", "").demand("f1", task, -1)
				fx.cycle()
				fx.framework("f2", "").demand("f2", task, 2)
			},
			starving: []string{"f2"}, inverse: []string{"f1@a1 cpus:1;mem:1024"}},
		{name: "off by default: pressure is still reported, nothing asked",
			cfg: Config{Mode: Characterized},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:4;mem:4096").framework("f1", "").demand("f1", task, -1)
				fx.cycle()
				fx.framework("f2", "").demand("f2", task, 2)
			},
			starving: []string{"f2"}},
		{name: "a suppressed framework does not starve",
			cfg: Config{Mode: Characterized, Reclaim: true},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:4;mem:4096").framework("f1", "").demand("f1", task, -1)
				fx.cycle()
				fx.framework("f2", "").demand("f2", task, 2)
				if err := fx.a.Suppress("f2"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a holder that suppressed offers (it has all it asked for) still shares the cluster and is asked",
			cfg: Config{Mode: Characterized, Reclaim: true},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:2;mem:2048").framework("f1", "").demand("f1", task, 2)
				fx.cycle() // f1 holds the whole agent
				if err := fx.a.Suppress("f1"); err != nil {
					t.Fatal(err)
				}
				fx.framework("f2", "").demand("f2", task, 1)
			},
			// fair is 1/2 with f1 counted: f1 at 1 gives one task (to .5), f2 reaches .5
			starving: []string{"f2"}, inverse: []string{"f1@a1 cpus:1;mem:1024"}},
		{name: "an inactive framework does not starve",
			cfg: Config{Mode: Characterized, Reclaim: true},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:4;mem:4096").framework("f1", "").demand("f1", task, -1)
				fx.cycle()
				fx.framework("f2", "").demand("f2", task, 2)
				if err := fx.a.DeactivateFramework("f2"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "demand met (no tasks outstanding): no starvation",
			cfg: Config{Mode: Characterized, Reclaim: true},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:4;mem:4096").framework("f1", "").demand("f1", task, -1)
				fx.cycle()
				fx.framework("f2", "").demand("f2", task, 0)
			}},
	}
}

// reclaimWhoGives are the rows about which holder gives back what.
func reclaimWhoGives(t *testing.T) []reclaimCase {
	const task = "cpus:1;mem:1024"
	return []reclaimCase{
		{name: "the smallest give-back wins: part of the task is free on a2",
			cfg: Config{Mode: Characterized, Reclaim: true},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:2;mem:2048").agent("a2", "cpus:2;mem:2560").framework("f1", "").demand("f1", task, -1)
				fx.cycle() // f1 holds 2 tasks on each; a2 keeps mem:512 free
				fx.framework("f2", "").demand("f2", task, 1)
			},
			starving: []string{"f2"}, inverse: []string{"f1@a2 cpus:1;mem:512"}},
		{name: "indivisible tasks: the holder may drop below fair, never below the starving one",
			cfg: Config{Mode: Characterized, Reclaim: true},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:2;mem:2048").agent("a2", "cpus:2;mem:2048")
				fx.framework("f1", "").demand("f1", task, 2).framework("f2", "").demand("f2", task, 2)
				fx.cycle() // two each: shares .5 and .5
				fx.framework("f3", "").demand("f3", task, 1)
			},
			// fair is 1/3; f1 at .5 gives one (to .25), f3 reaches .25
			starving: []string{"f3"}, inverse: []string{"f1@a1 cpus:1;mem:1024"}},
		{name: "a holder at its fair share is not asked",
			cfg: Config{Mode: Characterized, Reclaim: true},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:2;mem:2048")
				fx.framework("f1", "").demand("f1", task, 1).framework("f2", "").demand("f2", task, 1)
				fx.cycle() // one each: shares .5 = fair
				fx.demand("f1", "cpus:1;mem:1024", 1)
				fx.demand("f2", "cpus:1;mem:1024", 1)
			},
			// both want one more at share .5 = fair: neither is below fair
		},
		{name: "two starving, one holder: asked once per agent, what it gives counts",
			cfg: Config{Mode: Characterized, Reclaim: true},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:4;mem:4096").agent("a2", "cpus:4;mem:4096").framework("f1", "").demand("f1", task, -1)
				fx.cycle()
				fx.framework("f2", "").demand("f2", task, 1).framework("f3", "").demand("f3", task, 1)
			},
			starving: []string{"f2", "f3"}, inverse: []string{"f1@a1 cpus:1;mem:1024", "f1@a2 cpus:1;mem:1024"}},
		{name: "a filter the starving framework set keeps its agent out",
			cfg: Config{Mode: Characterized, Reclaim: true},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:1;mem:1024").framework("f2", "").demand("f2", task, 1)
				fx.decline(fx.cycle(), 600) // f2 refuses a1 for ten minutes
				fx.agent("a2", "cpus:4;mem:4096").framework("f1", "").demand("f1", task, -1)
				fx.cycle() // f1 takes a1 and a2
				fx.demand("f2", task, 1)
			},
			starving: []string{"f2"}, inverse: []string{"f1@a2 cpus:1;mem:1024"}},
		{name: "oblivious: the holder gives back its excess over fair, on its smallest holding",
			cfg: Config{Reclaim: true},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:4;mem:4096").agent("a2", "cpus:8;mem:8192").framework("f1", "")
				fx.cycle()
				fx.framework("f2", "")
			},
			starving: []string{"f2"}, inverse: []string{"f1@a1 cpus:2;mem:2048"}},
		{name: "TSF's shares decide too",
			cfg: Config{Mode: Characterized, Reclaim: true, Sorter: sorter.TSF{}},
			setup: func(fx *fixture) {
				fx.agent("a1", "cpus:4;mem:4096").framework("f1", "").demand("f1", task, -1)
				fx.cycle()
				fx.framework("f2", "").demand("f2", task, 2)
			},
			starving: []string{"f2"}, inverse: []string{"f1@a1 cpus:1;mem:1024"}},
	}
}

// runReclaimCase runs one row's cycle and checks its pressure and inverse
// offers.
func runReclaimCase(t *testing.T, tc reclaimCase) {
	fx := newFixture(t, tc.cfg)
	tc.setup(fx)
	d := fx.a.Allocate()
	checkInvariants(t, fx.a)
	var starving []string
	for _, s := range fx.a.Pressure() {
		starving = append(starving, s.Framework)
		if s.Share >= s.FairShare || !strings.Contains(s.Reason, s.Framework+" wants") {
			t.Errorf("starving %+v: share not below fair or no reason", s)
		}
	}
	if !reflect.DeepEqual(starving, tc.starving) {
		t.Errorf("starving %v, want %v", starving, tc.starving)
	}
	if got := invs(d); !reflect.DeepEqual(got, tc.inverse) {
		t.Errorf("inverse offers %v, want %v", got, tc.inverse)
	}
	for _, io := range d.InverseOffers {
		if !strings.Contains(io.Reason, "waits at share") {
			t.Errorf("inverse offer without a reason: %+v", io)
		}
	}
}

// TestReclaimChangesNoOffers: the same events with Reclaim on and off give
// the same offers and the same books; only the inverse offers differ.
func TestReclaimChangesNoOffers(t *testing.T) {
	run := func(reclaim bool) ([][]Offer, []AgentState, int) {
		fx := newFixture(t, Config{Mode: Characterized, Seed: 7, Reclaim: reclaim})
		fx.agent("a1", "cpus:4;mem:4096").agent("a2", "cpus:6;mem:6144")
		fx.framework("f1", "").demand("f1", "cpus:1;mem:1024", -1)
		var offers [][]Offer
		inverse := 0
		for i, fw := range []string{"f2", "f3", "f4"} {
			d := fx.a.Allocate()
			offers = append(offers, d.Offers)
			inverse += len(d.InverseOffers)
			fx.framework(fw, "").demand(fw, "cpus:1;mem:512", i+1)
		}
		d := fx.a.Allocate()
		offers = append(offers, d.Offers)
		inverse += len(d.InverseOffers)
		var st []AgentState
		for _, id := range fx.a.Agents() {
			s, _ := fx.a.Agent(id)
			st = append(st, s)
		}
		return offers, st, inverse
	}
	offOffers, offState, offInv := run(false)
	onOffers, onState, onInv := run(true)
	if !reflect.DeepEqual(offOffers, onOffers) || !reflect.DeepEqual(offState, onState) {
		t.Fatalf("Reclaim changed offers or books")
	}
	if offInv != 0 || onInv == 0 {
		t.Fatalf("inverse offers: %d with Reclaim off, %d on; want 0 and some", offInv, onInv)
	}
}

// TestPressureIsReadOnly: asking twice gives the same answer and the next
// cycle is unaffected.
func TestPressureIsReadOnly(t *testing.T) {
	fx := newFixture(t, Config{Mode: Characterized, Reclaim: true})
	fx.agent("a1", "cpus:4;mem:4096").framework("f1", "").demand("f1", "cpus:1;mem:1024", -1)
	fx.cycle()
	fx.framework("f2", "").demand("f2", "cpus:1;mem:1024", 1)
	fx.agent("a2", "cpus:1;mem:1024")
	if p := fx.a.Pressure(); len(p) != 0 {
		t.Fatalf("f2 has room on a2 but starves: %v", p)
	}
	fx.cycle() // f2 takes a2 and wants one more
	fx.demand("f2", "cpus:1;mem:1024", 1)
	p1, p2 := fx.a.Pressure(), fx.a.Pressure()
	if !reflect.DeepEqual(p1, p2) || len(p1) != 1 {
		t.Fatalf("pressure %v then %v", p1, p2)
	}
	if p1[0].Need != resources.MustParse("cpus:1;mem:1024").Scalars {
		t.Fatalf("need %v", p1[0].Need)
	}
	d1 := fx.a.Allocate()
	d2 := fx.a.Allocate()
	if !reflect.DeepEqual(invs(d1), invs(d2)) || len(d1.InverseOffers) != 1 {
		t.Fatalf("repeat cycles decided %v then %v", invs(d1), invs(d2))
	}
}
