package sorter

import (
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/allot-sched/allot/resources"
)

// vec builds a Vector from the Mesos text form, e.g. "cpus:5;mem:1". Values
// are whole units; the Vector holds thousandths.
func vec(s string) resources.Vector { return resources.MustParse(s).Scalars }

var inf = math.Inf(1)

// near reports whether got equals want up to float rounding (relative 1e-12),
// with infinities and zeros compared exactly.
func near(got, want float64) bool {
	if math.IsInf(want, 0) || want == 0 {
		return got == want
	}
	return math.Abs(got-want) <= 1e-12*math.Abs(want)
}

func TestDRFKey(t *testing.T) {
	tests := []struct {
		name   string
		alloc  string
		weight float64
		total  string
		want   float64
	}{
		// max(2/10 cpus, 4/40 mem) = max(0.2, 0.1) = 0.2; / 1 = 0.2.
		{"cpus dominant", "cpus:2;mem:4", 1, "cpus:10;mem:40", 0.2},
		// max(1/10, 30/40) = max(0.1, 0.75) = 0.75.
		{"mem dominant", "cpus:1;mem:30", 1, "cpus:10;mem:40", 0.75},
		// max(0, 50/200 disk) = 0.25: disk is a reservable kind.
		{"disk dominant", "disk:50", 1, "cpus:10;disk:200", 0.25},
		// max(0.2, 0.1) = 0.2; / phi=2 = 0.1.
		{"weight 2 halves", "cpus:2;mem:4", 2, "cpus:10;mem:40", 0.1},
		// 0.2 / phi=0.5 = 0.4.
		{"weight 0.5 doubles", "cpus:2;mem:4", 0.5, "cpus:10;mem:40", 0.4},
		// cpus 1/10 = 0.1, mem 1/10 = 0.1; disk_bw 900/1000 = 0.9 and
		// net_bw 900/1000 = 0.9 are advisory and ignored: 0.1.
		{"advisory ignored", "cpus:1;mem:1;disk_bw:900;net_bw:900", 1,
			"cpus:10;mem:10;disk_bw:1000;net_bw:1000", 0.1},
		// cpus 1/4 = 0.25; gpus has total 0, skipped (not +Inf): 0.25.
		{"zero total skipped", "cpus:1;gpus:2", 1, "cpus:4", 0.25},
		// Nothing allocated: 0.
		{"nothing allocated", "", 1, "cpus:10;mem:40", 0},
		// Empty cluster: every kind skipped, 0.
		{"empty cluster", "cpus:1", 1, "", 0},
		// max(3/12, 1/8) = 0.25 over cpus; gpus 1/4 = 0.25 ties; / 1 = 0.25.
		{"gpus counted", "cpus:3;mem:1;gpus:1", 1, "cpus:12;mem:8;gpus:4", 0.25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &Framework{Weight: tc.weight, Allocated: vec(tc.alloc)}
			c := &Cluster{Total: vec(tc.total)}
			if got := (DRF{}).Key(f, c); !near(got, tc.want) {
				t.Errorf("DRF key of %s over %s, phi=%v = %v, want %v", tc.alloc, tc.total, tc.weight, got, tc.want)
			}
		})
	}
}

func TestTSFKey(t *testing.T) {
	total := "cpus:12;mem:8;net_bw:100"
	tests := []struct {
		name     string
		demand   string
		alloc    string
		weight   float64
		tasks    int64
		maxTasks int64
		want     float64
	}{
		// t = x/(phi N) = 3/(1*12) = 0.25.
		{"x over N", "cpus:1;mem:2", "cpus:3;mem:6", 1, 3, 12, 0.25},
		// 3/(2*12) = 0.125.
		{"weight 2", "cpus:1;mem:2", "cpus:3;mem:6", 2, 3, 12, 0.125},
		// 3/(0.5*12) = 0.5.
		{"weight 0.5", "cpus:1;mem:2", "cpus:3;mem:6", 0.5, 3, 12, 0.5},
		// 0/(1*12) = 0.
		{"no tasks yet", "cpus:1;mem:2", "", 1, 0, 12, 0},
		// The allocation does not enter TSF with a demand: 1/(1*4) = 0.25
		// although the dominant share 12/12 would be 1.
		{"allocation ignored with demand", "cpus:1", "cpus:12", 1, 1, 4, 0.25},
		// N = 0 (no task fits anywhere): +Inf, never x/0 = NaN.
		{"max tasks 0", "cpus:1;mem:2", "", 1, 0, 0, inf},
		{"max tasks 0 with tasks", "cpus:1;mem:2", "cpus:1;mem:2", 1, 1, 0, inf},
		// No demand: DRF, max(3/12, 1/8) = max(0.25, 0.125) = 0.25; Tasks
		// and MaxTasks are ignored (MaxTasks 0 would otherwise give +Inf).
		{"fallback to DRF", "", "cpus:3;mem:1", 1, 5, 0, 0.25},
		// DRF with phi=2: 0.25/2 = 0.125.
		{"fallback to DRF weighted", "", "cpus:3;mem:1", 2, 5, 7, 0.125},
		// DRF fallback ignores advisory kinds: max(2/8 mem) = 0.25; net_bw
		// 100/100 = 1 would dominate.
		{"fallback ignores advisory", "", "mem:2;net_bw:100", 1, 0, 0, 0.25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &Framework{Weight: tc.weight, Demand: vec(tc.demand), Allocated: vec(tc.alloc),
				Tasks: tc.tasks, MaxTasks: tc.maxTasks}
			c := &Cluster{Total: vec(total)}
			if got := (TSF{}).Key(f, c); !near(got, tc.want) {
				t.Errorf("TSF key = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTaskCapacity(t *testing.T) {
	tests := []struct {
		name   string
		demand string
		cap    string
		want   int64
	}{
		// min(floor(100/5), floor(30/1)) = min(20, 30) = 20.
		{"cpus bound", "cpus:5;mem:1", "cpus:100;mem:30", 20},
		// min(floor(30/5), floor(100/1)) = min(6, 100) = 6.
		{"cpus bound small", "cpus:5;mem:1", "cpus:30;mem:100", 6},
		// min(floor(100/1), floor(30/5)) = min(100, 6) = 6.
		{"mem bound", "cpus:1;mem:5", "cpus:100;mem:30", 6},
		// min(floor(10/1.5)=floor(6.67)=6, floor(100/1)=100) = 6.
		{"floor", "cpus:1.5;mem:1", "cpus:10;mem:100", 6},
		// Fixed point: 0.9/0.3 = 3 exactly (900/300), where float64
		// 0.9/0.3 = 2.9999999999999996 would floor to 2.
		{"fixed point exact", "cpus:0.3", "cpus:0.9", 3},
		// Demand larger than capacity: floor(2/4) = 0.
		{"does not fit", "cpus:4", "cpus:2;mem:100", 0},
		// Demanded kind absent from c: floor(0/1) = 0.
		{"demanded kind absent", "cpus:1;gpus:1", "cpus:8", 0},
		// Only mem demanded: floor(9/2) = 4; cpus (0 in c) is not demanded.
		{"undemanded kinds ignored", "mem:2", "mem:9", 4},
		// min(floor(20/2) disk=10, floor(8/1) cpus=8) = 8.
		{"disk counted", "cpus:1;disk:2", "cpus:8;disk:20", 8},
		// Zero demand: 0 by definition (not "infinitely many").
		{"zero demand", "", "cpus:8;mem:8", 0},
		// net_bw is advisory: min over cpus only = floor(4/1) = 4, although
		// floor(50/100) = 0 on net_bw.
		{"advisory ignored", "cpus:1;net_bw:100", "cpus:4;net_bw:50", 4},
		// Only advisory kinds demanded: no countable kind, 0.
		{"advisory only demand", "disk_bw:10;net_bw:10", "cpus:4;disk_bw:100;net_bw:100", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := TaskCapacity(vec(tc.demand), vec(tc.cap)); got != tc.want {
				t.Errorf("TaskCapacity(%s, %s) = %d, want %d", tc.demand, tc.cap, got, tc.want)
			}
		})
	}
}

// separableCase is one PS-DSF or rPS-DSF score with a declared demand.
type separableCase struct {
	name      string
	demand    string
	tasks     int64
	weight    float64
	capacity  string
	available string
	ff, af    float64 // hand-computed framework and agent factors
	want      float64 // hand-computed score
}

// checkSeparable checks FrameworkFactor, AgentFactor and Score against the
// hand-computed values, and that Score is exactly the allocator's product of
// the two factors (bit for bit, as Separable requires).
func checkSeparable(t *testing.T, s Separable, tests []separableCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &Framework{Weight: tc.weight, Demand: vec(tc.demand), Tasks: tc.tasks,
				Allocated: vec(tc.demand).Times(tc.tasks)}
			a := &Agent{Capacity: vec(tc.capacity), Available: vec(tc.available)}
			c := &Cluster{Total: vec(tc.capacity)}
			ff, af, got := s.FrameworkFactor(f), s.AgentFactor(f.Demand, a), s.Score(f, a, c)
			if !near(ff, tc.ff) {
				t.Errorf("FrameworkFactor = %v, want %v", ff, tc.ff)
			}
			if !near(af, tc.af) {
				t.Errorf("AgentFactor = %v, want %v", af, tc.af)
			}
			if !near(got, tc.want) {
				t.Errorf("Score = %v, want %v", got, tc.want)
			}
			prod := ff * af
			if ff == 0 {
				prod = 0
			}
			if got != prod || math.Signbit(got) != math.Signbit(prod) {
				t.Errorf("Score = %v, not exactly FrameworkFactor*AgentFactor = %v*%v = %v", got, ff, af, prod)
			}
			if math.IsNaN(got) {
				t.Errorf("Score is NaN")
			}
		})
	}
}

func TestPSDSFDeclared(t *testing.T) {
	checkSeparable(t, PSDSF{}, []separableCase{
		// K = x max_r d_r/(phi c_r): ff = 3/1 = 3; af = max(5/100, 1/30) =
		// max(0.05, 0.0333) = 0.05; K = 3*0.05 = 0.15.
		{"cpus dominant", "cpus:5;mem:1", 3, 1, "cpus:100;mem:30", "cpus:100;mem:30", 3, 0.05, 0.15},
		// ff = 2/2 = 1; af = max(5/30, 1/100) = 1/6; K = 1/6.
		{"weighted", "cpus:5;mem:1", 2, 2, "cpus:30;mem:100", "cpus:30;mem:100", 1, 1.0 / 6, 1.0 / 6},
		// PS-DSF divides by capacity, not the residual: af = max(5/100,
		// 1/30) = 0.05 although only cpus:5;mem:1 is left; ff = 4/0.5 = 8;
		// K = 8*0.05 = 0.4.
		{"capacity not residual", "cpus:5;mem:1", 4, 0.5, "cpus:100;mem:30", "cpus:5;mem:1", 8, 0.05, 0.4},
		// net_bw is advisory: af = 1/10 = 0.1 (net_bw 1000/10 = 100 would
		// dominate); ff = 1; K = 0.1.
		{"advisory ignored", "cpus:1;net_bw:1000", 1, 1, "cpus:10;net_bw:10", "cpus:10;net_bw:10", 1, 0.1, 0.1},
		// Zero tasks: ff = 0/1 = 0, K = 0 on every server.
		{"zero tasks", "cpus:5;mem:1", 0, 1, "cpus:100;mem:30", "cpus:100;mem:30", 0, 0.05, 0},
		// Zero tasks on a server the task cannot fit (no gpus): af = +Inf,
		// K = 0 (0*Inf would be NaN).
		{"zero tasks, never fits", "cpus:1;gpus:1", 0, 1, "cpus:8", "cpus:8", 0, inf, 0},
		// One task that cannot fit: ff = 1, af = +Inf, K = +Inf.
		{"never fits", "cpus:1;gpus:1", 1, 1, "cpus:8", "cpus:8", 1, inf, inf},
	})
}

func TestRPSDSFDeclared(t *testing.T) {
	checkSeparable(t, RPSDSF{}, []separableCase{
		// K~ = x max_r d_r/(phi avail_r): ff = 4/1 = 4; af = max(5/50,
		// 1/2) = max(0.1, 0.5) = 0.5; K~ = 4*0.5 = 2.
		{"residual", "cpus:5;mem:1", 4, 1, "cpus:100;mem:30", "cpus:50;mem:2", 4, 0.5, 2},
		// Untouched server: avail = c, af = max(5/100, 1/30) = 0.05;
		// ff = 3/2 = 1.5; K~ = 0.075.
		{"untouched equals PS-DSF", "cpus:5;mem:1", 3, 2, "cpus:100;mem:30", "cpus:100;mem:30", 1.5, 0.05, 0.075},
		// Demanded mem exhausted: af = +Inf, ff = 1, K~ = +Inf.
		{"exhausted demanded kind", "cpus:5;mem:1", 1, 1, "cpus:100;mem:30", "cpus:50", 1, inf, inf},
		// Zero tasks: 0 even on the exhausted server (0*Inf would be NaN).
		{"zero tasks", "cpus:5;mem:1", 0, 1, "cpus:100;mem:30", "cpus:50", 0, inf, 0},
		// Advisory net_bw ignored: af = 1/4 = 0.25; ff = 2; K~ = 0.5.
		{"advisory ignored", "cpus:1;net_bw:100", 2, 1, "cpus:8;net_bw:100", "cpus:4;net_bw:1", 2, 0.25, 0.5},
	})
}

func TestPSDSFOblivious(t *testing.T) {
	tests := []struct {
		name     string
		alloc    string
		weight   float64
		capacity string
		avail    string
		want     float64
	}{
		// No demand: max_r a_r/(phi c_r) = max(10/100, 6/30) = max(0.1, 0.2)
		// = 0.2; / phi=1 = 0.2.
		{"mem dominant", "cpus:10;mem:6", 1, "cpus:100;mem:30", "cpus:90;mem:24", 0.2},
		// 0.2 / phi=2 = 0.1.
		{"weighted", "cpus:10;mem:6", 2, "cpus:100;mem:30", "cpus:90;mem:24", 0.1},
		// Capacity, not the residual: still 0.2 with the server nearly full.
		{"capacity not residual", "cpus:10;mem:6", 1, "cpus:100;mem:30", "cpus:1;mem:1", 0.2},
		// Advisory ignored: max(10/100) = 0.1; net_bw 500/10 would be 50.
		{"advisory ignored", "cpus:10;net_bw:500", 1, "cpus:100;net_bw:10", "cpus:90", 0.1},
		// Nothing held: 0.
		{"nothing held", "", 1, "cpus:100;mem:30", "cpus:100;mem:30", 0},
		// GPUs held elsewhere on a server without gpus: skipped, not +Inf,
		// so a GPU holder still competes for cpu-only servers: 2/8 = 0.25.
		{"kind the server lacks skipped", "cpus:2;gpus:1", 1, "cpus:8;mem:64", "cpus:8;mem:64", 0.25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &Framework{Weight: tc.weight, Allocated: vec(tc.alloc), Tasks: 7}
			a := &Agent{Capacity: vec(tc.capacity), Available: vec(tc.avail)}
			if got := (PSDSF{}).Score(f, a, &Cluster{Total: vec(tc.capacity)}); !near(got, tc.want) {
				t.Errorf("PS-DSF oblivious score = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRPSDSFOblivious(t *testing.T) {
	tests := []struct {
		name     string
		alloc    string
		weight   float64
		capacity string
		avail    string
		want     float64
	}{
		// max_r a_r/(phi avail_r) = max(10/40, 4/16) = max(0.25, 0.25) = 0.25.
		{"residual", "cpus:10;mem:4", 1, "cpus:100;mem:30", "cpus:40;mem:16", 0.25},
		// max(10/40, 4/8) = 0.5; / phi=2 = 0.25.
		{"weighted", "cpus:10;mem:4", 2, "cpus:100;mem:30", "cpus:40;mem:8", 0.25},
		// mem and gpus exhausted on this server (avail 0): skipped rather
		// than +Inf; cpus 10/40 = 0.25.
		{"exhausted skipped", "cpus:10;mem:4;gpus:1", 1, "cpus:100;mem:30;gpus:1", "cpus:40", 0.25},
		// A kind the server never had (gpus) is skipped the same way:
		// max(2/8) = 0.25.
		{"absent kind skipped", "cpus:2;gpus:2", 1, "cpus:16", "cpus:8", 0.25},
		// Everything exhausted: nothing to measure, 0.
		{"all exhausted", "cpus:10;mem:4", 1, "cpus:100;mem:30", "", 0},
		// Advisory net_bw skipped: 3/12 = 0.25; net_bw 100/1 would be 100.
		{"advisory ignored", "cpus:3;net_bw:100", 1, "cpus:16;net_bw:100", "cpus:12;net_bw:1", 0.25},
		// Nothing held: 0.
		{"nothing held", "", 1, "cpus:16", "cpus:8", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &Framework{Weight: tc.weight, Allocated: vec(tc.alloc), Tasks: 7}
			a := &Agent{Capacity: vec(tc.capacity), Available: vec(tc.avail)}
			got := (RPSDSF{}).Score(f, a, &Cluster{Total: vec(tc.capacity)})
			if !near(got, tc.want) {
				t.Errorf("rPS-DSF oblivious score = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFIFOKey(t *testing.T) {
	c := &Cluster{Total: vec("cpus:10;mem:10")}
	for _, tc := range []struct {
		index int
		alloc string
		want  float64
	}{
		// The key is the registration index, whatever is held or weighted.
		{0, "cpus:10;mem:10", 0},
		{1, "", 1},
		{7, "cpus:1", 7},
	} {
		f := &Framework{Index: tc.index, Weight: 3, Allocated: vec(tc.alloc)}
		if got := (FIFO{}).Key(f, c); got != tc.want {
			t.Errorf("FIFO key of index %d = %v, want %v", tc.index, got, tc.want)
		}
	}
}

func TestCapacityKey(t *testing.T) {
	tests := []struct {
		name   string
		alloc  string
		weight float64
		total  string
		want   float64
	}{
		// Memory only: 10/40 = 0.25, although cpus 90/100 = 0.9.
		{"memory only", "cpus:90;mem:10", 1, "cpus:100;mem:40", 0.25},
		// 10/40 / phi=0.5 = 0.5.
		{"weighted", "cpus:90;mem:10", 0.5, "cpus:100;mem:40", 0.5},
		// 0.25 / phi=2 = 0.125.
		{"weighted 2", "mem:10", 2, "mem:40", 0.125},
		// No memory held: 0, whatever else is held (disk, gpus).
		{"no memory", "disk:100;gpus:4", 1, "mem:40;disk:100;gpus:4", 0},
		// No memory in the cluster: 0 (Ratio by zero), not NaN or +Inf.
		{"zero total", "mem:10", 1, "cpus:10", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &Framework{Weight: tc.weight, Allocated: vec(tc.alloc)}
			if got := (Capacity{}).Key(f, &Cluster{Total: vec(tc.total)}); !near(got, tc.want) {
				t.Errorf("capacity key = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTetrisScore(t *testing.T) {
	tests := []struct {
		name     string
		demand   string
		capacity string
		avail    string
		want     float64
	}{
		// A = sum_r (d_r/c_r)(avail_r/c_r)
		//   = (2/8)(4/8) + (4/16)(16/16) + (50/100)(100/100) + (10/100)(50/100)
		//   = 0.125 + 0.25 + 0.5 + 0.05 = 0.925; Score = -A = -0.925.
		{"four kinds", "cpus:2;mem:4;disk_bw:50;net_bw:10",
			"cpus:8;mem:16;disk_bw:100;net_bw:100", "cpus:4;mem:16;disk_bw:100;net_bw:50", -0.925},
		// disk and gpus are not among Tetris's four kinds: same -0.925.
		{"disk and gpus not packed", "cpus:2;mem:4;disk:100;gpus:1;disk_bw:50;net_bw:10",
			"cpus:8;mem:16;disk:200;gpus:2;disk_bw:100;net_bw:100",
			"cpus:4;mem:16;disk:200;gpus:2;disk_bw:100;net_bw:50", -0.925},
		// Kinds the server lacks (c = 0) are skipped: (2/8)(8/8) = 0.25.
		{"absent kinds skipped", "cpus:2;net_bw:10", "cpus:8", "cpus:8", -0.25},
		// Server full: every avail_r = 0, A = 0.
		{"server full", "cpus:2;mem:4", "cpus:8;mem:16", "", 0},
		// No demand: A = 0, registration order decides.
		{"no demand", "", "cpus:8;mem:16", "cpus:8;mem:16", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &Framework{Weight: 1, Demand: vec(tc.demand)}
			a := &Agent{Capacity: vec(tc.capacity), Available: vec(tc.avail)}
			if got := (Tetris{}).Score(f, a, &Cluster{}); !near(got, tc.want) {
				t.Errorf("Tetris score = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTetrisPrefersFreeResourceTheTaskNeeds: a memory-heavy task aligns
// better with the server that has more free memory, and a cpu-heavy task
// with the one that has more free cpus; lower Score is served first.
func TestTetrisPrefersFreeResourceTheTaskNeeds(t *testing.T) {
	c := vec("cpus:10;mem:10")
	memFree := &Agent{Index: 0, Capacity: c, Available: vec("cpus:2;mem:8")}
	cpuFree := &Agent{Index: 1, Capacity: c, Available: vec("cpus:8;mem:2")}
	memTask := &Framework{Weight: 1, Demand: vec("cpus:1;mem:4")}
	cpuTask := &Framework{Weight: 1, Demand: vec("cpus:4;mem:1")}
	var tt Tetris
	// mem task: memFree A = 0.1*0.2 + 0.4*0.8 = 0.34; cpuFree A = 0.1*0.8 +
	// 0.4*0.2 = 0.16. -0.34 < -0.16.
	if m, c := tt.Score(memTask, memFree, nil), tt.Score(memTask, cpuFree, nil); !(m < c) || !near(m, -0.34) || !near(c, -0.16) {
		t.Errorf("mem task: score on mem-free server %v, on cpu-free server %v; want -0.34 < -0.16", m, c)
	}
	// cpu task: symmetric, cpuFree -0.34 < memFree -0.16.
	if m, c := tt.Score(cpuTask, memFree, nil), tt.Score(cpuTask, cpuFree, nil); !(c < m) || !near(c, -0.34) || !near(m, -0.16) {
		t.Errorf("cpu task: score on cpu-free server %v, on mem-free server %v; want -0.34 < -0.16", c, m)
	}
	// More of the needed resource free, all else equal, is strictly better:
	// net_bw 80 free vs 20 free for a net_bw-heavy task.
	cn := vec("cpus:10;net_bw:100")
	netTask := &Framework{Weight: 1, Demand: vec("cpus:1;net_bw:50")}
	lots := tt.Score(netTask, &Agent{Capacity: cn, Available: vec("cpus:5;net_bw:80")}, nil)
	little := tt.Score(netTask, &Agent{Capacity: cn, Available: vec("cpus:5;net_bw:20")}, nil)
	// lots: 0.1*0.5 + 0.5*0.8 = 0.45; little: 0.05 + 0.5*0.2 = 0.15.
	if !(lots < little) || !near(lots, -0.45) || !near(little, -0.15) {
		t.Errorf("net task: %v with net_bw free, %v without; want -0.45 < -0.15", lots, little)
	}
}

func TestRandomWeight(t *testing.T) {
	for _, w := range []float64{0.5, 1, 2.5} {
		f := &Framework{Weight: w, Allocated: vec("cpus:3")}
		if got := (Random{}).Weight(f); got != w {
			t.Errorf("Random weight = %v, want phi = %v", got, w)
		}
	}
}

// TestPaperExample is the illustrative example of the DRF/TSF/PS-DSF paper
// (shared/papers/mesos-fair-allocators-drf-tsf-psdsf.md, (1) and (2)):
// d1 = (5 cpus, 1 mem), d2 = (1, 5), c1 = (100, 30), c2 = (30, 100).
func TestPaperExample(t *testing.T) {
	d1, d2 := vec("cpus:5;mem:1"), vec("cpus:1;mem:5")
	c1, c2 := vec("cpus:100;mem:30"), vec("cpus:30;mem:100")

	// N_1 = min(100/5, 30/1) + min(30/5, 100/1) = 20 + 6 = 26.
	// N_2 = min(100/1, 30/5) + min(30/1, 100/5) = 6 + 20 = 26.
	capacity := [2][2]int64{{20, 6}, {6, 20}}
	for n, d := range []resources.Vector{d1, d2} {
		var sum int64
		for i, c := range []resources.Vector{c1, c2} {
			got := TaskCapacity(d, c)
			if got != capacity[n][i] {
				t.Errorf("TaskCapacity(d%d, c%d) = %d, want %d", n+1, i+1, got, capacity[n][i])
			}
			sum += got
		}
		if sum != 26 {
			t.Errorf("N_%d = %d, want 26", n+1, sum)
		}
	}

	// PS-DSF per-task factors max_r d_{n,r}/c_{i,r}:
	// d1 on c1: max(5/100, 1/30) = 0.05;  d1 on c2: max(5/30, 1/100) = 1/6;
	// d2 on c1: max(1/100, 5/30) = 1/6;   d2 on c2: max(1/30, 5/100) = 0.05.
	a1, a2 := &Agent{Index: 0, Capacity: c1, Available: c1}, &Agent{Index: 1, Capacity: c2, Available: c2}
	factor := [2][2]float64{{0.05, 1.0 / 6}, {1.0 / 6, 0.05}}
	for n, d := range []resources.Vector{d1, d2} {
		for i, a := range []*Agent{a1, a2} {
			if got := (PSDSF{}).AgentFactor(d, a); !near(got, factor[n][i]) {
				t.Errorf("PS-DSF factor of d%d on c%d = %v, want %v", n+1, i+1, got, factor[n][i])
			}
			// On untouched servers rPS-DSF's factor is the same.
			if got := (RPSDSF{}).AgentFactor(d, a); !near(got, factor[n][i]) {
				t.Errorf("rPS-DSF factor of d%d on c%d = %v, want %v", n+1, i+1, got, factor[n][i])
			}
		}
	}

	// With one task each, PS-DSF on server 1 serves framework 1 (K = 1*0.05)
	// before framework 2 (K = 1*(1/6)), and on server 2 the reverse.
	cl := &Cluster{Total: c1.Add(c2)}
	f1 := &Framework{Index: 0, Weight: 1, Demand: d1, Tasks: 1, Allocated: d1, MaxTasks: 26}
	f2 := &Framework{Index: 1, Weight: 1, Demand: d2, Tasks: 1, Allocated: d2, MaxTasks: 26}
	if k1, k2 := (PSDSF{}).Score(f1, a1, cl), (PSDSF{}).Score(f2, a1, cl); !(k1 < k2) {
		t.Errorf("server 1: K_1 = %v, K_2 = %v; want K_1 < K_2", k1, k2)
	}
	if k1, k2 := (PSDSF{}).Score(f1, a2, cl), (PSDSF{}).Score(f2, a2, cl); !(k2 < k1) {
		t.Errorf("server 2: K_1 = %v, K_2 = %v; want K_2 < K_1", k1, k2)
	}
	// TSF: t = 1/(1*26) for both; DRF: max(5/130, 1/130) = 5/130 for both.
	for _, f := range []*Framework{f1, f2} {
		if got := (TSF{}).Key(f, cl); !near(got, 1.0/26) {
			t.Errorf("TSF key = %v, want 1/26", got)
		}
		if got := (DRF{}).Key(f, cl); !near(got, 5.0/130) {
			t.Errorf("DRF key = %v, want 5/130", got)
		}
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		in   string
		want string // canonical Name()
	}{
		{"drf", "drf"}, {"DRF", "drf"}, {" Drf ", "drf"},
		{"tsf", "tsf"}, {"TSF", "tsf"},
		{"psdsf", "psdsf"}, {"ps-dsf", "psdsf"}, {"PS-DSF", "psdsf"}, {"PsDsf", "psdsf"},
		{"rpsdsf", "rpsdsf"}, {"rps-dsf", "rpsdsf"}, {"rPS-DSF", "rpsdsf"}, {"RPSDSF", "rpsdsf"},
		{"fifo", "fifo"}, {"FIFO", "fifo"},
		{"capacity", "capacity"}, {"Capacity", "capacity"},
		{"tetris", "tetris"}, {"TETRIS", "tetris"},
		{"random", "random"}, {"Random", "random"},
	}
	for _, tc := range tests {
		c, err := Lookup(tc.in)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tc.in, err)
			continue
		}
		if c.Name() != tc.want {
			t.Errorf("Lookup(%q).Name() = %q, want %q", tc.in, c.Name(), tc.want)
		}
	}
	choices := strings.Join(Names(), ", ")
	for _, bad := range []string{"", "dfr", "bf-drf", "ps dsf", "prophet2"} {
		c, err := Lookup(bad)
		if err == nil {
			t.Errorf("Lookup(%q) = %v, want an error", bad, c)
			continue
		}
		if c != nil {
			t.Errorf("Lookup(%q) returned %v with its error", bad, c)
		}
		msg := err.Error()
		if want := `"` + bad + `"`; !strings.Contains(msg, want) {
			t.Errorf("Lookup(%q) error %q does not name the input", bad, msg)
		}
		if !strings.Contains(msg, choices) {
			t.Errorf("Lookup(%q) error %q does not list the choices %q", bad, msg, choices)
		}
	}
}

func TestNames(t *testing.T) {
	got := Names()
	want := []string{"bandit", "capacity", "drf", "fifo", "fsp", "fspy", "prophet", "psdsf", "random", "rpsdsf", "tetris", "tetris-peak", "tsf"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	if !sort.StringsAreSorted(got) {
		t.Errorf("Names() = %v, not sorted", got)
	}
	seen := map[string]bool{}
	for _, n := range got {
		if seen[n] {
			t.Errorf("Names() lists %q twice", n)
		}
		seen[n] = true
	}
	// Deterministic despite map iteration.
	for i := 0; i < 20; i++ {
		if again := Names(); !reflect.DeepEqual(again, got) {
			t.Fatalf("Names() = %v, then %v", got, again)
		}
	}
}

// TestEveryNameHasOneShape: every canonical name resolves to a criterion
// whose Name is that name and which is exactly one of Ordering, PerAgent,
// Sampler, so the allocator can dispatch on the shape unambiguously.
func TestEveryNameHasOneShape(t *testing.T) {
	wantShape := map[string]string{
		"drf": "Ordering", "tsf": "Ordering", "fifo": "Ordering", "capacity": "Ordering",
		"psdsf": "PerAgent", "rpsdsf": "PerAgent", "tetris": "PerAgent",
		"random": "Sampler", "prophet": "Ordering", "tetris-peak": "Ordering",
		"bandit": "CoLocating",
		"fsp":    "Ordering", "fspy": "Ordering",
	}
	for _, n := range Names() {
		c, err := Lookup(n)
		if err != nil {
			t.Errorf("Lookup(%q): %v", n, err)
			continue
		}
		if c.Name() != n {
			t.Errorf("Lookup(%q).Name() = %q", n, c.Name())
		}
		var shapes []string
		if _, ok := c.(Ordering); ok {
			shapes = append(shapes, "Ordering")
		}
		if _, ok := c.(PerAgent); ok {
			shapes = append(shapes, "PerAgent")
		}
		if _, ok := c.(Sampler); ok {
			shapes = append(shapes, "Sampler")
		}
		if _, ok := c.(CoLocating); ok {
			shapes = append(shapes, "CoLocating")
		}
		if len(shapes) != 1 {
			t.Errorf("%q has shapes %v, want exactly one", n, shapes)
			continue
		}
		if shapes[0] != wantShape[n] {
			t.Errorf("%q is %s, want %s", n, shapes[0], wantShape[n])
		}
		_, sep := c.(Separable)
		if wantSep := n == "psdsf" || n == "rpsdsf"; sep != wantSep {
			t.Errorf("%q Separable = %v, want %v", n, sep, wantSep)
		}
	}
}
