package allocator

import (
	"reflect"
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/sorter"
)

func TestObserveStageProgressReanchors(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration // since the offer
		stage int
		done  float64
		// disk available at +probe after the report
		probe time.Duration
		want  float64
	}{
		// app(): stage 0 [0, 1m) disk 100, stage 1 [1m, 2m) disk 5
		{"on time changes nothing", 30 * time.Second, 0, 0.5, 70 * time.Second, 325},
		{"late stage 0 still shows disk 100", 90 * time.Second, 0, 0.5, 100 * time.Second, 230},
		{"stage 1 entered late shifts its end", 3 * time.Minute, 1, 0, 3*time.Minute + 30*time.Second, 325},
		{"past the predicted end still busy", 5 * time.Minute, 1, 0.5, 5*time.Minute + 10*time.Second, 325},
		{"a stage the profile lacks changes nothing", 30 * time.Second, 7, 0, 90 * time.Second, 325},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, clk := newGang(t, sorter.Prophet{}, 1, nil)
			_ = a.AddFramework("f", "")
			_ = a.Observe(policy.AppDemand{Framework: "f", Demand: app(1, 2, 100)})
			t0 := clk.T
			if d := a.Allocate(); len(d.Offers) != 1 {
				t.Fatalf("offers %v", d.Offers)
			}
			clk.Advance(tc.after)
			if err := a.Observe(policy.StageProgress{Framework: "f", Agent: "a0", Stage: tc.stage, Done: tc.done}); err != nil {
				t.Fatal(err)
			}
			tl := a.path.(*gangPath).m.Agent("a0").TL
			if got := tl.At(t0.Add(tc.probe), profile.Disk); got != tc.want {
				t.Errorf("disk available at +%v = %v, want %v", tc.probe, got, tc.want)
			}
		})
	}
}

func TestObserveStageProgressValidates(t *testing.T) {
	a, _ := newGang(t, sorter.Prophet{}, 1, nil)
	_ = a.AddFramework("f", "")
	for _, c := range []struct {
		fw, agent string
		stage     int
		done      float64
	}{{"nope", "a0", 0, 0}, {"f", "nope", 0, 0}, {"f", "a0", -1, 0}, {"f", "a0", 0, 1.5}, {"f", "a0", 0, -0.1}} {
		if err := a.Observe(policy.StageProgress{Framework: c.fw, Agent: c.agent, Stage: c.stage, Done: c.done}); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if err := a.Observe(policy.StageProgress{Framework: "f", Agent: "a0", Stage: 0, Done: 1}); err != nil {
		t.Errorf("valid report with no executor: %v", err)
	}
}

func TestStageProgressSurvivesSnapshot(t *testing.T) {
	a, clk := newGang(t, sorter.Prophet{}, 2, nil)
	_ = a.AddFramework("f", "")
	_ = a.Observe(policy.AppDemand{Framework: "f", Demand: app(2, 2, 100)})
	t0 := clk.T
	a.Allocate()
	clk.Advance(3 * time.Minute)
	if err := a.Observe(policy.StageProgress{Framework: "f", Agent: "a1", Stage: 0, Done: 0.25}); err != nil {
		t.Fatal(err)
	}
	snap, err := a.SnapshotPolicies()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newGang(t, sorter.Prophet{}, 0, nil)
	if err := b.RestorePolicies(snap); err != nil {
		t.Fatal(err)
	}
	if again, _ := b.SnapshotPolicies(); !reflect.DeepEqual(snap, again) {
		t.Fatalf("snapshot differs after restore")
	}
	ma, mb := a.path.(*gangPath).m, b.path.(*gangPath).m
	for _, id := range []string{"a0", "a1"} {
		for _, at := range []time.Duration{30 * time.Second, 3 * time.Minute, 210 * time.Second} {
			if x, y := ma.Agent(id).TL.At(t0.Add(at), profile.Disk), mb.Agent(id).TL.At(t0.Add(at), profile.Disk); x != y {
				t.Errorf("%s at +%v: %v, restored %v", id, at, x, y)
			}
		}
	}
	// a1 was re-anchored: stage 0 (disk 100) now runs until +3m45s
	if got := mb.Agent("a1").TL.At(t0.Add(210*time.Second), profile.Disk); got != 230 {
		t.Errorf("restored a1 at +3m30s: %v, want 230", got)
	}
}

// TestReanchorToEpochSurvivesSnapshot: an anchor at Unix 0 (the
// simulator's clock starts there) is an anchor, not "none".
func TestReanchorToEpochSurvivesSnapshot(t *testing.T) {
	mk := func() (*Allocator, *ManualClock) {
		clk := &ManualClock{T: time.Unix(0, 0)}
		a, err := New(Config{Sorter: sorter.Prophet{}, Clock: clk, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.AddAgent("a0", AgentInfo{Total: gangAgent}); err != nil {
			t.Fatal(err)
		}
		return a, clk
	}
	a, clk := mk()
	_ = a.AddFramework("f", "")
	_ = a.Observe(policy.AppDemand{Framework: "f", Demand: app(1, 2, 100)})
	clk.Advance(30 * time.Second)
	if d := a.Allocate(); len(d.Offers) != 1 {
		t.Fatalf("offers %v", d.Offers)
	}
	clk.Advance(30 * time.Second)
	// stage 0 (one minute) all done at +60s: it started at 0, the anchor
	if err := a.Observe(policy.StageProgress{Framework: "f", Agent: "a0", Stage: 0, Done: 1}); err != nil {
		t.Fatal(err)
	}
	snap, err := a.SnapshotPolicies()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := mk()
	if err := b.RestorePolicies(snap); err != nil {
		t.Fatal(err)
	}
	probe := time.Unix(0, 0).Add(70 * time.Second) // stage 1 (disk 5) from the epoch anchor
	for name, x := range map[string]*Allocator{"original": a, "restored": b} {
		if got := x.path.(*gangPath).m.Agent("a0").TL.At(probe, profile.Disk); got != 325 {
			t.Errorf("%s: disk at +70s %v, want 325", name, got)
		}
	}
}
