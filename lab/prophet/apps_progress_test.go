package prophet

import "testing"

// TestProgressReanchorsTimelines checks the diagnostics and the progress
// reports together: anchored at launch, the timeline misses most of the
// over-allocation of a contended run and predicts many executors finished
// while they run; re-anchored on progress it sees nearly all of it.
func TestProgressReanchorsTimelines(t *testing.T) {
	apps, nodes := ProphetSetup(1, 0.1)
	apps = apps[:45]
	nodes = nodes[:8]
	tests := []struct {
		progress         int
		minMiss, maxMiss float64
		minPast, maxPast float64
	}{
		{0, 0.3, 1, 0.2, 1},
		{10, 0, 0.05, 0, 0.02},
		{1, 0, 0.05, 0, 0},
	}
	for _, tc := range tests {
		res, err := RunApps(append([]App(nil), apps...), nodes, AppConfig{Policy: policy(t, "prophet"), Seed: 1,
			Degrade: true, Beta: DefaultBeta, Diagnose: true, Progress: tc.progress})
		if err != nil {
			t.Fatal(err)
		}
		d := res.Diag
		if d == nil {
			t.Fatal("no diagnostics")
		}
		if d.MissFrac < tc.minMiss || d.MissFrac > tc.maxMiss || d.PastEndFrac < tc.minPast || d.PastEndFrac > tc.maxPast {
			t.Errorf("progress %d: miss %.3f past-end %.3f, want miss in [%v, %v], past-end in [%v, %v]",
				tc.progress, d.MissFrac, d.PastEndFrac, tc.minMiss, tc.maxMiss, tc.minPast, tc.maxPast)
		}
		if d.DiskLoad <= 0 || d.NetLoad <= 0 {
			t.Errorf("progress %d: loads %v %v", tc.progress, d.DiskLoad, d.NetLoad)
		}
	}
}
