package ispark

import (
	"math"
	"testing"
)

// The idle breakdown accounts for every core-second: cpu used plus the
// classes is cores x makespan, every class is non-negative and each part
// is within its class. Alone, an application is never asked to give back
// (nobody waits), so nothing of it is classed by gamma, and the cores it
// does not hold are unreserved.
func TestIdleBreakdownAddsUp(t *testing.T) {
	alone := []IterApp{{Name: "a", Shape: bigShape()}}
	mixed, err := GenerateIterApps(12, ISparkMeanGapSec, ISparkMix, 2)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		apps   []IterApp
		policy string
	}{
		{"alone, iSpark", alone, IterISpark},
		{"mixed, dynamic", mixed, IterDynamic},
		{"mixed, iSpark", mixed, IterISpark},
	}
	for _, c := range cases {
		r, err := RunIter(c.apps, IterConfig{Policy: c.policy, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		b := r.Idle
		cores := float64(ISparkWorkers*ISparkWorkerCores) * r.Makespan
		if used := r.CPUUtil * cores; math.Abs(used+b.Total()-cores) > 1e-6*cores {
			t.Errorf("%s: used %.1f + idle %.1f = %.1f core-seconds, want %.1f", c.name, used, b.Total(), used+b.Total(), cores)
		}
		for _, v := range []float64{b.Unreserved, b.UnreservedWanted, b.Leaving, b.NoWork, b.NoWorkRecompute, b.Warmup,
			b.NotAsked, b.NotAskedQueued, b.AboveGamma, b.MemBound, b.UnderGamma} {
			if v < 0 {
				t.Errorf("%s: a negative class in %+v", c.name, b)
			}
		}
		if b.UnreservedWanted > b.Unreserved || b.NoWorkRecompute > b.NoWork || b.NotAskedQueued > b.NotAsked || b.MemBound > b.AboveGamma {
			t.Errorf("%s: a part above its class: %+v", c.name, b)
		}
		if c.policy == IterDynamic && b.Leaving != 0 {
			t.Errorf("%s: %.1f core-seconds leaving without handoffs", c.name, b.Leaving)
		}
		if c.name == "alone, iSpark" {
			// 120 of 160 cores at most are ever held
			if b.AboveGamma != 0 || b.UnderGamma != 0 || b.NotAskedQueued != 0 || b.NotAsked == 0 || b.Unreserved < 40*r.Makespan {
				t.Errorf("%s: %+v; want nothing classed by gamma, some not asked, >= 40 cores unreserved", c.name, b)
			}
		}
	}
}
