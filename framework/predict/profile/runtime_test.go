package profile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/allot-sched/allot/framework"
	"github.com/allot-sched/allot/framework/predict/profile"
)

func init() {
	framework.Register("predicttest.mod", func(arg any) framework.MapFunc {
		m := arg.(int64)
		return func(x any) any { return framework.KV{Key: x.(int64) % m, Value: x} }
	})
	framework.Register("predicttest.sum", func(a, b any) any { return a.(int64) + b.(int64) })
}

// TestRuntimeLogs runs the same small two-stage application three times
// through the framework's local backend, at different cores and input
// sizes, and trains on the logs the runtime wrote: the stage keys must agree
// across runs, and the model must predict a valid demand for a new setting.
func TestRuntimeLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts local executors")
	}
	dir := t.TempDir()
	for i, st := range []struct {
		cores int
		n     int64
	}{{1, 2000}, {2, 4000}, {2, 8000}} {
		ctx, err := framework.NewContext(framework.Config{App: "sums", Local: true, Executors: 1, Cores: st.cores, MemMB: 256,
			InputBytes: st.n * 8, EventLogDir: dir, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		_, err = ctx.Range(st.n, 4).Map("predicttest.mod", int64(7)).ReduceByKey("predicttest.sum", 2).Collect()
		if cerr := ctx.Close(err); err != nil || cerr != nil {
			t.Fatalf("run %d: %v %v", i, err, cerr)
		}
	}
	runs, skipped, err := profile.LoadDir(dir)
	if err != nil || len(runs) != 3 || skipped != 0 {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("LoadDir: %d runs, %d skipped, %v (dir has %d entries)", len(runs), skipped, err, len(entries))
	}
	for _, r := range runs {
		if r.App != "sums" || len(r.Stages) != 2 {
			t.Fatalf("run %+v: want app sums with 2 stages (map, result)", r)
		}
		for k, s := range r.Stages {
			if s.Key != runs[0].Stages[k].Key {
				t.Errorf("stage keys differ across runs: %q vs %q", s.Key, runs[0].Stages[k].Key)
			}
			if s.Start < 0 || s.End < s.Start || s.End > 60 {
				t.Errorf("stage %s offsets %v..%v s from launch: implausible", s.Key, s.Start, s.End)
			}
		}
		if r.Setting.InputBytes == 0 || r.Setting.Cores == 0 {
			t.Errorf("setting not logged: %+v", r.Setting)
		}
	}
	m := profile.Train(runs)
	b, _ := profile.MarshalModel(m)
	if err := os.WriteFile(filepath.Join(t.TempDir(), "model.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := m.Predict("sums", profile.Setting{Cores: 3, InputBytes: 6000 * 8})
	if err != nil {
		t.Fatal(err)
	}
	if d.Executors != 1 || d.Cpus != 3 || d.Mem != 256 || len(d.Profile.Stages) != 2 {
		t.Errorf("demand %+v: want E=1 cpus=3 mem=256 and two stages", d)
	}
}
