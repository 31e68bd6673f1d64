package sim

import (
	"math"
	"testing"
)

// TestNodeUsage: I/O wait appears only when the disk is oversubscribed,
// and then as a share of the idle CPU time; CPU busy is capped at 1.
func TestNodeUsage(t *testing.T) {
	caps := [3]float64{4, 300, 125}
	cases := []struct {
		name                string
		used, demand        [3]float64
		wantCPU, wantIOWait float64
	}{
		{"disk keeps up", [3]float64{2, 200, 10}, [3]float64{2, 200, 10}, 0.5, 0},
		{"disk twice over", [3]float64{1, 300, 10}, [3]float64{1, 600, 10}, 0.25, 0.75 * 0.5},
		{"cpu over", [3]float64{4, 0, 0}, [3]float64{6, 0, 0}, 1, 0},
	}
	for _, c := range cases {
		u := nodeUsage(c.used, c.demand, caps)
		if math.Abs(u.CPU-c.wantCPU) > 1e-12 || math.Abs(u.IOWait-c.wantIOWait) > 1e-12 {
			t.Errorf("%s: cpu %v iowait %v, want %v %v", c.name, u.CPU, u.IOWait, c.wantCPU, c.wantIOWait)
		}
	}
}
