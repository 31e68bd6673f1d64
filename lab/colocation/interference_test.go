package colocation_test

import (
	"encoding/json"
	"github.com/allot-sched/allot/allocator/policy/bandit"
	"math"
	"testing"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/lab/colocation"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sorter"
)

// TestCalibration reports the interference model's pairwise co-locations
// beside the paper's and checks that they keep its orderings: co-locating
// different resource users helps more than co-locating TPC-H with itself,
// TPC-H gains most beside K-Means, and CC is faster beside KM than beside
// Q10 (Fig. 4).
func TestCalibration(t *testing.T) {
	rows, err := colocation.Calibrate(colocation.ColocationProfiles())
	if err != nil {
		t.Fatal(err)
	}
	get := map[string]float64{}
	for _, r := range rows {
		t.Logf("%-18s %-4s sim %+6.1f %%  paper %+6.1f %%", r.Pair, r.Job, 100*r.Ratio, 100*r.Paper)
		get[r.Pair+"/"+r.Job] = r.Ratio
		if math.Abs(r.Ratio-r.Paper) > 0.10 {
			t.Errorf("%s %s: %+.3f, more than 10 points from the paper's %+.3f", r.Pair, r.Job, r.Ratio, r.Paper)
		}
	}
	if !(get["KM+Q10/Q10"] < get["Q10+Q10/Q10"]) {
		t.Errorf("Q10 beside KM (%+.3f) should gain more than beside itself (%+.3f)", get["KM+Q10/Q10"], get["Q10+Q10/Q10"])
	}
	if !(get["CC+KM vs CC+Q10/CC"] < 0) {
		t.Errorf("CC should be faster beside KM than beside Q10: %+.3f", get["CC+KM vs CC+Q10/CC"])
	}
}

// TestInterferenceFeedsBandit: with the interference model on, the
// bandit's preferences learn from the usage samples; with it off (no
// samples) they stay empty, and step size 0 leaves them at zero.
func TestInterferenceFeedsBandit(t *testing.T) {
	pol, err := sim.ParsePolicy("bandit", sorter.RRR)
	if err != nil {
		t.Fatal(err)
	}
	w := &sim.Workload{Name: "queue", Nodes: colocation.ColocationCluster(4), Jobs: colocation.ColocationQueue(2, 1, 4)}
	run := func(inter *sim.Interference, step float64) map[string]any {
		t.Helper()
		res, err := sim.Run(w, sim.Config{Policy: pol, Mode: allocator.Characterized, Seed: 3, Interference: inter,
			Bandit: bandit.Config{Step: step}, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		var p map[string]any
		if err := json.Unmarshal(res.Preferences, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nonzero := func(p map[string]any) bool {
		for _, row := range p["h"].([]any) {
			for _, v := range row.([]any) {
				if v.(float64) != 0 {
					return true
				}
			}
		}
		return false
	}
	if p := run(colocation.ColocationProfiles(), 0.1); !nonzero(p) {
		t.Errorf("with interference the bandit learned nothing: %v", p)
	}
	if p := run(nil, 0.1); p["h"] != nil && nonzero(p) {
		t.Errorf("without interference (no usage samples) the bandit learned: %v", p)
	}
	if p := run(colocation.ColocationProfiles(), 0); nonzero(p) {
		t.Errorf("step 0 moved the preferences: %v", p)
	}
}
