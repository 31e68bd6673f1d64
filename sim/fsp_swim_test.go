package sim_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/trace"
)

// TestFSPYRegressionOnSWIM: fspy with the regression predictor on
// FB-2009's first jobs (rate noise 0.3, a probe error of 0.1) predicts
// the jobs that outlive their probe, learns from every finished job, and
// repeats exactly.
func TestFSPYRegressionOnSWIM(t *testing.T) {
	jobs, err := trace.LoadJobs(swimTrace2009, trace.FormatSWIM, trace.TraceOptions{RateNoise: 0.3, NoiseSeed: 1, MaxJobs: 400})
	if err != nil {
		t.Skipf("trace: %v", err)
	}
	nodes, err := trace.ParseCluster("fspy")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := sim.ParsePolicy("fspy", 0)
	var runs [2]*sim.Result
	for k := range runs {
		cfg := sim.Config{Policy: p, Mode: allocator.Characterized, Seed: 3, Sizes: sim.SizeOptions{Predictor: "regression", ProbeNoise: 0.1}}
		if runs[k], err = sim.Run(&sim.Workload{Jobs: jobs, Nodes: nodes}, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(runs[0].JobStats, runs[1].JobStats) || !reflect.DeepEqual(runs[0].Predicted, runs[1].Predicted) {
		t.Fatal("two runs of the same seed differ")
	}
	actual := map[string]float64{}
	for i := range jobs {
		actual[jobs[i].ID] = sim.JobSize(&jobs[i])
	}
	r2 := sim.PredictionR2(actual, runs[0].Predicted)
	if n := len(runs[0].Predicted); n < 20 || !(r2 > 0.8) || math.IsNaN(r2) {
		t.Fatalf("%d jobs predicted with R^2 %v; want at least 20 and R^2 > 0.8", n, r2)
	}
	t.Logf("%d of %d jobs predicted, R^2 %.3f", len(runs[0].Predicted), len(jobs), r2)
}

// swimTrace2009 is the first 400 jobs of SWIM's FB-2009 sample (see
// /work/shared/data/traces/swim/LICENSE, SWIM's).
const swimTrace2009 = "trace/testdata/fb2009_head400.tsv"
