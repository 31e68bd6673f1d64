package sim

import (
	"math"
	"reflect"
	"testing"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/framework/predict/jobsize"
)

// fspWorkload: on one node of 8 one-slot tasks, a (40 tasks of 10 s) at
// t=0 and b (8 tasks of 10 s) at t=1. At t=10 a's first wave ends: fair
// sharing gives a and b four slots each, so b finishes at t=30; FSP serves
// b, the smaller, with all eight, so it finishes at t=20.
func fspWorkload() *Workload {
	job := func(id string, submit float64, tasks int) Job {
		return Job{ID: id, Framework: id, Submit: submit, Stages: []Stage{{Groups: []Group{{Tasks: tasks, Duration: 10, Demand: Shape(1, 1024)}}}}}
	}
	return &Workload{Jobs: []Job{job("a", 0, 40), job("b", 1, 8)}, Nodes: []Node{{ID: "n", Total: Shape(8, 8192)}}}
}

func TestFSPServesSmallerVirtualSizeFirst(t *testing.T) {
	cases := []struct {
		policy string
		sizes  SizeOptions
		wantB  float64
	}{
		{"fair", SizeOptions{}, 29},
		{"fsp", SizeOptions{}, 19},
		// the probes report at 5 and 6 s, before a's first wave ends
		{"fspy", SizeOptions{ProbeDelay: 5}, 19},
		// they report after it: a and b are of unknown size at t=10 and
		// each is owed half the virtual cluster
		{"fspy", SizeOptions{ProbeDelay: 15}, 29},
	}
	for _, c := range cases {
		p, err := ParsePolicy(c.policy, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(fspWorkload(), Config{Policy: p, Mode: allocator.Characterized, Sizes: c.sizes, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		if b := r.JobStats[1]; b.JCT() != c.wantB {
			t.Errorf("%s %+v: b took %v s, want %v", c.policy, c.sizes, b.JCT(), c.wantB)
		}
		if a := r.JobStats[0]; a.JCT() != 60 {
			t.Errorf("%s: a took %v s, want 60 (the cluster is never idle)", c.policy, a.JCT())
		}
	}
}

// TestFSPYRegressionOnSWIM: fspy with the regression predictor on
// FB-2009's first jobs (rate noise 0.3, a probe error of 0.1) predicts
// the jobs that outlive their probe, learns from every finished job, and
// repeats exactly.
func TestFSPYRegressionOnSWIM(t *testing.T) {
	jobs, err := LoadJobs(swimTrace2009, FormatSWIM, TraceOptions{RateNoise: 0.3, NoiseSeed: 1, MaxJobs: 400})
	if err != nil {
		t.Skipf("trace: %v", err)
	}
	nodes, err := ParseCluster("fspy")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := ParsePolicy("fspy", 0)
	var runs [2]*Result
	for k := range runs {
		cfg := Config{Policy: p, Mode: allocator.Characterized, Seed: 3, Sizes: SizeOptions{Predictor: "regression", ProbeNoise: 0.1}}
		if runs[k], err = Run(&Workload{Jobs: jobs, Nodes: nodes}, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(runs[0].JobStats, runs[1].JobStats) || !reflect.DeepEqual(runs[0].Predicted, runs[1].Predicted) {
		t.Fatal("two runs of the same seed differ")
	}
	actual := map[string]float64{}
	for i := range jobs {
		actual[jobs[i].ID] = JobSize(&jobs[i])
	}
	r2 := PredictionR2(actual, runs[0].Predicted)
	if n := len(runs[0].Predicted); n < 20 || !(r2 > 0.8) || math.IsNaN(r2) {
		t.Fatalf("%d jobs predicted with R^2 %v; want at least 20 and R^2 > 0.8", n, r2)
	}
	t.Logf("%d of %d jobs predicted, R^2 %.3f", len(runs[0].Predicted), len(jobs), r2)
}

// swimTrace2009 is the first 400 jobs of SWIM's FB-2009 sample (see
// /work/shared/data/traces/swim/LICENSE, SWIM's).
const swimTrace2009 = "testdata/fb2009_head400.tsv"

func TestParsePredictor(t *testing.T) {
	truth := jobsize.Oracle{"j": 100}
	for _, spec := range []string{"", "oracle", "regression", "noisy:0.5", "Noisy:0"} {
		if _, err := ParsePredictor(spec, truth, 1); err != nil {
			t.Errorf("%q: %v", spec, err)
		}
	}
	for _, spec := range []string{"noisy", "noisy:x", "noisy:-1", "oracle:1", "gls"} {
		if _, err := ParsePredictor(spec, truth, 1); err == nil {
			t.Errorf("%q accepted", spec)
		}
	}
	p, _ := ParsePredictor("noisy:0.5", truth, 1)
	if s, ok := p.Predict(jobsize.JobFeatures{ID: "j"}); !ok || s == 100 || !(s > 0) {
		t.Errorf("noisy:0.5 predicts %v, %v for a job of size 100", s, ok)
	}
}
