package allocator

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// countModel is a test-only policy model: it counts events by kind,
// records when they happened and when it was refreshed, and logs the
// order of refreshes and offers.
type countModel struct {
	id       string
	State    countState
	times    []time.Time // the at of every event, in order
	seq      []string    // "refresh" and "offer", in order
	changed  bool        // what refresh reports
	failNext bool        // the next restore fails
}

type countState struct {
	Counts    map[policy.EventKind]int
	Refreshes int
}

var _ policy.Model = (*countModel)(nil)

func newCountModel(id string) *countModel {
	return &countModel{id: id, State: countState{Counts: map[policy.EventKind]int{}}}
}

func (m *countModel) Name() string { return m.id }

func (m *countModel) Observe(e policy.Event) {
	m.State.Counts[e.Kind]++
	m.times = append(m.times, e.At)
	if e.Kind == policy.Offered {
		m.seq = append(m.seq, "offer")
	}
}

func (m *countModel) Refresh(now time.Time, v policy.Views) bool {
	m.State.Refreshes++
	m.seq = append(m.seq, "refresh@"+now.Format(time.RFC3339))
	return m.changed
}

func (m *countModel) Snapshot() ([]byte, error) { return json.Marshal(m.State) }

func (m *countModel) Restore(data []byte) error {
	if m.failNext {
		m.failNext = false
		return errors.New("refused")
	}
	var st countState
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	m.State = st
	return nil
}

func modelFixture(t *testing.T, cfg Config, ids ...string) (*fixture, []*countModel) {
	fx := newFixture(t, cfg)
	var ms []*countModel
	for _, id := range ids {
		m := newCountModel(id)
		fx.a.addModel(m)
		ms = append(ms, m)
	}
	return fx, ms
}

// TestModelObservesEvents: every change that succeeded reaches the model
// once, stamped with the clock at that moment; failed calls do not.
func TestModelObservesEvents(t *testing.T) {
	fx, ms := modelFixture(t, Config{Mode: Characterized}, "count")
	m, a := ms[0], fx.a
	var want []time.Time
	step := func(name string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want = append(want, fx.clk.Now())
		fx.clk.Advance(time.Second)
	}
	step("add agent", a.AddAgent("a1", AgentInfo{Total: resources.MustParse("cpus:4;mem:1024")}))
	step("update agent", a.UpdateAgent("a1", resources.MustParse("cpus:8;mem:1024")))
	step("add framework", a.AddFramework("f1", ""))
	step("deactivate", a.DeactivateFramework("f1"))
	step("activate", a.ActivateFramework("f1"))
	step("suppress", a.Suppress("f1"))
	step("revive", a.Revive("f1"))
	step("demand", a.SetDemand("f1", Demand{Task: resources.MustParse("cpus:1;mem:128"), Tasks: 2}))
	step("weights", a.SetWeights(map[string]float64{"*": 2}))
	if err := a.AddAgent("a1", AgentInfo{}); err == nil {
		t.Fatal("adding a1 twice succeeded")
	}
	if err := a.Suppress("nobody"); err == nil {
		t.Fatal("suppressing an unknown framework succeeded")
	}
	out := a.Allocate().Offers
	if len(out) != 1 || out[0].Tasks != 2 {
		t.Fatalf("offers %+v, want one of two tasks", out)
	}
	want = append(want, fx.clk.Now())
	fx.clk.Advance(time.Second)
	step("recover", a.Recover("f1", "a1", out[0].Resources, nil))
	step("remove framework", a.RemoveFramework("f1"))
	step("remove agent", a.RemoveAgent("a1"))

	wantCounts := map[policy.EventKind]int{policy.AgentAdded: 1, policy.AgentUpdated: 1, policy.FrameworkAdded: 1, policy.FrameworkDeactivated: 1,
		policy.FrameworkActivated: 1, policy.Suppressed: 1, policy.Revived: 1, policy.DemandSet: 1, policy.WeightsSet: 1, policy.Offered: 1,
		policy.Recovered: 1, policy.FrameworkRemoved: 1, policy.AgentRemoved: 1}
	if !reflect.DeepEqual(m.State.Counts, wantCounts) {
		t.Fatalf("counts %v, want %v", m.State.Counts, wantCounts)
	}
	if !reflect.DeepEqual(m.times, want) {
		t.Fatalf("event times %v, want the clock's %v", m.times, want)
	}
}

// TestModelRefreshOncePerCycle: refresh runs exactly once per cycle, at
// the cycle's time, before that cycle's offers.
func TestModelRefreshOncePerCycle(t *testing.T) {
	fx, ms := modelFixture(t, Config{}, "count")
	fx.agent("a1", "cpus:4;mem:1024").agent("a2", "cpus:4;mem:1024").framework("f1", "")
	var want []string
	for i := 0; i < 4; i++ {
		want = append(want, "refresh@"+fx.clk.Now().Format(time.RFC3339))
		out := fx.cycle()
		for range out {
			want = append(want, "offer")
		}
		fx.decline(out, -1)
		fx.clk.Advance(time.Minute)
	}
	if m := ms[0]; m.State.Refreshes != 4 || !reflect.DeepEqual(m.seq, want) {
		t.Fatalf("refreshes %d, sequence %v; want 4 and %v", m.State.Refreshes, m.seq, want)
	}
}

// keyCounter is an Ordering that counts how often keys are computed.
type keyCounter struct{ n *int }

func (keyCounter) Name() string { return "count" }

func (k keyCounter) Key(f *sorter.Framework, _ *sorter.Cluster) float64 {
	*k.n++
	return float64(f.Index)
}

// TestModelChangedViewsRekey: a refresh that reports changed views makes
// the allocator recompute every framework's key before filling; one that
// does not costs no key at all.
func TestModelChangedViewsRekey(t *testing.T) {
	for _, changed := range []bool{false, true} {
		t.Run(fmt.Sprint("changed=", changed), func(t *testing.T) {
			n := 0
			fx, ms := modelFixture(t, Config{Sorter: keyCounter{&n}}, "count")
			fx.framework("f1", "").framework("f2", "").framework("f3", "")
			fx.cycle()
			ms[0].changed = changed
			n = 0
			fx.cycle() // no agents: nothing is granted, so only a re-key computes keys
			if want := map[bool]int{false: 0, true: 3}[changed]; n != want {
				t.Fatalf("%d keys computed, want %d", n, want)
			}
		})
	}
}

// TestPolicySnapshotRoundTrip: a snapshot restored into a fresh allocator
// with the same models gives them the same state.
func TestPolicySnapshotRoundTrip(t *testing.T) {
	fx, ms := modelFixture(t, Config{}, "one", "two")
	fx.agent("a1", "cpus:4;mem:1024").framework("f1", "").framework("f2", "")
	fx.decline(fx.cycle(), 5)
	fx.cycle()
	snap, err := fx.a.SnapshotPolicies()
	if err != nil {
		t.Fatal(err)
	}
	fresh, fms := modelFixture(t, Config{}, "one", "two")
	if err := fresh.a.RestorePolicies(snap); err != nil {
		t.Fatal(err)
	}
	for i := range ms {
		if !reflect.DeepEqual(fms[i].State, ms[i].State) {
			t.Fatalf("model %s restored as %+v, want %+v", ms[i].id, fms[i].State, ms[i].State)
		}
	}
	// no models: an empty snapshot that restores into another allocator
	// without models
	empty, err := newFixture(t, Config{}).a.SnapshotPolicies()
	if err != nil {
		t.Fatal(err)
	}
	if err := newFixture(t, Config{}).a.RestorePolicies(empty); err != nil {
		t.Fatalf("restoring an empty snapshot: %v", err)
	}
}

// TestRestorePoliciesRejects: a snapshot that does not match, or a model
// that refuses its state, changes nothing.
func TestRestorePoliciesRejects(t *testing.T) {
	src, _ := modelFixture(t, Config{}, "one", "two")
	src.agent("a1", "cpus:4;mem:1024").framework("f1", "")
	src.cycle()
	snap, err := src.a.SnapshotPolicies()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		models  []string
		snap    []byte
		failTwo bool
		wantErr string
	}{
		{"fewer models", []string{"one"}, snap, false, "holds 2 models"},
		{"other names", []string{"one", "three"}, snap, false, `is "two"`},
		{"truncated", []string{"one", "two"}, snap[:len(snap)-3], false, "truncated"},
		{"trailing bytes", []string{"one", "two"}, append(append([]byte{}, snap...), 0), false, "after its last model"},
		{"not a snapshot", []string{"one", "two"}, []byte("{}"), false, "not a policy snapshot"},
		{"second model refuses", []string{"one", "two"}, snap, true, "refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx, ms := modelFixture(t, Config{}, c.models...)
			fx.agent("b1", "cpus:1;mem:64")
			before := make([]countState, len(ms))
			for i, m := range ms {
				b, _ := json.Marshal(m.State)
				json.Unmarshal(b, &before[i])
			}
			if c.failTwo {
				ms[1].failNext = true
			}
			err := fx.a.RestorePolicies(c.snap)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, c.wantErr)
			}
			for i, m := range ms {
				if !reflect.DeepEqual(m.State, before[i]) {
					t.Fatalf("model %s changed to %+v by a failed restore, was %+v", m.id, m.State, before[i])
				}
			}
		})
	}
}
