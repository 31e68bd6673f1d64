package trace_test

import (
	"math"
	"testing"

	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/trace"
	"github.com/allot-sched/allot/sorter"
)

// The what-if knobs compose and each changes what it should: on a
// homogeneous cluster the fluid bound (work over capacity) doubles when the
// nodes are halved or the durations doubled, halves with two copies of each
// node, and time-scale scales the arrival span while leaving the work alone.
func TestWhatIfKnobsCompose(t *testing.T) {
	nodes, err := trace.ParseCluster("8xcpus=16,mem=64G")
	if err != nil {
		t.Fatal(err)
	}
	base := &sim.Workload{Name: "synthetic", Jobs: sim.SyntheticJobs(sim.SyntheticSpec{Seed: 3}), Nodes: nodes}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	fluid := func(w *sim.Workload) float64 {
		t.Helper()
		drf, err := sim.ParsePolicy("drf", sorter.RRR)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.Run(w, sim.Config{Policy: drf, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r.FluidBound
	}
	baseFluid := fluid(base)
	baseDur := base.Jobs[0].Stages[0].Groups[0].Duration
	tests := []struct {
		name  string
		knobs trace.WhatIf
		nodes int
		fluid float64 // times the base's (exact on a homogeneous cluster)
		span  float64 // times the base's arrival span
	}{
		{"none", trace.WhatIf{}, 8, 1, 1},
		{"half the nodes", trace.WhatIf{NodesSample: 0.5, Seed: 7}, 4, 2, 1},
		{"time-scale 0.5", trace.WhatIf{TimeScale: 0.5}, 8, 1, 0.5},
		{"time-scale 3", trace.WhatIf{TimeScale: 3}, 8, 1, 3},
		{"duration-scale 2", trace.WhatIf{DurationScale: 2}, 8, 2, 1},
		{"cluster-scale 2", trace.WhatIf{ClusterScale: 2}, 16, 0.5, 1},
		{"half the nodes, twice each", trace.WhatIf{NodesSample: 0.5, ClusterScale: 2, Seed: 7}, 8, 1, 1},
		{"everything", trace.WhatIf{TimeScale: 0.5, DurationScale: 2, NodesSample: 0.25, ClusterScale: 3, Seed: 9}, 6, 2 * 8.0 / 6, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, rep, err := tc.knobs.Apply(base)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Validate(); err != nil {
				t.Fatalf("reshaped workload: %v", err)
			}
			if len(w.Nodes) != tc.nodes || rep.NodesAfter != tc.nodes || rep.NodesBefore != 8 {
				t.Errorf("nodes = %d (report %d -> %d), want %d", len(w.Nodes), rep.NodesBefore, rep.NodesAfter, tc.nodes)
			}
			if got, want := rep.ArrivalSpanAfter, tc.span*rep.ArrivalSpanBefore; math.Abs(got-want) > 1e-6*want || rep.ArrivalSpanBefore <= 0 {
				t.Errorf("arrival span %v -> %v, want x%v", rep.ArrivalSpanBefore, got, tc.span)
			}
			if minSubmit(w) != minSubmit(base) {
				t.Errorf("first arrival moved: %v -> %v", minSubmit(base), minSubmit(w))
			}
			got := fluid(w)
			if want := tc.fluid * baseFluid; math.Abs(got-want) > 0.2 { // rounding
				t.Errorf("fluid bound %v, want %v x %v = %v", got, tc.fluid, baseFluid, want)
			}
			if tc.knobs.NodesSample == 0.5 && tc.knobs.ClusterScale == 0 && got < 2*baseFluid-0.2 {
				t.Errorf("halving the nodes: fluid bound %v, want at least twice %v", got, baseFluid)
			}
			if base.Jobs[0].Stages[0].Groups[0].Duration != baseDur || len(base.Nodes) != 8 {
				t.Error("Apply changed the workload it was given")
			}
		})
	}
}

// The node sample is seeded: the same seed keeps the same nodes, another
// seed (almost surely) others; copies get distinct ids.
func TestWhatIfSampleSeeded(t *testing.T) {
	nodes, err := trace.ParseCluster("20xcpus=4,mem=8G")
	if err != nil {
		t.Fatal(err)
	}
	w := &sim.Workload{Name: "n", Nodes: nodes}
	ids := func(seed uint64) string {
		out, _, err := trace.WhatIf{NodesSample: 0.3, ClusterScale: 2, Seed: seed}.Apply(w)
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		seen := map[string]bool{}
		for _, n := range out.Nodes {
			if seen[n.ID] {
				t.Fatalf("duplicate node id %s", n.ID)
			}
			seen[n.ID] = true
			s += n.ID + " "
		}
		return s
	}
	if a, b := ids(1), ids(1); a != b {
		t.Errorf("same seed, different nodes: %s / %s", a, b)
	}
	if a, b := ids(1), ids(2); a == b {
		t.Errorf("seeds 1 and 2 chose the same nodes: %s", a)
	}
	for _, bad := range []trace.WhatIf{{NodesSample: 1.5}, {TimeScale: -1}, {DurationScale: math.NaN()}, {ClusterScale: -2}} {
		if _, _, err := bad.Apply(w); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func minSubmit(w *sim.Workload) float64 {
	m := math.Inf(1)
	for _, j := range w.Jobs {
		m = math.Min(m, j.Submit)
	}
	return m
}
