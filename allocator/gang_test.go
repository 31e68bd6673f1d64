package allocator

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/allocator/policy/prophet"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// gangAgent has 8 cpus, 8 GB, a 330 MB/s disk and a 125 MB/s NIC.
var gangAgent = resources.MustParse("cpus:8;mem:8192;disk_bw:330;net_bw:125")

func newGang(t testing.TB, crit sorter.Criterion, agents int, p *GangParams) (*Allocator, *ManualClock) {
	t.Helper()
	clk := &ManualClock{T: time.Unix(1e9, 0)}
	a, err := New(Config{Sorter: crit, Clock: clk, Seed: 7, Gang: p})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < agents; i++ {
		if err := a.AddAgent(fmt.Sprintf("a%d", i), AgentInfo{Total: gangAgent}); err != nil {
			t.Fatal(err)
		}
	}
	return a, clk
}

func app(e int, cpus float64, disk float64) profile.AppDemand {
	return profile.AppDemand{Executors: e, Cpus: cpus, Mem: 1024, Profile: profile.Profile{Stages: []profile.Stage{
		{Start: 0, End: time.Minute, DiskBW: disk, NetBW: 10},
		{Start: time.Minute, End: 2 * time.Minute, DiskBW: 5, NetBW: 100},
	}}}
}

func offersOf(d Decisions, fw string) []Offer {
	var out []Offer
	for _, o := range d.Offers {
		if o.Framework == fw {
			out = append(out, o)
		}
	}
	return out
}

func TestGangPlacement(t *testing.T) {
	tests := []struct {
		name      string
		agents    int
		busy      int // agents whose cpus are taken first
		e         int
		wantCount int
	}{
		{"E fit on E agents", 4, 0, 4, 4},
		{"E on distinct agents of many", 10, 0, 3, 3},
		{"none when only E-1 fit", 4, 1, 4, 0},
		{"one executor", 1, 0, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := newGang(t, sorter.Prophet{}, tc.agents, nil)
			if tc.busy > 0 {
				// a framework without app demand takes whole agents (DRF)
				if err := a.AddFramework("hog", ""); err != nil {
					t.Fatal(err)
				}
				d := a.Allocate()
				for _, o := range d.Offers[tc.busy:] {
					if err := a.Recover(o.Framework, o.Agent, o.Resources, &Filter{RefuseSeconds: 1000}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := a.AddFramework("app", ""); err != nil {
				t.Fatal(err)
			}
			if err := a.Observe(policy.AppDemand{Framework: "app", Demand: app(tc.e, 4, 100)}); err != nil {
				t.Fatal(err)
			}
			got := offersOf(a.Allocate(), "app")
			if len(got) != tc.wantCount {
				t.Fatalf("%d offers, want %d: %v", len(got), tc.wantCount, got)
			}
			seen := map[string]bool{}
			for _, o := range got {
				if seen[o.Agent] {
					t.Errorf("two executors on %s", o.Agent)
				}
				seen[o.Agent] = true
				if o.Resources.Scalars[resources.CPUs].Units() != 4 || o.Tasks != 1 {
					t.Errorf("offer %v is not one executor's cpus:4", o)
				}
				if !strings.Contains(o.Reason.Why, "candidate half") {
					t.Errorf("reason %q does not name the candidate half", o.Reason.Why)
				}
			}
			// placed: no further offers until it declares again
			if n := len(offersOf(a.Allocate(), "app")); n != 0 {
				t.Errorf("placed app got %d more offers", n)
			}
		})
	}
}

// Prophet prefers the agent whose availability matches the demand: an
// agent where a disk-heavy executor already runs scores worse for another
// disk-heavy one than an empty agent.
func TestProphetAvoidsOverAllocation(t *testing.T) {
	a, _ := newGang(t, sorter.Prophet{}, 2, nil)
	for _, fw := range []string{"x", "y"} {
		if err := a.AddFramework(fw, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Observe(policy.AppDemand{Framework: "x", Demand: app(1, 1, 300)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Observe(policy.AppDemand{Framework: "y", Demand: app(1, 1, 300)}); err != nil {
		t.Fatal(err)
	}
	// one cycle: y is scored against x's executor placed earlier in it
	d := a.Allocate()
	first, second := offersOf(d, "x"), offersOf(d, "y")
	if len(first) != 1 || len(second) != 1 || first[0].Agent == second[0].Agent {
		t.Fatalf("x on %v, y on %v: want distinct agents", first, second)
	}
}

// Only the longest-waiting half of the fitting apps are candidates: a
// newer app with a better score still waits for its turn.
func TestCandidateHalf(t *testing.T) {
	a, clk := newGang(t, sorter.Prophet{}, 1, nil)
	// old: a bad fit (disk 330 + net 125 all the time); new: a perfect one
	bad := profile.AppDemand{Executors: 1, Cpus: 8, Mem: 1024, Profile: profile.Profile{Stages: []profile.Stage{{End: time.Hour, DiskBW: 10, NetBW: 1}}}}
	good := profile.AppDemand{Executors: 1, Cpus: 8, Mem: 1024, Profile: profile.Profile{Stages: []profile.Stage{{End: time.Hour, DiskBW: 330, NetBW: 125}}}}
	for _, fw := range []string{"old", "new"} {
		if err := a.AddFramework(fw, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Observe(policy.AppDemand{Framework: "old", Demand: bad}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if err := a.Observe(policy.AppDemand{Framework: "new", Demand: good}); err != nil {
		t.Fatal(err)
	}
	d := a.Allocate()
	if len(d.Offers) != 1 || d.Offers[0].Framework != "old" {
		t.Fatalf("offers %v: want the older app (the only candidate of the half)", d.Offers)
	}
	// with every fitting app a candidate, the better score wins
	p := DefaultGangParams()
	p.Fraction = 1
	a2, clk2 := newGang(t, sorter.Prophet{}, 1, &p)
	for _, fw := range []string{"old", "new"} {
		_ = a2.AddFramework(fw, "")
	}
	_ = a2.Observe(policy.AppDemand{Framework: "old", Demand: bad})
	clk2.Advance(time.Second)
	_ = a2.Observe(policy.AppDemand{Framework: "new", Demand: good})
	if d := a2.Allocate(); len(d.Offers) != 1 || d.Offers[0].Framework != "new" {
		t.Fatalf("fraction 1: offers %v, want the better-scored new app", d.Offers)
	}
}

// An app whose deadline passed goes first even outside the candidate half.
func TestDeadlineOverride(t *testing.T) {
	p := DefaultGangParams()
	p.Fraction = 0.01 // only the oldest fitting app is a candidate
	a, clk := newGang(t, sorter.Prophet{}, 1, &p)
	for _, fw := range []string{"warm", "old", "late"} {
		_ = a.AddFramework(fw, "")
		_ = a.Observe(policy.AppDemand{Framework: fw, Demand: app(1, 8, 10)})
	}
	// warm waits 10s, so the mean wait is 10s and deadlines are 30s
	_ = a.Observe(policy.AppDemand{Framework: "warm", Demand: app(1, 8, 10)})
	clk.Advance(10 * time.Second)
	if d := a.Allocate(); len(d.Offers) != 1 {
		t.Fatalf("warm-up: %v", d.Offers)
	}
	// old and late declare again after warm's wait, so they have deadlines
	_ = a.Observe(policy.AppDemand{Framework: "old", Demand: app(1, 8, 10)})
	clk.Advance(time.Second)
	_ = a.Observe(policy.AppDemand{Framework: "late", Demand: app(1, 8, 10)})
	// make "late" overdue but not "old": old's deadline is later
	a.path.(*gangPath).m.App("old").Deadline = clk.T.Add(time.Hour).UnixNano()
	a.path.(*gangPath).m.App("late").Deadline = clk.T.Add(-time.Second).UnixNano()
	// the warm app's executor still holds the agent: free it
	for _, o := range []string{"warm"} {
		_ = a.Recover(o, "a0", resources.MustParse("cpus:8;mem:1024"), nil)
	}
	d := a.Allocate()
	if len(d.Offers) != 1 || d.Offers[0].Framework != "late" {
		t.Fatalf("offers %v: want the overdue app first", d.Offers)
	}
	if !strings.Contains(d.Offers[0].Reason.Why, "deadline passed") {
		t.Errorf("reason %q does not name the deadline", d.Offers[0].Reason.Why)
	}
	if got := a.path.(*gangPath).m.App("warm"); got == nil || got.Pending {
		t.Errorf("warm app record %+v", got)
	}
}

func TestDeadlineFromMeanWait(t *testing.T) {
	a, clk := newGang(t, sorter.Prophet{}, 1, nil)
	for _, fw := range []string{"a", "b"} {
		_ = a.AddFramework(fw, "")
	}
	_ = a.Observe(policy.AppDemand{Framework: "a", Demand: app(1, 1, 10)})
	m := a.path.(*gangPath).m
	if m.App("a").Deadline != 0 {
		t.Errorf("first app has deadline %d, want none", m.App("a").Deadline)
	}
	clk.Advance(4 * time.Second)
	a.Allocate()
	_ = a.Observe(policy.AppDemand{Framework: "b", Demand: app(1, 1, 10)})
	if want := clk.T.Add(12 * time.Second).UnixNano(); m.App("b").Deadline != want {
		t.Errorf("deadline %d, want arrival + 3 x 4s = %d", m.App("b").Deadline, want)
	}
}

func TestTimelineFollowsOfferAndRecover(t *testing.T) {
	a, clk := newGang(t, sorter.Prophet{}, 2, nil)
	_ = a.AddFramework("f", "")
	_ = a.Observe(policy.AppDemand{Framework: "f", Demand: app(2, 2, 100)})
	d := a.Allocate()
	m := a.path.(*gangPath).m
	for _, o := range d.Offers {
		tl := m.Agent(o.Agent).TL
		if tl.Len() != 1 {
			t.Fatalf("agent %s timeline holds %d executors after the offer", o.Agent, tl.Len())
		}
		if got := tl.At(clk.T.Add(30*time.Second), profile.Disk); got != 230 {
			t.Errorf("disk available %v during stage 0, want 330-100", got)
		}
	}
	o := d.Offers[0]
	if err := a.Recover(o.Framework, o.Agent, o.Resources, nil); err != nil {
		t.Fatal(err)
	}
	if n := m.Agent(o.Agent).TL.Len(); n != 0 {
		t.Errorf("timeline holds %d executors after recovery", n)
	}
	if n := m.Agent(d.Offers[1].Agent).TL.Len(); n != 1 {
		t.Errorf("the other agent's timeline holds %d", n)
	}
}

func TestTimelinesSnapshotRoundTrip(t *testing.T) {
	a, clk := newGang(t, sorter.Prophet{}, 3, nil)
	for i := 0; i < 3; i++ {
		fw := fmt.Sprintf("f%d", i)
		_ = a.AddFramework(fw, "")
		_ = a.Observe(policy.AppDemand{Framework: fw, Demand: app(2, 2, float64(50*(i+1)))})
		clk.Advance(time.Second)
		a.Allocate()
	}
	snap, err := a.SnapshotPolicies()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newGang(t, sorter.Prophet{}, 0, nil)
	if err := b.RestorePolicies(snap); err != nil {
		t.Fatal(err)
	}
	again, _ := b.SnapshotPolicies()
	if !reflect.DeepEqual(snap, again) {
		t.Fatalf("snapshot differs after restore:\n%s\n%s", snap, again)
	}
	ma, mb := a.path.(*gangPath).m, b.path.(*gangPath).m
	for _, id := range ma.AgentIDs() {
		ag := ma.Agent(id)
		for _, at := range []time.Duration{0, 30 * time.Second, 90 * time.Second} {
			if x, y := ag.TL.At(clk.T.Add(at), profile.Disk), mb.Agent(id).TL.At(clk.T.Add(at), profile.Disk); x != y {
				t.Errorf("agent %s at +%v: disk %v, restored %v", id, at, x, y)
			}
		}
	}
	if err := b.RestorePolicies(append(snap[:len(snap)-3:len(snap)-3], 'x')); err == nil {
		t.Error("a corrupt snapshot restored")
	}
	if again2, _ := b.SnapshotPolicies(); !reflect.DeepEqual(again, again2) {
		t.Error("a failed restore changed the state")
	}
}

func TestGangDeterministic(t *testing.T) {
	for _, crit := range []sorter.Criterion{sorter.Prophet{}, sorter.TetrisPeak{}} {
		run := func() []string {
			a, clk := newGang(t, crit, 12, nil)
			var log []string
			for i := 0; i < 20; i++ {
				fw := fmt.Sprintf("f%d", i)
				_ = a.AddFramework(fw, "")
				_ = a.Observe(policy.AppDemand{Framework: fw, Demand: app(1+i%4, float64(1+i%3), float64(20*(i%5)))})
				clk.Advance(time.Second)
				for _, o := range a.Allocate().Offers {
					log = append(log, fmt.Sprint(o.Framework, o.Agent, o.Reason))
				}
			}
			return log
		}
		x, y := run(), run()
		if len(x) == 0 || !reflect.DeepEqual(x, y) {
			t.Errorf("%s: runs differ or offer nothing: %d vs %d offers", crit.Name(), len(x), len(y))
		}
	}
}

// Frameworks without an application demand are served after the gangs,
// by DRF, from what is left.
func TestGangThenDRF(t *testing.T) {
	a, _ := newGang(t, sorter.Prophet{}, 2, nil)
	_ = a.AddFramework("app", "")
	_ = a.AddFramework("plain", "")
	_ = a.Observe(policy.AppDemand{Framework: "app", Demand: app(2, 8, 10)})
	d := a.Allocate()
	if n := len(offersOf(d, "app")); n != 2 {
		t.Fatalf("app got %d executors", n)
	}
	for _, o := range offersOf(d, "plain") {
		if o.Resources.Scalars[resources.CPUs] != 0 {
			t.Errorf("plain got cpus the gang held: %v", o)
		}
	}
}

func TestSetAppDemandValidates(t *testing.T) {
	a, _ := newGang(t, sorter.Prophet{}, 1, nil)
	_ = a.AddFramework("f", "")
	bad := app(0, 1, 1)
	if err := a.Observe(policy.AppDemand{Framework: "f", Demand: bad}); err == nil || !strings.Contains(err.Error(), "executors") {
		t.Errorf("E=0: %v", err)
	}
	if err := a.Observe(policy.AppDemand{Framework: "nope", Demand: app(1, 1, 1)}); err == nil {
		t.Error("unknown framework accepted")
	}
	drf, _ := New(Config{Clock: &ManualClock{}})
	_ = drf.AddFramework("f", "")
	if err := drf.Observe(policy.AppDemand{Framework: "f", Demand: app(1, 1, 1)}); err == nil {
		t.Error("drf accepted an app demand")
	}
	_ = a.Observe(policy.AppDemand{Framework: "f", Demand: app(1, 1, 1)})
	if err := a.Observe(policy.AppDemand{Framework: "f", Demand: profile.AppDemand{}}); err != nil {
		t.Fatal(err)
	}
	if a.path.(*gangPath).m.App("f") != nil {
		t.Error("zero demand did not clear")
	}
}

// tetris-peak reserves lifetime peaks: two executors whose disk peaks sum
// above capacity never share an agent.
func TestTetrisPeakReservesPeaks(t *testing.T) {
	a, _ := newGang(t, sorter.TetrisPeak{}, 1, nil)
	_ = a.AddFramework("x", "")
	_ = a.AddFramework("y", "")
	_ = a.Observe(policy.AppDemand{Framework: "x", Demand: app(1, 1, 200)})
	_ = a.Observe(policy.AppDemand{Framework: "y", Demand: app(1, 1, 200)})
	d := a.Allocate()
	if len(d.Offers) != 1 {
		t.Fatalf("offers %v: want one (330 MB/s cannot hold two 200 MB/s peaks)", d.Offers)
	}
}

// A new leader restores the models before agents re-register; an agent
// that comes back keeps the executors the restored timeline holds for it.
func TestTimelineKeptWhenRestoredAgentReregisters(t *testing.T) {
	a, clk := newGang(t, sorter.Prophet{}, 2, nil)
	_ = a.AddFramework("f", "")
	_ = a.Observe(policy.AppDemand{Framework: "f", Demand: app(2, 2, 100)})
	a.Allocate()
	snap, err := a.SnapshotPolicies()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newGang(t, sorter.Prophet{}, 0, nil)
	if err := b.RestorePolicies(snap); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := b.AddAgent(fmt.Sprintf("a%d", i), AgentInfo{Total: gangAgent}); err != nil {
			t.Fatal(err)
		}
	}
	m := b.path.(*gangPath).m
	for i := 0; i < 2; i++ {
		tl := m.Agent(fmt.Sprintf("a%d", i)).TL
		if tl.Len() != 1 || tl.At(clk.T.Add(30*time.Second), profile.Disk) != 230 {
			t.Errorf("agent a%d after re-registering: %d executors, disk %v at +30 s; want 1 and 330-100",
				i, tl.Len(), tl.At(clk.T.Add(30*time.Second), profile.Disk))
		}
	}
}

func TestDeadlineMeans(t *testing.T) {
	tests := []struct {
		name string
		mean DeadlineMean
		wait time.Duration // the first application's wait before its offer
		// "b" declares 6s after "a", while "c" (declared with "a") waits
		want time.Duration // b's deadline after its arrival; 0 = none
	}{
		{"placed: mean of the placed waits", DeadlinePlaced, 4 * time.Second, 12 * time.Second},
		{"placed: zero waits are no mean", DeadlinePlaced, 0, 0},
		{"pending: mean of the queue's waits so far", DeadlinePending, 4 * time.Second, 18 * time.Second},
		{"pending: the same with no wait placed", DeadlinePending, 0, 18 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultGangParams()
			p.DeadlineMean = tc.mean
			a, clk := newGang(t, sorter.Prophet{}, 1, &p)
			for _, fw := range []string{"a", "c"} {
				_ = a.AddFramework(fw, "")
			}
			_ = a.Observe(policy.AppDemand{Framework: "a", Demand: app(1, 8, 10)})
			_ = a.Observe(policy.AppDemand{Framework: "c", Demand: app(1, 8, 10)}) // cannot fit beside a
			clk.Advance(tc.wait)
			if d := a.Allocate(); len(d.Offers) != 1 || d.Offers[0].Framework != "a" {
				t.Fatalf("offers %v", d.Offers)
			}
			clk.Advance(6*time.Second - tc.wait)
			_ = a.AddFramework("b", "")
			_ = a.Observe(policy.AppDemand{Framework: "b", Demand: app(1, 8, 10)})
			r := a.path.(*gangPath).m.App("b")
			var got time.Duration
			if r.Deadline != 0 {
				got = time.Duration(r.Deadline - r.Arrival)
			}
			if got != tc.want {
				t.Errorf("b's deadline arrival + %v, want + %v", got, tc.want)
			}
		})
	}
	p := DefaultGangParams()
	p.DeadlineMean = 9
	if p.Validate() == nil {
		t.Error("an unknown deadline mean validated")
	}
}

func TestShapeKey(t *testing.T) {
	base := app(1, 1, 10).Profile.Stages
	same := append([]profile.Stage(nil), base...)
	tests := []struct {
		name  string
		edit  func([]profile.Stage) []profile.Stage
		equal bool
	}{
		{"same values", func(s []profile.Stage) []profile.Stage { return same }, true},
		{"disk peak", func(s []profile.Stage) []profile.Stage { s[0].DiskBW += 1e-9; return s }, false},
		{"net peak", func(s []profile.Stage) []profile.Stage { s[1].NetBW = 0; return s }, false},
		{"end", func(s []profile.Stage) []profile.Stage { s[1].End++; return s }, false},
		{"a stage fewer", func(s []profile.Stage) []profile.Stage { return s[:1] }, false},
		{"peaks swapped", func(s []profile.Stage) []profile.Stage { s[1].DiskBW, s[1].NetBW = s[1].NetBW, s[1].DiskBW; return s }, false},
	}
	for _, tc := range tests {
		other := tc.edit(append([]profile.Stage(nil), base...))
		if got := shapeOf(base) == shapeOf(other); got != tc.equal {
			t.Errorf("%s: keys equal %v, want %v", tc.name, got, tc.equal)
		}
	}
}

// TestExecutorsShareProfile: an application's executors share its
// declared stages and one preparation of them (timeline.go's offered),
// which is sound only if nothing writes them afterwards: not the caller
// changing what it declared, not recovery, progress, the operator view, a
// snapshot, nor the application declaring again.
func TestExecutorsShareProfile(t *testing.T) {
	a, clk := newGang(t, sorter.Prophet{}, 3, nil)
	_ = a.AddFramework("f", "")
	d := app(3, 2, 100)
	want := append([]profile.Stage(nil), d.Profile.Stages...)
	if err := a.Observe(policy.AppDemand{Framework: "f", Demand: d}); err != nil {
		t.Fatal(err)
	}
	d.Profile.Stages[0].DiskBW = 300 // the caller's copy, not the model's
	t0 := clk.T
	dec := a.Allocate()
	if len(dec.Offers) != 3 {
		t.Fatalf("offers %v", dec.Offers)
	}
	m := a.path.(*gangPath).m
	rec := m.App("f")
	decl := rec.Demand.Profile.Stages
	for _, o := range dec.Offers {
		x := m.Agent(o.Agent).Executors()[0]
		if &x.Profile.Stages[0] != &decl[0] {
			t.Errorf("executor on %s has its own copy of the stages", o.Agent)
		}
	}
	clk.Advance(90 * time.Second)
	if err := a.Observe(policy.StageProgress{Framework: "f", Agent: dec.Offers[0].Agent, Stage: 0, Done: 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := a.Recover("f", dec.Offers[1].Agent, dec.Offers[1].Resources, nil); err != nil {
		t.Fatal(err)
	}
	if view, _ := prophet.Of(a).Timelines(); len(view) == 0 {
		t.Fatal("no timelines in the view")
	}
	if _, err := a.SnapshotPolicies(); err != nil {
		t.Fatal(err)
	}
	_ = a.Observe(policy.AppDemand{Framework: "f", Demand: app(1, 2, 200)}) // a new declaration, a new record
	a.Allocate()
	if !reflect.DeepEqual(decl, want) {
		t.Errorf("declared stages now %+v, were %+v", decl, want)
	}
	// The third executor, untouched throughout, still reads its prediction:
	// 330 - 100 during stage 0 of the first declaration.
	third := m.Agent(dec.Offers[2].Agent).TL
	if got := third.At(t0.Add(30*time.Second), profile.Disk); got != 230 {
		t.Errorf("disk available on %s during stage 0: %v, want 230", dec.Offers[2].Agent, got)
	}
}

// shapeOf is the gang path's key of stages (prophet.App.Shape).
func shapeOf(stages []profile.Stage) string {
	r := prophet.App{Demand: profile.AppDemand{Profile: profile.Profile{Stages: stages}}}
	return r.Shape()
}
