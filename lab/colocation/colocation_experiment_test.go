package colocation_test

import (
	"encoding/json"
	"github.com/allot-sched/allot/allocator/policy/bandit"
	"math"
	"reflect"
	"testing"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/lab/colocation"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sorter"
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
		jobs, err := colocation.ParseQueueSpec(c.spec, 16)
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
	rep, err := colocation.ColocationExperiment(colocation.ColocationOptions{Queues: []string{"KM*2,Q10*2 x2"}, Seeds: 2, Nodes: 4,
		Bandit: bandit.Config{Step: 0.1}})
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

// TestColocationOracleRows: with Oracles the two frozen-preference rows
// are reported after the four of the paper, and the spread placement still
// runs FIFO as the fifo sorter (FIFO's change is zero either way).
func TestColocationOracleRows(t *testing.T) {
	for _, spread := range []bool{false, true} {
		rep, err := colocation.ColocationExperiment(colocation.ColocationOptions{Queues: []string{"KM*2,Q10*2 x2"}, Seeds: 2, Nodes: 4,
			Bandit: bandit.Config{Step: 0.1}, Oracles: true, Spread: spread})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rep.Rows {
			names = append(names, r.Policy)
			if r.Makespan <= 0 {
				t.Errorf("spread %v: %s has makespan %v", spread, r.Policy, r.Makespan)
			}
		}
		want := []string{"FIFO", "RA", "RA*", "random-in-window", "oracle-G", "oracle-progress"}
		if !reflect.DeepEqual(names, want) || rep.Rows[0].Change != 0 {
			t.Fatalf("spread %v: rows %v (FIFO change %v), want %v", spread, names, rep.Rows[0].Change, want)
		}
	}
}

// TestColocationDiagnose: the diagnostics see rewards for the pair the
// queue makes (KM beside Q10), RA applies updates and draws beside a
// resident, and every policy has a makespan per seed.
func TestColocationDiagnose(t *testing.T) {
	d, err := colocation.ColocationDiagnose("KM*4,Q10*4 x2", 2, bandit.Config{Step: 0.1, Chunk: 3})
	if err != nil {
		t.Fatal(err)
	}
	pair := false
	for _, r := range d.Rewards {
		pair = pair || (r.Types == "KM+Q10" && r.N > 0 && r.Mean > math.E)
	}
	if !pair {
		t.Errorf("no KM+Q10 rewards in %+v", d.Rewards)
	}
	for _, s := range d.Seeds {
		if s.Updates == 0 || s.DrawsBeside == 0 {
			t.Errorf("seed %d: %d updates, %d draws beside, want some", s.Seed, s.Updates, s.DrawsBeside)
		}
		for _, p := range []string{"FIFO", "random-in-window", "RA", "RA*", "oracle", "progress-oracle"} {
			if s.Makespan[p] <= 0 {
				t.Errorf("seed %d: no makespan for %s", s.Seed, p)
			}
		}
	}
}

// TestColocationBeyondRows: with Beyond the three rows beyond the paper
// are reported, and a progress-rewarded bandit learns from the model's
// progress samples (its preferences have updates).
func TestColocationBeyondRows(t *testing.T) {
	rep, err := colocation.ColocationExperiment(colocation.ColocationOptions{Queues: []string{"KM*2,Q10*2 x2"}, Seeds: 2, Nodes: 4,
		Bandit: bandit.Config{Step: 0.1}, Beyond: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rep.Rows {
		names = append(names, r.Policy)
	}
	want := []string{"FIFO", "RA", "RA*", "random-in-window", "RA-set", "RA-progress", "RA-progress-set"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("rows %v, want %v", names, want)
	}
	jobs, err := colocation.ParseQueueSpec("KM*4,Q10*4 x2", 8)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := sim.ParsePolicy("bandit", sorter.RRR)
	if err != nil {
		t.Fatal(err)
	}
	for _, reward := range []bandit.Reward{bandit.RewardGoodness, bandit.RewardProgress} {
		res, err := sim.Run(&sim.Workload{Name: "progress", Nodes: colocation.ColocationCluster(4), Jobs: jobs},
			sim.Config{Policy: pol, Mode: allocator.Characterized, Seed: 1, Interference: colocation.ColocationProfiles(),
				Bandit: bandit.Config{Step: 1, Chunk: 3, Reward: reward}})
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			AllN    int64   `json:"all_n"`
			AllMean float64 `json:"all_mean"`
		}
		if err := json.Unmarshal(res.Preferences, &p); err != nil {
			t.Fatal(err)
		}
		// progress is a rate in (0, 1]; goodness is at least e
		if p.AllN == 0 || (reward == bandit.RewardProgress) != (p.AllMean <= 1) {
			t.Fatalf("reward %v: %d updates with mean reward %v", reward, p.AllN, p.AllMean)
		}
	}
}
