package sorter

import (
	"strings"
	"testing"

	"github.com/allot-sched/allot/resources"
)

func TestParseAgentSelection(t *testing.T) {
	tests := []struct {
		in   string
		want AgentSelection
	}{
		{"rrr", RRR}, {"RRR", RRR}, {" rrr ", RRR},
		{"bestfit", BestFit}, {"BestFit", BestFit}, {"best-fit", BestFit}, {"Best-Fit", BestFit},
		{"bf", BestFit}, {"BF", BestFit}, {" bf\t", BestFit},
		{"joint", Joint}, {"JOINT", Joint},
	}
	for _, tc := range tests {
		got, err := ParseAgentSelection(tc.in)
		if err != nil {
			t.Errorf("ParseAgentSelection(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseAgentSelection(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"", "random", "round-robin", "best fit", "bestfitt", "drf"} {
		_, err := ParseAgentSelection(bad)
		if err == nil {
			t.Errorf("ParseAgentSelection(%q) succeeded, want an error", bad)
			continue
		}
		msg := err.Error()
		if want := `"` + bad + `"`; !strings.Contains(msg, want) {
			t.Errorf("ParseAgentSelection(%q) error %q does not name the input", bad, msg)
		}
		for _, choice := range []string{"rrr", "bestfit", "joint"} {
			if !strings.Contains(msg, choice) {
				t.Errorf("ParseAgentSelection(%q) error %q does not list %q", bad, msg, choice)
			}
		}
	}
}

func TestAgentSelectionString(t *testing.T) {
	for _, tc := range []struct {
		s    AgentSelection
		want string
	}{
		{RRR, "rrr"}, {BestFit, "bestfit"}, {Joint, "joint"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%d.String() = %q, want %q", int(tc.s), got, tc.want)
		}
		// String is a flag value: it parses back to the same selection.
		if back, err := ParseAgentSelection(tc.s.String()); err != nil || back != tc.s {
			t.Errorf("ParseAgentSelection(%q) = %v, %v; want %v", tc.s.String(), back, err, tc.s)
		}
	}
	if RRR != 0 {
		t.Errorf("RRR = %d, want 0 (the zero value is the Mesos default)", RRR)
	}
}

func TestBestFitDistance(t *testing.T) {
	const total = "cpus:10;mem:100"
	tests := []struct {
		name         string
		demand       string
		avail, total string
		want         float64
	}{
		// d/T = (1/10, 10/100) = (0.1, 0.1), / max 0.1 = (1, 1);
		// avail/T = (5/10, 50/100) = (0.5, 0.5), / max 0.5 = (1, 1);
		// H = |1-1| + |1-1| = 0.
		{"same shape", "cpus:1;mem:10", "cpus:5;mem:50", total, 0},
		// Residual equal to the demand: (1, 1) vs (1, 1), H = 0.
		{"residual is the demand", "cpus:1;mem:10", "cpus:1;mem:10", total, 0},
		// avail/T = (0.5, 0.4) / 0.5 = (1, 0.8); H = 0 + 0.2 = 0.2.
		{"slightly short of mem", "cpus:1;mem:10", "cpus:5;mem:40", total, 0.2},
		// avail/T = (0.5, 0.25) / 0.5 = (1, 0.5); H = 0 + 0.5 = 0.5.
		{"short of mem", "cpus:1;mem:10", "cpus:5;mem:25", total, 0.5},
		// avail/T = (0.1, 0.5) / 0.5 = (0.2, 1); H = 0.8 + 0 = 0.8.
		{"short of cpus", "cpus:1;mem:10", "cpus:1;mem:50", total, 0.8},
		// avail/T = (0.5, 0) / 0.5 = (1, 0); H = 0 + 1 = 1.
		{"no mem left", "cpus:1;mem:10", "cpus:5", total, 1},
		// d = (1, 0), avail = (0, 1): H = 1 + 1 = 2, the worst for two kinds.
		{"opposite shapes", "cpus:1", "mem:50", total, 2},
		// Normalised by the cluster total, not raw units: d/T = (0.1,
		// 0.01) / 0.1 = (1, 0.1); avail (2 cpus, 20 mem)/T = (0.2, 0.2) /
		// 0.2 = (1, 1); H = 0.9 although raw d and avail are both 1:10.
		{"normalised by total", "cpus:1;mem:1", "cpus:2;mem:20", total, 0.9},
		// ... and avail (2, 2)/T = (0.2, 0.02) / 0.2 = (1, 0.1): H = 0.
		{"normalised same shape", "cpus:1;mem:1", "cpus:2;mem:2", total, 0},
		// Advisory bandwidths ignored even with nonzero totals: as "same
		// shape", H = 0 (net_bw 500/1000 and disk_bw 7/100 would differ).
		{"advisory ignored", "cpus:1;mem:10;net_bw:500", "cpus:5;mem:50;disk_bw:7",
			"cpus:10;mem:100;disk_bw:100;net_bw:1000", 0},
		// gpus with zero total skipped: as "same shape", H = 0.
		{"zero total kind skipped", "cpus:1;mem:10;gpus:1", "cpus:5;mem:50;gpus:3", total, 0},
		// gpus counted with a nonzero total: d/T = (0.1, 0.1, 0) -> (1, 1, 0);
		// avail/T = (0.5, 0.5, 2/4 = 0.5) -> (1, 1, 1); H = 1.
		{"gpus counted", "cpus:1;mem:10", "cpus:5;mem:50;gpus:2", "cpus:10;mem:100;gpus:4", 1},
		// Demand without cpus is defined (largest component, not cpus):
		// d/T = (0, 0.1) -> (0, 1); avail/T = (0.2, 0.4) -> (0.5, 1); H = 0.5.
		{"demand without cpus", "mem:10", "cpus:2;mem:40", total, 0.5},
		// Zero vectors have no shape: +Inf.
		{"zero demand", "", "cpus:5;mem:50", total, inf},
		{"zero residual", "cpus:1;mem:10", "", total, inf},
		{"both zero", "", "", total, inf},
		// Only advisory (or zero-total) kinds left: nothing to compare, +Inf.
		{"advisory-only demand", "net_bw:10", "cpus:5;mem:50;net_bw:10", "cpus:10;mem:100;net_bw:100", inf},
		{"advisory-only residual", "cpus:1;mem:10", "disk_bw:10", "cpus:10;mem:100;disk_bw:100", inf},
		{"residual only in zero-total kind", "cpus:1", "gpus:4", total, inf},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := BestFitDistance(vec(tc.demand), vec(tc.avail), vec(tc.total))
			if !near(got, tc.want) {
				t.Errorf("BestFitDistance(%s, %s, %s) = %v, want %v", tc.demand, tc.avail, tc.total, got, tc.want)
			}
		})
	}
}

// TestBestFitDistanceWorseShapeIsFarther: residuals drifting away from the
// demand's shape (d = 1 cpu, 10 mem, i.e. (1, 1) normalised) score larger.
func TestBestFitDistanceWorseShapeIsFarther(t *testing.T) {
	total, d := vec("cpus:10;mem:100"), vec("cpus:1;mem:10")
	// Hand-computed in TestBestFitDistance: 0, 0.2, 0.5, 1.
	avails := []string{"cpus:5;mem:50", "cpus:5;mem:40", "cpus:5;mem:25", "cpus:5"}
	prev := -1.0
	for _, a := range avails {
		h := BestFitDistance(d, vec(a), total)
		if !(h > prev) {
			t.Errorf("BestFitDistance(d, %s) = %v, not larger than %v for a better shape", a, h, prev)
		}
		prev = h
	}
}

// TestBestFitDistanceScaleFree: only the shape of the residual counts, so
// distance(d, k*avail) == distance(d, avail), and likewise for the demand.
// Exact equality matters: the allocator keeps the lower agent index on
// ties, and agents whose residuals differ only in scale must tie.
func TestBestFitDistanceScaleFree(t *testing.T) {
	totals := []resources.Vector{
		vec("cpus:10;mem:100"),
		vec("cpus:64;mem:262144;disk:1000000;gpus:8;disk_bw:800;net_bw:1250"),
		vec("cpus:37;mem:1234.5;disk:777"),
	}
	pairs := [][2]string{
		{"cpus:1;mem:10", "cpus:5;mem:25"},
		{"cpus:0.5;mem:2048", "cpus:3;mem:16384;disk:500"},
		{"cpus:0.3;mem:7", "cpus:1.1;mem:3.7;disk:9"},
		{"cpus:2;mem:1;gpus:1", "cpus:4;mem:3;gpus:1"},
		{"mem:10;disk:3", "cpus:1.7;mem:13;disk:0.9"},
		{"cpus:1;net_bw:50", "cpus:3;mem:5;net_bw:20"},
	}
	for _, tot := range totals {
		for _, p := range pairs {
			d, avail := vec(p[0]), vec(p[1])
			base := BestFitDistance(d, avail, tot)
			for _, k := range []int64{2, 3, 7, 10, 1000} {
				if got := BestFitDistance(d, avail.Times(k), tot); got != base {
					t.Errorf("total %v: distance(%s, %d*(%s)) = %v, distance(d, avail) = %v",
						tot, p[0], k, p[1], got, base)
				}
				if got := BestFitDistance(d.Times(k), avail, tot); got != base {
					t.Errorf("total %v: distance(%d*(%s), %s) = %v, distance(d, avail) = %v",
						tot, k, p[0], p[1], got, base)
				}
			}
		}
	}
}
