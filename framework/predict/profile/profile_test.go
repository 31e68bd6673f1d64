package profile

import (
	"math"
	"math/rand"
	"sort"
	"testing"
	"time"
)

// linear is a family exactly in the features' span: every target of stage
// k is a fixed combination of [1, G, 1/c, G/c, c].
func linear(app string, st Setting) Run {
	x := features(st)
	r := Run{App: app, Setting: st}
	prev := 0.0
	for k := 0; k < 3; k++ {
		f := float64(k + 1)
		dur := 2*f + 30*x[1] + 5*x[2] + 60*f*x[3] + 0.5*x[4]
		disk := 10*f + 4*x[1] + 3*x[4]
		net := 5 + 2*f*x[1] + 1*x[4]
		r.Stages = append(r.Stages, StageObs{Key: string(rune('a' + k)), Start: prev, End: prev + dur, DiskBW: disk, NetBW: net})
		prev += dur + 0.5
	}
	return r
}

// grid is the paper's 25 profiling runs: 5 core counts x 5 input sizes.
func grid(gen func(Setting) Run) []Run {
	var runs []Run
	for _, c := range []int{1, 2, 3, 4, 5} {
		for _, g := range []float64{1, 2, 4, 6, 8} {
			runs = append(runs, gen(Setting{Cores: c, InputBytes: int64(g * (1 << 30)), Executors: 4, MemMB: 2048}))
		}
	}
	return runs
}

func TestExactRecovery(t *testing.T) {
	m := Train(grid(func(st Setting) Run { return linear("lin", st) }))
	for _, st := range []Setting{{Cores: 3, InputBytes: 3 << 30}, {Cores: 7, InputBytes: 12 << 30}, {Cores: 2, InputBytes: 5 << 29}} {
		want := linear("lin", st)
		d, err := m.Predict("lin", st)
		if err != nil {
			t.Fatal(err)
		}
		if d.Executors != 4 || d.Cpus != float64(st.Cores) || d.Mem != 2048 {
			t.Errorf("%+v: demand E=%d cpus=%v mem=%v", st, d.Executors, d.Cpus, d.Mem)
		}
		for k, s := range d.Profile.Stages {
			w := want.Stages[k]
			got := []float64{s.Start.Seconds(), s.End.Seconds(), s.DiskBW, s.NetBW}
			for i, v := range []float64{w.Start, w.End, w.DiskBW, w.NetBW} {
				if math.Abs(got[i]-v) > 1e-6*math.Max(1, v) {
					t.Errorf("%+v stage %d target %d: got %v, want %v", st, k, i, got[i], v)
				}
			}
		}
	}
}

// physical is a family the features only approximate: stage times with a
// sub-linear core speed-up (c^0.85, Amdahl-like), peaks growing as c^0.7,
// and multiplicative noise of sd 5 % on every observation.
func physical(rng *rand.Rand, noise float64) func(Setting) Run {
	return func(st Setting) Run {
		g := float64(st.InputBytes) / (1 << 30)
		c := float64(st.Cores)
		n := func() float64 { return 1 + noise*rng.NormFloat64() }
		r := Run{App: "phys", Setting: st}
		prev := 1.5 * n()
		for k, p := range []struct{ setup, work, disk, net float64 }{{3, 40, 60, 5}, {1, 25, 10, 40}, {2, 15, 30, 20}, {1, 5, 5, 50}} {
			dur := (p.setup + p.work*g/math.Pow(c, 0.85)) * n()
			r.Stages = append(r.Stages, StageObs{Key: string(rune('a' + k)), Start: prev, End: prev + dur,
				DiskBW: p.disk * math.Pow(c, 0.7) * (1 + 0.05*g) * n(), NetBW: p.net * math.Pow(c, 0.7) * (1 + 0.03*g) * n()})
			prev += dur + 0.3*n()
		}
		return r
	}
}

// TestHeldOutAccuracy trains on the paper's 25 runs (5 core counts x 5
// input sizes) of a noisy family and measures the median relative error of
// every stage's start, end, disk and net peak at six settings it never saw,
// against the noiseless truth. The paper reports "mostly less than 10 %".
func TestHeldOutAccuracy(t *testing.T) {
	held := []Setting{{Cores: 2, InputBytes: 3 << 30}, {Cores: 3, InputBytes: 5 << 30}, {Cores: 4, InputBytes: 7 << 30},
		{Cores: 5, InputBytes: 3 << 30}, {Cores: 1, InputBytes: 5 << 30}, {Cores: 3, InputBytes: 3 << 29}}
	for _, tc := range []struct {
		noise, maxMedian float64
	}{{0, 0.10}, {0.05, 0.10}, {0.10, 0.10}, {0.20, 0.20}} {
		rng := rand.New(rand.NewSource(1))
		m := Train(grid(physical(rng, tc.noise)))
		truth := physical(rng, 0)
		var errs [numTargets][]float64
		var all []float64
		for _, st := range held {
			d, err := m.Predict("phys", st)
			if err != nil {
				t.Fatal(err)
			}
			want := truth(st)
			for k, s := range d.Profile.Stages {
				got := []float64{s.Start.Seconds(), s.End.Seconds(), s.DiskBW, s.NetBW}
				for i, v := range want.Stages[k].targets() {
					e := math.Abs(got[i]-v) / v
					errs[i] = append(errs[i], e)
					all = append(all, e)
				}
			}
		}
		t.Logf("noise %2.0f%%: held-out median relative error start %.1f%%, end %.1f%%, disk %.1f%%, net %.1f%%; all %.1f%% (n=%d), %.0f%% under 10%%",
			100*tc.noise, 100*median(errs[0]), 100*median(errs[1]), 100*median(errs[2]), 100*median(errs[3]), 100*median(all), len(all), 100*under(all, 0.10))
		if median(all) > tc.maxMedian {
			t.Errorf("noise %v: median relative error %.1f%% > %.0f%%", tc.noise, 100*median(all), 100*tc.maxMedian)
		}
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func under(v []float64, lim float64) float64 {
	n := 0
	for _, x := range v {
		if x < lim {
			n++
		}
	}
	return float64(n) / float64(len(v))
}

// TestFallback: with fewer than MinRuns settings, or settings that cannot
// separate the features, a stage is copied from the nearest observed run.
func TestFallback(t *testing.T) {
	gen := func(st Setting) Run { return linear("lin", st) }
	few := []Run{gen(Setting{Cores: 1, InputBytes: 1 << 30, Executors: 2, MemMB: 1024}), gen(Setting{Cores: 4, InputBytes: 8 << 30, Executors: 3, MemMB: 4096})}
	var oneCore []Run
	for g := int64(1); g <= 10; g++ {
		oneCore = append(oneCore, gen(Setting{Cores: 2, InputBytes: g << 30, Executors: 2, MemMB: 1024}))
	}
	cases := []struct {
		name string
		runs []Run
		ask  Setting
		want Run // the run whose stages come back
	}{
		{"two runs, near the small one", few, Setting{Cores: 1, InputBytes: 2 << 30}, few[0]},
		{"two runs, near the big one", few, Setting{Cores: 5, InputBytes: 7 << 30}, few[1]},
		{"one core count: collinear", oneCore, Setting{Cores: 4, InputBytes: 3 << 30}, oneCore[2]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := Train(tc.runs)
			if !m.Fallback("lin", "a") {
				t.Fatal("stage a was regressed")
			}
			d, err := m.Predict("lin", tc.ask)
			if err != nil {
				t.Fatal(err)
			}
			if d.Executors != tc.want.Setting.Executors || d.Mem != float64(tc.want.Setting.MemMB) || d.Cpus != float64(tc.ask.Cores) {
				t.Errorf("demand E=%d mem=%v cpus=%v, want the nearest run's E and mem and the asked cores", d.Executors, d.Mem, d.Cpus)
			}
			for k, s := range d.Profile.Stages {
				w := tc.want.Stages[k]
				if s.End != seconds(w.End) || s.DiskBW != w.DiskBW {
					t.Errorf("stage %d: got end %v disk %v, want the nearest run's %v %v", k, s.End, s.DiskBW, seconds(w.End), w.DiskBW)
				}
			}
		})
	}
	if _, err := Train(few).Predict("other", Setting{Cores: 1}); err == nil {
		t.Error("an unknown application predicted something")
	}
}

// TestRepair: overlapping, negative or zero-length predictions become a
// valid profile.
func TestRepair(t *testing.T) {
	p := toProfile([]StageObs{{Key: "b", Start: 5, End: 4, DiskBW: 1}, {Key: "a", Start: 0, End: 6, NetBW: 2}, {Key: "c", Start: 7, End: 9}})
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Stages[1].Start != 6*time.Second || p.Stages[1].End != 6*time.Second+MinStage {
		t.Errorf("overlapping stage not moved after its predecessor: %+v", p.Stages[1])
	}
}

func TestModelJSON(t *testing.T) {
	m := Train(grid(func(st Setting) Run { return linear("lin", st) }))
	b, err := MarshalModel(m)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := UnmarshalModel(b)
	if err != nil {
		t.Fatal(err)
	}
	st := Setting{Cores: 3, InputBytes: 3 << 30}
	d1, _ := m.Predict("lin", st)
	d2, err := m2.Predict("lin", st)
	if err != nil || len(d1.Profile.Stages) != len(d2.Profile.Stages) || d1.Profile.Stages[2] != d2.Profile.Stages[2] {
		t.Errorf("loaded model predicts differently: %v %+v %+v", err, d1, d2)
	}
	for _, bad := range []string{`{`, `{"apps":{"x":{"runs":[]}}}`, `{"apps":{"x":{"runs":[{"app":"x"}],"stages":[{"key":"a","coef":[[1],[1],[1],[1]]}]}}}`} {
		if _, err := UnmarshalModel([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
