package prophet

import (
	"strings"
	"testing"
)

// TestFrameworkPlacementPicksFreeAgent: offered every agent, an
// application launches on the one whose timeline is free of the disk
// demand that two running executors put on the others.
func TestFrameworkPlacementPicksFreeAgent(t *testing.T) {
	heavy := App{Name: "heavy", Executors: 1, Cpus: 1, Mem: 1024, Stages: []AppStage{{Work: 100, DiskBW: 300, NetBW: 10}}}
	apps := []App{heavy, heavy, heavy}
	apps[1].Name, apps[2].Name = "heavy-1", "new"
	Predict(apps, 0, 1)
	nodes := []AppNode{{Cpus: 8, Mem: 8192, DiskBW: 330, NetBW: 125}, {Cpus: 8, Mem: 8192, DiskBW: 330, NetBW: 125}, {Cpus: 8, Mem: 8192, DiskBW: 330, NetBW: 125}}
	fw := FrameworkPlacement{Ask: 10, Score: DefaultFrameworkPlacement.Score}
	r, err := newAppRun(apps, nodes, AppConfig{Policy: policy(t, "drf"), Seed: 1, FrameworkPlace: &fw})
	if err != nil {
		t.Fatal(err)
	}
	// the running executors, as the mirror sees them (the allocator need
	// not: the test is about the framework's choice)
	r.launch(0, 0, 1)
	r.launch(1, 2, 1)
	if err := r.arrive(2); err != nil {
		t.Fatal(err)
	}
	if err := r.allocate(); err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, x := range r.execs {
		if x.app == 2 {
			got = append(got, x.agent)
		}
	}
	if len(got) != 1 || got[0] != 1 {
		t.Fatalf("new application launched on agents %v, want [1]", got)
	}
	if r.want[2] != 0 {
		t.Errorf("still wants %d", r.want[2])
	}
}

func TestFrameworkPlacementValidates(t *testing.T) {
	apps, nodes := ProphetSetup(1, 0.1)
	for _, tc := range []struct {
		policy string
		fw     FrameworkPlacement
		want   string
	}{
		{"prophet", DefaultFrameworkPlacement, "does not place gangs"},
		{"drf", FrameworkPlacement{Ask: 0.5, Score: DefaultFrameworkPlacement.Score}, "ask"},
	} {
		fw := tc.fw
		_, err := RunApps(apps, nodes, AppConfig{Policy: policy(t, tc.policy), FrameworkPlace: &fw})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: err %v, want one naming %q", tc.policy, tc.fw, err, tc.want)
		}
	}
}
