package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	predict "github.com/allot-sched/allot/framework/predict/profile"
)

func TestPredictedDemand(t *testing.T) {
	runs := []predict.Run{{App: "wc", Setting: predict.Setting{Cores: 2, InputBytes: 1 << 30, Executors: 3, MemMB: 512},
		Stages: []predict.StageObs{{Key: "map", Start: 1, End: 9, DiskBW: 80}, {Key: "reduce", Start: 9.5, End: 12, NetBW: 40}}}}
	m := predict.Train(runs)
	b, _ := predict.MarshalModel(m)
	path := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := loadDemandModel(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{App: "wc", Cores: 2, MemMB: 512, Executors: 4, InputBytes: 1 << 30}
	res, ok, why := predictedDemand(loaded, cfg)
	if !ok {
		t.Fatalf("not declared: %s", why)
	}
	d, rest, err := api.SplitAppDemand([]mesos.Resource{res})
	if err != nil || d == nil || len(rest) != 0 {
		t.Fatalf("SplitAppDemand: %v %v %v", d, rest, err)
	}
	p, err := d.ToProfile()
	if err != nil {
		t.Fatal(err)
	}
	if p.Executors != 4 || p.Cpus != 2+executorCPUs || p.Mem != 512+executorMem || len(p.Profile.Stages) != 2 || p.Profile.Stages[0].DiskBW != 80 {
		t.Errorf("declared %+v", p)
	}
	for _, tc := range []struct {
		m    *predict.Model
		app  string
		want string
	}{{nil, "wc", "no model"}, {loaded, "other", `no runs of application "other"`}} {
		if _, ok, why := predictedDemand(tc.m, Config{App: tc.app, Cores: 1, MemMB: 1, Executors: 1}); ok || !strings.Contains(why, tc.want) {
			t.Errorf("%s: ok=%v why=%q, want %q", tc.app, ok, why, tc.want)
		}
	}
	if _, err := loadDemandModel(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing model loaded")
	}
}
