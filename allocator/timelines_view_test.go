package allocator

import (
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/allocator/policy/prophet"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/sorter"
)

// Timelines copies the gang model out: the placed executors with their
// anchors and profiles, and clones that the caller may change freely.
func TestTimelinesAccessor(t *testing.T) {
	for _, c := range []struct {
		name      string
		crit      sorter.Criterion
		wantModel bool
	}{
		{"prophet keeps timelines", sorter.Prophet{}, true},
		{"tetris-peak keeps timelines", sorter.TetrisPeak{}, true},
		{"drf keeps none", sorter.DRF{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, clk := newGang(t, c.crit, 3, nil)
			_ = a.AddFramework("f", "")
			if !c.wantModel {
				if tls, ok := prophet.Of(a).Timelines(); ok || tls != nil {
					t.Fatalf("Timelines() = %v, %v; want nil, false", tls, ok)
				}
				return
			}
			if err := a.Observe(policy.AppDemand{Framework: "f", Demand: app(2, 2, 100)}); err != nil {
				t.Fatal(err)
			}
			d := a.Allocate()
			tls, ok := prophet.Of(a).Timelines()
			if !ok || len(tls) != 3 {
				t.Fatalf("Timelines() gave %d agents, %v; want 3, true", len(tls), ok)
			}
			placed := map[string]bool{}
			for _, o := range offersOf(d, "f") {
				placed[o.Agent] = true
			}
			for i, at := range tls {
				if i > 0 && tls[i-1].Agent >= at.Agent {
					t.Errorf("agents not sorted: %q before %q", tls[i-1].Agent, at.Agent)
				}
				want := 0
				if placed[at.Agent] {
					want = 1
				}
				if len(at.Executors) != want || at.Timeline.Len() != want {
					t.Fatalf("agent %s: %d executors (timeline %d), want %d", at.Agent, len(at.Executors), at.Timeline.Len(), want)
				}
				if want == 1 {
					x := at.Executors[0]
					if x.Framework != "f" || !x.Launch.Equal(clk.T) || len(x.Profile.Stages) != 2 {
						t.Errorf("agent %s executor %+v, want f's 2-stage profile anchored at %v", at.Agent, x, clk.T)
					}
					// the copy is the caller's: emptying it leaves the model
					if err := at.Timeline.Add("extra", clk.T, &x.Profile); err != nil {
						t.Fatal(err)
					}
					x.Profile.Stages[0].DiskBW = 0
				}
			}
			again, _ := prophet.Of(a).Timelines()
			for _, at := range again {
				if placed[at.Agent] {
					if at.Timeline.Len() != 1 || at.Executors[0].Profile.Stages[0].DiskBW != 100 {
						t.Errorf("agent %s: the caller's change reached the allocator", at.Agent)
					}
					if got := at.Timeline.At(clk.T.Add(30*time.Second), profile.Disk); got != 230 {
						t.Errorf("agent %s: disk available %v in stage 0, want 330-100", at.Agent, got)
					}
				}
			}
		})
	}
}
