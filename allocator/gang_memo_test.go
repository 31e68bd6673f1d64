package allocator

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// idleFill is BenchmarkProphetCycle's cycle at a small size: an idle
// cluster filled by gangs of six shapes, every offer recovered between
// cycles; it returns the decisions, the memo's hits and the state
// timelines it built.
func idleFill(t *testing.T, agents, apps, cycles int) ([]Decisions, int, int) {
	t.Helper()
	clk := &ManualClock{T: time.Unix(1e9, 0)}
	a, err := New(Config{Sorter: sorter.Prophet{}, Clock: clk, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	total := resources.MustParse("cpus:24;mem:4096;disk_bw:330;net_bw:125")
	for i := 0; i < agents; i++ {
		if err := a.AddAgent(fmt.Sprintf("a%03d", i), AgentInfo{Total: total}); err != nil {
			t.Fatal(err)
		}
	}
	declare := func(n int) {
		d := app(4, 2, float64(20+40*(n%6)))
		d.Mem = 512
		if err := a.Observe(policy.AppDemand{Framework: fmt.Sprintf("app-%03d", n), Demand: d}); err != nil {
			t.Fatal(err)
		}
	}
	for n := 0; n < apps; n++ {
		_ = a.AddFramework(fmt.Sprintf("app-%03d", n), "role")
		declare(n)
	}
	var out []Decisions
	for c := 0; c < cycles; c++ {
		d := a.Allocate()
		out = append(out, d)
		for i, o := range d.Offers {
			if i%3 == 0 { // some executors stay, so later cycles meet busy agents too
				continue
			}
			if err := a.Recover(o.Framework, o.Agent, o.Resources, nil); err != nil {
				t.Fatal(err)
			}
		}
		for n := 0; n < apps; n++ {
			declare(n)
		}
		clk.Advance(time.Second)
	}
	m := &a.path.(*gangPath).memo
	return out, m.hits, m.built
}

// TestPlacedMemoExact: remembering Prophet's scores on agents that were
// idle but for the cycle's own placements changes no decision, offer for
// offer and score for score, in an idle cluster filled by a few shapes
// (where the memo answers most rescoring) and in gangScript's mix of
// busy agents, filters and ended executors.
func TestPlacedMemoExact(t *testing.T) {
	defer func(v bool) { memoPlaced = v }(memoPlaced)
	compare := func(t *testing.T, with, without []Decisions) {
		t.Helper()
		for i := range with {
			if !reflect.DeepEqual(with[i], without[i]) {
				t.Fatalf("cycle %d differs:\nmemo    %+v\nwithout %+v", i, with[i].Offers, without[i].Offers)
			}
		}
	}
	t.Run("idle cluster", func(t *testing.T) {
		memoPlaced = true
		with, hits, built := idleFill(t, 40, 60, 4)
		memoPlaced = false
		without, _, _ := idleFill(t, 40, 60, 4)
		if hits < 100 {
			t.Fatalf("the memo answered %d scores: the test exercises too little", hits)
		}
		if len(with[0].Offers) < 100 {
			t.Fatalf("%d offers in the first cycle", len(with[0].Offers))
		}
		// placements on memoised agents add to no scratch timeline: the
		// misses score against state timelines, built once per state
		offers := 0
		for _, d := range with {
			offers += len(d.Offers)
		}
		t.Logf("%d hits, %d state timelines built, %d offers", hits, built, offers)
		if built == 0 || built >= offers/2 {
			t.Fatalf("%d state timelines built for %d offers", built, offers)
		}
		compare(t, with, without)
	})
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprintf("script/seed=%d", seed), func(t *testing.T) {
			memoPlaced = true
			with := gangScript(t, "prophet", seed)
			memoPlaced = false
			compare(t, with, gangScript(t, "prophet", seed))
		})
	}
}
