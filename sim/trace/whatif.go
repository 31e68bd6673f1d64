package trace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/allot-sched/allot/sim"
)

// WhatIf reshapes a workload before it runs, for the question an operator
// brings to a trace recorded at another load: "what if load doubled",
// "what if I had half the machines". It applies to any workload format,
// after loading, so every format gets the same knobs. The zero value (and
// any knob at 0) changes nothing.
type WhatIf struct {
	// TimeScale multiplies the time between each job's arrival and the
	// first arrival: 0.5 halves the arrival span (twice the arrival rate),
	// 2 stretches it. The first arrival stays where it was.
	TimeScale float64 `json:"time_scale,omitempty"`
	// DurationScale multiplies every task's running time (not an
	// application master's start-up, which is the master's own).
	DurationScale float64 `json:"duration_scale,omitempty"`
	// NodesSample keeps Round(NodesSample x nodes) of the nodes (at least
	// one), drawn with Seed: a seeded fraction, exact in count, so that
	// halving a homogeneous cluster halves its capacity.
	NodesSample float64 `json:"nodes_sample,omitempty"`
	// ClusterScale makes K copies of each node (after sampling): ids get
	// "~2", "~3", ... appended for the copies.
	ClusterScale int    `json:"cluster_scale,omitempty"`
	Seed         uint64 `json:"seed,omitempty"`
}

// WhatIfReport is what the knobs did, for the report's header.
type WhatIfReport struct {
	WhatIf
	NodesBefore       int     `json:"nodes_before"`
	NodesAfter        int     `json:"nodes_after"`
	ArrivalSpanBefore float64 `json:"arrival_span_before_s"`
	ArrivalSpanAfter  float64 `json:"arrival_span_after_s"`
}

// Active reports whether any knob changes the workload.
func (k WhatIf) Active() bool {
	return (k.TimeScale != 0 && k.TimeScale != 1) || (k.DurationScale != 0 && k.DurationScale != 1) ||
		(k.NodesSample != 0 && k.NodesSample != 1) || k.ClusterScale > 1
}

// Check rejects knobs that make no workload.
func (k WhatIf) Check() error {
	switch {
	case k.TimeScale < 0 || math.IsInf(k.TimeScale, 0) || math.IsNaN(k.TimeScale):
		return fmt.Errorf("time scale must be >= 0 (0: unchanged), got %v", k.TimeScale)
	case k.DurationScale < 0 || math.IsInf(k.DurationScale, 0) || math.IsNaN(k.DurationScale):
		return fmt.Errorf("duration scale must be >= 0 (0: unchanged), got %v", k.DurationScale)
	case k.NodesSample < 0 || k.NodesSample > 1 || math.IsNaN(k.NodesSample):
		return fmt.Errorf("nodes sample must be a fraction in (0, 1], got %v", k.NodesSample)
	case k.ClusterScale < 0:
		return fmt.Errorf("cluster scale must be >= 1 (0: unchanged), got %d", k.ClusterScale)
	}
	return nil
}

// Apply returns a reshaped copy of w (w is not changed) and what changed.
func (k WhatIf) Apply(w *sim.Workload) (*sim.Workload, WhatIfReport, error) {
	rep := WhatIfReport{WhatIf: k, NodesBefore: len(w.Nodes), ArrivalSpanBefore: arrivalSpan(w.Jobs)}
	if err := k.Check(); err != nil {
		return nil, rep, err
	}
	out := &sim.Workload{Name: w.Name, Jobs: k.jobs(w.Jobs), Nodes: k.nodes(w.Nodes)}
	rep.NodesAfter, rep.ArrivalSpanAfter = len(out.Nodes), arrivalSpan(out.Jobs)
	return out, rep, nil
}

// jobs copies the jobs with arrivals and durations scaled. Stages and
// groups are copied too: the caller's workload keeps its durations.
func (k WhatIf) jobs(in []sim.Job) []sim.Job {
	ts, ds := orOne(k.TimeScale), orOne(k.DurationScale)
	first := math.Inf(1)
	for i := range in {
		first = math.Min(first, in[i].Submit)
	}
	out := make([]sim.Job, len(in))
	for i, j := range in {
		j.Submit = first + (j.Submit-first)*ts
		stages := make([]sim.Stage, len(j.Stages))
		for s, st := range j.Stages {
			groups := make([]sim.Group, len(st.Groups))
			for g, gr := range st.Groups {
				gr.Duration *= ds
				groups[g] = gr
			}
			stages[s] = sim.Stage{Groups: groups}
		}
		j.Stages = stages
		out[i] = j
	}
	return out
}

// nodes samples, then copies, the nodes; the sample keeps the nodes' order.
func (k WhatIf) nodes(in []sim.Node) []sim.Node {
	keep := in
	if p := k.NodesSample; p > 0 && p < 1 && len(in) > 0 {
		n := max(1, int(math.Round(p*float64(len(in)))))
		idx := rand.New(rand.NewPCG(k.Seed, 0x6e6f646573)).Perm(len(in))[:n]
		chosen := make([]bool, len(in))
		for _, i := range idx {
			chosen[i] = true
		}
		keep = make([]sim.Node, 0, n)
		for i, nd := range in {
			if chosen[i] {
				keep = append(keep, nd)
			}
		}
	}
	copies := max(1, k.ClusterScale)
	out := make([]sim.Node, 0, len(keep)*copies)
	for _, nd := range keep {
		out = append(out, nd)
		for c := 2; c <= copies; c++ {
			cp := nd
			cp.ID = fmt.Sprintf("%s~%d", nd.ID, c)
			out = append(out, cp)
		}
	}
	return out
}

func orOne(v float64) float64 {
	if v == 0 {
		return 1
	}
	return v
}

// arrivalSpan is the time from the first arrival to the last.
func arrivalSpan(jobs []sim.Job) float64 {
	if len(jobs) == 0 {
		return 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range jobs {
		lo, hi = math.Min(lo, jobs[i].Submit), math.Max(hi, jobs[i].Submit)
	}
	return hi - lo
}

// String is the knobs and their effect in one line, for the text header.
func (r WhatIfReport) String() string {
	var parts []string
	if ts := orOne(r.TimeScale); ts != 1 {
		parts = append(parts, fmt.Sprintf("time-scale %g (arrival span %.0f s -> %.0f s)", ts, r.ArrivalSpanBefore, r.ArrivalSpanAfter))
	}
	if ds := orOne(r.DurationScale); ds != 1 {
		parts = append(parts, fmt.Sprintf("duration-scale %g", ds))
	}
	if p := r.NodesSample; p > 0 && p < 1 {
		parts = append(parts, fmt.Sprintf("nodes-sample %g (seed %d)", p, r.Seed))
	}
	if r.ClusterScale > 1 {
		parts = append(parts, fmt.Sprintf("cluster-scale %d", r.ClusterScale))
	}
	if r.NodesBefore != r.NodesAfter || r.ClusterScale > 1 || (r.NodesSample > 0 && r.NodesSample < 1) {
		parts = append(parts, fmt.Sprintf("nodes %d -> %d", r.NodesBefore, r.NodesAfter))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
