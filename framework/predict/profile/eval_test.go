package profile

import (
	"math"
	"math/rand"
	"testing"
)

func TestCrossValidate(t *testing.T) {
	lin := grid(func(st Setting) Run { return linear("lin", st) })
	noisy := grid(physical(rand.New(rand.NewSource(1)), 0.1))
	twoSame := []Run{
		{App: "same", Setting: Setting{Cores: 2, InputBytes: 1 << 30}, Stages: []StageObs{{Key: "a", Start: 1, End: 2, DiskBW: 10, NetBW: 10}}},
		{App: "same", Setting: Setting{Cores: 2, InputBytes: 1 << 30}, Stages: []StageObs{{Key: "a", Start: 1, End: 3, DiskBW: 20, NetBW: 10}}},
	}
	// Two settings, so each is copied from the other: starts of 0.01 and
	// 0.2 s differ by 0.19 s, which against the 0.5 s floor is 0.38.
	floors := []Run{
		{App: "floor", Setting: Setting{Cores: 1, InputBytes: 1 << 30}, Stages: []StageObs{{Key: "a", Start: 0.01, End: 10, DiskBW: 0, NetBW: 0.2}}},
		{App: "floor", Setting: Setting{Cores: 2, InputBytes: 1 << 30}, Stages: []StageObs{{Key: "a", Start: 0.2, End: 10, DiskBW: 0, NetBW: 0.2}}},
	}
	for _, tc := range []struct {
		name                 string
		runs                 []Run
		held, stages, regr   int
		minMedian, maxMedian float64
		startMedian, diskMed float64 // checked when >= 0
	}{
		{"exact family: no error, all regressed", lin, 25, 75, 75, 0, 1e-6, -1, -1},
		{"10 % noise: small, not zero", noisy, 25, 100, 100, 0.01, 0.15, -1, -1},
		{"one setting: nothing held out", twoSame, 0, 0, 0, 0, 0, -1, -1},
		{"near-zero measurements meet the floors", floors, 2, 2, 0, 0, 0.38 + 1e-9, 0.38, 0},
	} {
		ev := CrossValidate(tc.runs)
		if len(ev) != 1 {
			t.Fatalf("%s: %d applications, want 1", tc.name, len(ev))
		}
		e := ev[0]
		if e.Runs != len(tc.runs) || e.Held != tc.held || e.Stages != tc.stages || e.Regressed != tc.regr {
			t.Errorf("%s: runs %d held %d stages %d regressed %d, want %d %d %d %d", tc.name, e.Runs, e.Held, e.Stages, e.Regressed,
				len(tc.runs), tc.held, tc.stages, tc.regr)
		}
		// the floors case's stages last 9.8-9.99 s: every stage here is long
		if e.LongStages != e.Stages || e.LongAll != e.All {
			t.Errorf("%s: %d long stages of %d, long median %v against %v; want all long", tc.name, e.LongStages, e.Stages, e.LongAll, e.All)
		}
		if e.All < tc.minMedian || e.All > tc.maxMedian {
			t.Errorf("%s: median error %.4f, want in [%v, %v]", tc.name, e.All, tc.minMedian, tc.maxMedian)
		}
		if tc.startMedian >= 0 && math.Abs(e.Median[0]-tc.startMedian) > 1e-9 {
			t.Errorf("%s: start error %v, want %v", tc.name, e.Median[0], tc.startMedian)
		}
		if tc.diskMed >= 0 && e.Median[2] != tc.diskMed {
			t.Errorf("%s: disk error %v, want %v", tc.name, e.Median[2], tc.diskMed)
		}
		t.Logf("%s: %+v", tc.name, e)
	}
}
