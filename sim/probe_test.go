package sim

import (
	"testing"

	"github.com/allot-sched/allot/allocator"
)

// TestProbingJobs: with a probing share, fspy's probes are jobs that hold
// a container for the probe delay, the predictions arrive when they end,
// and the results hold the workload's jobs only.
func TestProbingJobs(t *testing.T) {
	cases := []struct {
		policy   string
		share    float64
		jobs     int
		slower   bool // a finishes after 60 s: the probes took capacity
		predicts int
	}{
		{"fspy", 0, 2, false, 2},
		{"fspy", 0.25, 2, true, 2},
		{"fspy", 1, 2, true, 2},
		{"fsp", 0.25, 2, false, 0}, // the oracle runs no probes
		{"fair", 0.25, 2, false, 0},
	}
	for _, c := range cases {
		p, err := ParsePolicy(c.policy, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(fspWorkload(), Config{Policy: p, Mode: allocator.Characterized, Check: true, Sizes: SizeOptions{ProbeDelay: 5, ProbeShare: c.share}})
		if err != nil {
			t.Fatalf("%s share %v: %v", c.policy, c.share, err)
		}
		if len(r.JobStats) != c.jobs || r.Jobs != c.jobs {
			t.Errorf("%s share %v: %d job stats (%d jobs), want %d", c.policy, c.share, len(r.JobStats), r.Jobs, c.jobs)
		}
		if a := r.JobStats[0]; (a.JCT() > 60) != c.slower {
			t.Errorf("%s share %v: a took %v s; slower than 60 s should be %v", c.policy, c.share, a.JCT(), c.slower)
		}
		if len(r.Predicted) != c.predicts {
			t.Errorf("%s share %v: %d predictions, want %d", c.policy, c.share, len(r.Predicted), c.predicts)
		}
	}
}

// TestFSPVariantPolicies: the DRF / projected-finish variants parse under
// their sorter names and run.
func TestFSPVariantPolicies(t *testing.T) {
	for _, name := range []string{"fspy-drf", "fsp-drf"} {
		p, err := ParsePolicy(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.Sorter.Name() != name {
			t.Fatalf("%s parses to %s", name, p.Sorter.Name())
		}
		r, err := Run(fspWorkload(), Config{Policy: p, Mode: allocator.Characterized, Check: true, Sizes: SizeOptions{ProbeDelay: 5}})
		if err != nil {
			t.Fatal(err)
		}
		// as fsp: b, the smaller and sooner to finish virtually, first
		if b := r.JobStats[1]; b.JCT() != 19 {
			t.Errorf("%s: b took %v s, want 19", name, b.JCT())
		}
	}
}
