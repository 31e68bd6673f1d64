package sim_test

import (
	"testing"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/sim"
)

func TestParseQueueSpec(t *testing.T) {
	cases := []struct {
		spec  string
		n     int
		first string
		bad   bool
	}{
		{"A", 48, "Q10", false},
		{"b", 48, "Q10", false},
		{"KM*4,CC*4,Q10*4,Q3*4 x3", 48, "KM", false},
		{"CC,KM*2", 3, "CC", false},
		{"KM*0", 0, "", true},
		{"XX*2", 0, "", true},
		{"KM*2 x0", 0, "", true},
	}
	for _, c := range cases {
		jobs, err := sim.ParseQueueSpec(c.spec, 16)
		if (err != nil) != c.bad {
			t.Errorf("%q: error %v, want error %v", c.spec, err, c.bad)
			continue
		}
		if !c.bad && (len(jobs) != c.n || jobs[0].Type != c.first) {
			t.Errorf("%q: %d jobs starting with %q, want %d starting with %q", c.spec, len(jobs), jobs[0].Type, c.n, c.first)
		}
	}
}

// TestColocationExperimentRuns: a small run has every policy's row, FIFO's
// change is zero, and the learned matrix is a distribution per row.
func TestColocationExperimentRuns(t *testing.T) {
	rep, err := sim.ColocationExperiment(sim.ColocationOptions{Queues: []string{"KM*2,Q10*2 x2"}, Seeds: 2, Nodes: 4,
		Bandit: allocator.BanditConfig{Step: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 4 || rep.Rows[0].Policy != "FIFO" || rep.Rows[0].Change != 0 {
		t.Fatalf("rows %+v", rep.Rows)
	}
	for r, row := range rep.Prefs["KM*2,Q10*2 x2"] {
		sum := 0.0
		for _, p := range row {
			sum += p
		}
		if sum < 0.999 || sum > 1.001 {
			t.Errorf("row %s sums to %v", r, sum)
		}
	}
	if len(rep.Calibration) == 0 {
		t.Error("no calibration rows")
	}
}
