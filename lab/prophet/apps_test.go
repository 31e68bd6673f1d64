package prophet

import (
	"math"
	"reflect"
	"testing"

	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sorter"
)

func policy(t *testing.T, name string) sim.Policy {
	t.Helper()
	p, err := sim.ParsePolicy(name, sorter.RRR)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProphetSetupShape(t *testing.T) {
	apps, nodes := ProphetSetup(1, 0.1)
	if len(apps) != 90 || len(nodes) != 16 {
		t.Fatalf("%d apps on %d nodes, want 90 on 16", len(apps), len(nodes))
	}
	for _, a := range apps {
		if a.Arrival < 0 || a.Arrival > 1200 {
			t.Errorf("%s arrives at %v", a.Name, a.Arrival)
		}
		if len(a.Predicted.Stages) != len(a.Stages) {
			t.Errorf("%s: %d predicted stages for %d", a.Name, len(a.Predicted.Stages), len(a.Stages))
		}
		if err := a.Predicted.Validate(); err != nil {
			t.Errorf("%s: %v", a.Name, err)
		}
	}
}

func TestPredictErrorBounded(t *testing.T) {
	apps, _ := ProphetSetup(3, 0.2)
	for _, a := range apps {
		for k, s := range a.Stages {
			p := a.Predicted.Stages[k]
			if s.DiskBW > 0 && math.Abs(p.DiskBW/s.DiskBW-1) > 0.2+1e-9 {
				t.Errorf("%s stage %d disk %v for %v", a.Name, k, p.DiskBW, s.DiskBW)
			}
			if d := (p.End - p.Start).Seconds(); math.Abs(d/s.Work-1) > 0.2+1e-6 {
				t.Errorf("%s stage %d lasts %v for %v", a.Name, k, d, s.Work)
			}
		}
	}
	x, _ := ProphetSetup(3, 0.2)
	if !reflect.DeepEqual(apps, x) {
		t.Error("same seed, different workload")
	}
}

// One agent, two disk-heavy executors: with the law on and beta > 0 they
// finish later than work-conserving sharing, which is later than no
// contention at all.
func TestDegradationLaw(t *testing.T) {
	apps := []App{
		{Name: "a", Executors: 1, Cpus: 1, Mem: 1, Stages: []AppStage{{Work: 100, DiskBW: 200}}},
		{Name: "b", Executors: 1, Cpus: 1, Mem: 1, Stages: []AppStage{{Work: 100, DiskBW: 200}}},
	}
	Predict(apps, 0, 1)
	nodes := []AppNode{{Cpus: 8, Mem: 8, DiskBW: 200, NetBW: 100}}
	run := func(degrade bool, beta float64) float64 {
		r, err := RunApps(append([]App(nil), apps...), nodes, AppConfig{Policy: policy(t, "drf"), Degrade: degrade, Beta: beta})
		if err != nil {
			t.Fatal(err)
		}
		return r.Makespan
	}
	off, conserve, degrade := run(false, 0), run(true, 0), run(true, 0.5)
	// off: 100 s; beta 0: each at half speed, 200 s; beta 0.5 at D = 2c:
	// eff = c/1.5, each at 1/3 speed, 300 s
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"off", off, 100}, {"beta 0", conserve, 200}, {"beta 0.5", degrade, 300}} {
		if math.Abs(c.got-c.want) > 2 {
			t.Errorf("%s: makespan %v, want about %v", c.name, c.got, c.want)
		}
	}
}

func TestRunAppsPolicies(t *testing.T) {
	apps, nodes := ProphetSetup(1, 0.1)
	for _, name := range []string{"capacity", "drf", "tetris-peak", "prophet"} {
		res, err := RunApps(append([]App(nil), apps...), nodes, AppConfig{Policy: policy(t, name), Degrade: true, Beta: DefaultBeta, Seed: 1, Horizon: 1e5})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(res.JCT) != 90 || !(res.Makespan > 1200) {
			t.Errorf("%s: %d apps, makespan %v", name, len(res.JCT), res.Makespan)
		}
		spread := 0.0
		for i, j := range res.JCT {
			if !(j >= res.Exec[i]) || math.IsNaN(j) {
				t.Errorf("%s: app %d jct %v exec %v", name, i, j, res.Exec[i])
			}
			spread = max(spread, res.LaunchSpread[i])
		}
		gang := name == "prophet" || name == "tetris-peak"
		if gang && spread != 0 {
			t.Errorf("%s: an application's executors launched %vs apart, want one cycle", name, spread)
		}
		if !gang && spread == 0 {
			t.Errorf("%s: every application launched all its executors at once; the baselines place them one by one", name)
		}
		t.Logf("%-12s makespan %7.0f  exec p50 %6.0f  jct p50 %6.0f  overalloc %.3f  bw util %.3f", name, res.Makespan, sim.Median(res.Exec), sim.Median(res.JCT), res.OverallocFrac, res.BWUtil)
	}
}
