package sim

import (
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
