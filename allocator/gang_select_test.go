package allocator

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// gangScript runs a seeded mix of declarations, declines with refuse
// filters, ended executors and clock steps through crit's gang path and
// returns every cycle's decisions.
func gangScript(t *testing.T, crit string, seed uint64) []Decisions {
	t.Helper()
	c, err := sorter.Lookup(crit)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	clk := &ManualClock{T: time.Unix(1e9, 0)}
	a, err := New(Config{Sorter: c, Clock: clk, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 14; i++ {
		total := resources.MustParse(fmt.Sprintf("cpus:%d;mem:8192;disk_bw:%d;net_bw:%d", 4+4*(i%3), []int{0, 100, 330}[i%3], 125))
		if err := a.AddAgent(fmt.Sprintf("a%02d", i), AgentInfo{Total: total}); err != nil {
			t.Fatal(err)
		}
	}
	declare := func(n int) {
		d := profile.AppDemand{Executors: 1 + n%6, Cpus: float64(1 + n%3), Mem: 512, Profile: profile.Profile{Stages: []profile.Stage{
			{Start: 0, End: time.Duration(10+n%4*20) * time.Second, DiskBW: float64(10 + 60*(n%5)), NetBW: 20},
			{Start: 2 * time.Minute, End: 3 * time.Minute, DiskBW: 5, NetBW: float64(30 + 40*(n%3))},
		}}}
		if err := a.Observe(policy.AppDemand{Framework: fmt.Sprintf("app-%02d", n), Demand: d}); err != nil {
			t.Fatal(err)
		}
	}
	for n := 0; n < 30; n++ {
		if err := a.AddFramework(fmt.Sprintf("app-%02d", n), "role"); err != nil {
			t.Fatal(err)
		}
		if n%3 == 0 {
			declare(n)
		}
	}
	var out []Decisions
	held := []Offer{}
	for cycle := 0; cycle < 25; cycle++ {
		d := a.Allocate()
		out = append(out, d)
		for _, o := range d.Offers {
			switch rng.IntN(4) {
			case 0: // declined, with a filter, and asks again
				if err := a.Recover(o.Framework, o.Agent, o.Resources, &Filter{RefuseSeconds: float64(1 + rng.IntN(20))}); err != nil {
					t.Fatal(err)
				}
			default:
				held = append(held, o)
			}
		}
		rng.Shuffle(len(held), func(i, j int) { held[i], held[j] = held[j], held[i] })
		for len(held) > 0 && rng.IntN(3) > 0 { // some executors end
			o := held[len(held)-1]
			held = held[:len(held)-1]
			if err := a.Recover(o.Framework, o.Agent, o.Resources, nil); err != nil {
				t.Fatal(err)
			}
		}
		for k := 0; k < 4; k++ {
			declare(rng.IntN(30))
		}
		clk.Advance(time.Duration(1+rng.IntN(40)) * time.Second)
	}
	return out
}

// TestSelectInPlaceMatchesPop: the gang path's two walks of a shape's
// lazy heap (entries kept in place, or popped and pushed back) make the
// same decisions, offer for offer, score for score.
func TestSelectInPlaceMatchesPop(t *testing.T) {
	defer func(v int) { selectInPlaceMax = v }(selectInPlaceMax)
	for _, crit := range []string{"prophet", "tetris-peak"} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", crit, seed), func(t *testing.T) {
				selectInPlaceMax = 16
				inPlace := gangScript(t, crit, seed)
				selectInPlaceMax = 0
				popped := gangScript(t, crit, seed)
				offers := 0
				for _, d := range inPlace {
					offers += len(d.Offers)
				}
				if offers < 20 {
					t.Fatalf("only %d offers: the script exercises too little", offers)
				}
				if !reflect.DeepEqual(inPlace, popped) {
					for i := range inPlace {
						if !reflect.DeepEqual(inPlace[i], popped[i]) {
							t.Fatalf("cycle %d differs:\nin place %+v\npopped   %+v", i, inPlace[i].Offers, popped[i].Offers)
						}
					}
				}
			})
		}
	}
}
