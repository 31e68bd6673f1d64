package allocator

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/allocator/policy/fsp"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// fspFixture is an FSP allocator on two agents of 4096 MB (8192 MB of
// virtual memory), with frameworks a and b registered.
func fspFixture(t *testing.T) (*fixture, *fsp.Model) {
	t.Helper()
	fx := newFixture(t, Config{Sorter: sorter.FSP{Oracle: true}})
	fx.agent("n1", "cpus:8;mem:4096").agent("n2", "cpus:8;mem:4096")
	fx.framework("a", "").framework("b", "")
	return fx, fx.a.models[0].(*fsp.Model)
}

func (fx *fixture) size(fw string, s policy.JobSize) {
	fx.t.Helper()
	if err := fx.a.Observe(sizeOf(fw, s)); err != nil {
		fx.t.Fatal(err)
	}
}

func (fx *fixture) view(fw string) sorter.Virtual {
	return fx.a.fws[fx.a.fwByID[fw]].view.Virtual
}

func near(x, y float64) bool { return math.Abs(x-y) <= 1e-6*math.Max(1, math.Abs(y)) }

// TestVirtualClusterByHand: a (APB 2048) and b (APB 8192, AM 1024) enter
// at t=0. VRA gives a min(2048, 8192/2) = 2048 and b the 6144 left; a
// shrinks at 2048 MB/s and leaves at t = 204800/2048 = 100 s; b shrinks
// at 6144-1024 = 5120 MB/s until then (512000 MB s done) and at
// 8192-1024 = 7168 MB/s after, so its 691200 MB s run out at
// 100 + 179200/7168 = 125 s.
func TestVirtualClusterByHand(t *testing.T) {
	fx, _ := fspFixture(t)
	fx.size("a", policy.JobSize{Job: "ja", Known: true, Size: 204800, APB: 2048})
	fx.size("b", policy.JobSize{Job: "jb", Known: true, Size: 691200, APB: 8192, AM: 1024})
	steps := []struct {
		at           float64
		a, b         sorter.Virtual
		aDone, bDone bool
	}{
		{at: 0, a: sorter.Virtual{State: sorter.VirtualKnown, Remaining: 204800, Resource: 2048},
			b: sorter.Virtual{State: sorter.VirtualKnown, Remaining: 691200, Resource: 6144}},
		{at: 10, a: sorter.Virtual{State: sorter.VirtualKnown, Remaining: 184320, Resource: 2048},
			b: sorter.Virtual{State: sorter.VirtualKnown, Remaining: 640000, Resource: 6144}},
		{at: 110, a: sorter.Virtual{State: sorter.VirtualDone, Remaining: -10},
			b: sorter.Virtual{State: sorter.VirtualKnown, Remaining: 179200 - 71680, Resource: 8192}},
		{at: 130, a: sorter.Virtual{State: sorter.VirtualDone, Remaining: -30},
			b: sorter.Virtual{State: sorter.VirtualDone, Remaining: -5}},
	}
	start := fx.clk.Now()
	for _, s := range steps {
		fx.clk.T = start.Add(time.Duration(s.at * float64(time.Second)))
		fx.cycle()
		for fw, want := range map[string]sorter.Virtual{"a": s.a, "b": s.b} {
			got := fx.view(fw)
			if got.State != want.State || !near(got.Remaining, want.Remaining) || !near(got.Resource, want.Resource) {
				t.Fatalf("t=%vs: %s's view %+v, want %+v", s.at, fw, got, want)
			}
		}
	}
}

// TestUnknownToKnownEq10: a job declared of unknown size with S_init
// served fairly for a while, then predicted, gets VS_new = S_pred -
// (S_init - VS_cur) and moves to the size-based queue.
func TestUnknownToKnownEq10(t *testing.T) {
	fx, _ := fspFixture(t)
	start := fx.clk.Now()
	const sInit = 1e7
	fx.size("a", policy.JobSize{Job: "ja", Size: sInit, APB: 4096})
	fx.size("b", policy.JobSize{Job: "jb", APB: 4096}) // infinite initial size
	fx.clk.T = start.Add(20 * time.Second)
	fx.cycle()
	vsCur := fx.view("a").Remaining // 1e7 - 4096 x 20
	if v := fx.view("a"); v.State != sorter.VirtualUnknown || !near(vsCur, sInit-4096*20) || v.Resource != 4096 {
		t.Fatalf("a before the prediction: %+v", v)
	}
	if v := fx.view("b"); v.State != sorter.VirtualUnknown || !math.IsInf(v.Remaining, 1) {
		t.Fatalf("b, of infinite initial size: %+v", v)
	}
	const sPred = 200000
	fx.size("a", policy.JobSize{Job: "ja", Known: true, Size: sPred, APB: 4096})
	fx.cycle()
	if v, want := fx.view("a"), sPred-(sInit-vsCur); v.State != sorter.VirtualKnown || !near(v.Remaining, want) {
		t.Fatalf("a after the prediction: %+v, want known with %v left", v, want)
	}
	// a prediction below the work already done: the job leaves at once
	fx.size("b", policy.JobSize{Job: "jb", Known: true, Size: 1000, APB: 4096})
	fx.clk.Advance(3 * time.Second)
	fx.cycle()
	if v := fx.view("b"); v.State != sorter.VirtualDone || !near(v.Remaining, -3) {
		t.Fatalf("b predicted below its virtual work: %+v, want done 3 s ago", v)
	}
}

// TestVirtualLeaveRules: an unknown-size job leaves the virtual cluster
// with its framework; a known-size one stays and keeps its share.
func TestVirtualLeaveRules(t *testing.T) {
	fx, m := fspFixture(t)
	fx.framework("c", "")
	fx.size("a", policy.JobSize{Job: "ja", APB: 8192})
	fx.size("b", policy.JobSize{Job: "jb", Known: true, Size: 1e9, APB: 8192})
	fx.size("c", policy.JobSize{Job: "jc", APB: 8192})
	if n := len(m.Queue()); n != 3 {
		t.Fatalf("%d jobs in the virtual cluster, want 3", n)
	}
	if err := fx.a.RemoveFramework("a"); err != nil {
		t.Fatal(err)
	}
	if err := fx.a.RemoveFramework("b"); err != nil {
		t.Fatal(err)
	}
	fx.size("c", policy.JobSize{Job: "jc2", APB: 8192}) // c's next job: jc leaves
	var jobs []string
	for _, j := range m.Queue() {
		jobs = append(jobs, j.Job+"="+formatMB(j.VR))
	}
	if got := strings.Join(jobs, " "); got != "jb=4096 jc2=4096" {
		t.Fatalf("virtual cluster %q, want the ghost of jb and jc2 sharing 8192 MB", got)
	}
}

func formatMB(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// TestFSPOrdering: the tiers of sorter.FSP as the allocator serves them:
// an owed fair-queue job, then late jobs by virtual finish, then the
// size-based queue by remaining virtual size, then the fair-queue jobs
// that hold their share and the frameworks that declared nothing.
func TestFSPOrdering(t *testing.T) {
	fx := newFixture(t, Config{Sorter: sorter.FSP{}})
	fx.agent("n1", "cpus:64;mem:65536")
	for _, fw := range []string{"none", "fairFull", "big", "small", "late", "later", "owed"} {
		fx.framework(fw, "")
	}
	start := fx.clk.Now()
	// late and later run out virtually (at 5 s and 10 s); big and small
	// have 1e9 and 1e8 MB s left
	fx.size("late", policy.JobSize{Job: "l", Known: true, Size: 5 * 1024, APB: 1024})
	fx.size("later", policy.JobSize{Job: "l2", Known: true, Size: 10 * 1024, APB: 1024})
	fx.size("big", policy.JobSize{Job: "b", Known: true, Size: 1e9, APB: 1024})
	fx.size("small", policy.JobSize{Job: "s", Known: true, Size: 1e8, APB: 1024})
	fx.size("owed", policy.JobSize{Job: "o", APB: 1024})
	fx.size("fairFull", policy.JobSize{Job: "f", APB: 512})
	// fairFull already holds more than its virtual 512 MB
	if err := fx.a.AddAgent("n2", AgentInfo{Total: resources.MustParse("cpus:4;mem:1024"), Used: map[string]resources.Resources{"fairFull": resources.MustParse("cpus:1;mem:1024")}}); err != nil {
		t.Fatal(err)
	}
	fx.clk.T = start.Add(20 * time.Second)
	fx.a.Allocate() // refresh: n1 is offered whole to the first in order
	var order []string
	for _, n := range fx.a.global.items {
		order = append(order, fx.a.fws[n].id)
	}
	// owed got n1 (the first cycle's offer), so it now holds more than its
	// share and sorts into the last tier, after the frameworks holding less
	want := "late later small big none fairFull owed"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("order %q, want %q", got, want)
	}
}

// TestFSPProbingQueue: probes within the probing share (a tenth of 64 GB:
// the first three of 2048 MB) come first, oldest first; the fourth
// borrows after everything else. Probes are not in the virtual cluster.
func TestFSPProbingQueue(t *testing.T) {
	cases := []struct {
		share float64
		want  string
	}{
		{0, "p1 p2 p3 small owed p4"},    // DefaultProbeShare
		{0.2, "p1 p2 p3 p4 small owed"},  // all four fit
		{-1, "small owed p1 p2 p3 p4"},   // no share: every probe borrows
		{0.05, "p1 small owed p2 p3 p4"}, // one fits
	}
	for _, c := range cases {
		fx := newFixture(t, Config{Sorter: sorter.FSP{ProbeShare: c.share}})
		fx.agent("n1", "cpus:64;mem:65536")
		for _, fw := range []string{"owed", "p4", "p3", "small", "p2", "p1"} {
			fx.framework(fw, "")
		}
		start := fx.clk.Now()
		fx.size("small", policy.JobSize{Job: "s", Known: true, Size: 1e8, APB: 1024})
		for i, p := range []string{"p1", "p2", "p3", "p4"} {
			fx.clk.T = start.Add(time.Duration(i) * time.Second)
			fx.size(p, policy.JobSize{Job: "probe-" + p, Probe: true, APB: 2048})
		}
		// owed is a fair-queue job holding more than its share once it is
		// offered n1: keep it out of the first tier by its holdings
		fx.size("owed", policy.JobSize{Job: "o", APB: 1024})
		if err := fx.a.AddAgent("n2", AgentInfo{Total: resources.MustParse("cpus:4;mem:2048"), Used: map[string]resources.Resources{"owed": resources.MustParse("cpus:1;mem:2048")}}); err != nil {
			t.Fatal(err)
		}
		fx.clk.T = start.Add(10 * time.Second)
		fx.a.Allocate()
		var order []string
		for _, n := range fx.a.global.items {
			order = append(order, fx.a.fws[n].id)
		}
		if got := strings.Join(order, " "); got != c.want {
			t.Errorf("share %v: order %q, want %q", c.share, got, c.want)
		}
		if v := fx.view("p4"); v.State != sorter.VirtualProbe || v.Ahead != 8192 || v.Remaining != -7 {
			t.Errorf("share %v: p4's view %+v, want a probe 7 s old with 8192 MB ahead", c.share, v)
		}
		if n := len(fx.a.models[0].(*fsp.Model).Queue()); n != 2 {
			t.Errorf("share %v: %d jobs in the virtual cluster, want 2 (probes stay out)", c.share, n)
		}
	}
}

// fspScript drives an FSP allocator through declarations, cycles,
// recoveries and removals at uneven times; the same script gives the
// same state.
func fspScript(t *testing.T, fx *fixture, steps int) {
	t.Helper()
	for i := 0; i < steps; i++ {
		fw := "f" + strconv.Itoa(i)
		fx.framework(fw, "")
		fx.demand(fw, "cpus:1;mem:1024", 3)
		known := i%3 != 0
		size := float64(1+i%5) * 30000
		fx.size(fw, policy.JobSize{Job: "j" + fw, Known: known, Size: map[bool]float64{true: size}[known], APB: float64(1024 * (1 + i%4)), AM: 256})
		if i%3 == 0 && i > 2 {
			fx.size(fw, policy.JobSize{Job: "j" + fw, Known: true, Size: size / 2, APB: 2048})
		}
		if i%5 == 2 {
			p := "probe" + strconv.Itoa(i)
			fx.framework(p, "")
			fx.demand(p, "cpus:1;mem:1024", 1)
			fx.size(p, policy.JobSize{Job: "p" + fw, Probe: true, APB: 1024})
		}
		out := fx.cycle()
		if i%2 == 1 {
			fx.decline(out, 3)
		}
		if i%4 == 3 {
			if err := fx.a.RemoveFramework("f" + strconv.Itoa(i-2)); err != nil {
				t.Fatal(err)
			}
		}
		fx.clk.Advance(time.Duration(700+i*37) * time.Millisecond)
	}
}

func fspScriptFixture(t *testing.T) *fixture {
	fx := newFixture(t, Config{Sorter: sorter.FSP{}, Mode: Characterized})
	fx.agent("n1", "cpus:8;mem:8192").agent("n2", "cpus:8;mem:8192")
	return fx
}

// TestVirtualSnapshotRoundTrip: a restored virtual cluster is the one
// snapshotted (same bytes again) and goes on exactly as the original.
func TestVirtualSnapshotRoundTrip(t *testing.T) {
	src := fspScriptFixture(t)
	fspScript(t, src, 12)
	snap, err := src.a.SnapshotPolicies()
	if err != nil {
		t.Fatal(err)
	}
	dst := newFixture(t, Config{Sorter: sorter.FSP{}, Mode: Characterized})
	if err := dst.a.RestorePolicies([]byte("garbage")); err == nil {
		t.Fatal("restoring garbage succeeded")
	}
	if err := dst.a.RestorePolicies(snap); err != nil {
		t.Fatal(err)
	}
	again, err := dst.a.SnapshotPolicies()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, snap) {
		t.Fatal("snapshot of the restored virtual cluster differs from the one restored")
	}
	// the new leader's allocator learns agents and frameworks again; the
	// virtual cluster goes on from where it was
	dst.clk.T = src.clk.T
	dst.agent("n1", "cpus:8;mem:8192").agent("n2", "cpus:8;mem:8192")
	for _, f := range src.a.fws {
		if f != nil {
			dst.framework(f.id, "")
		}
	}
	src.clk.Advance(40 * time.Second)
	dst.clk.T = src.clk.T
	src.cycle()
	dst.cycle()
	for _, f := range src.a.fws {
		if f == nil {
			continue
		}
		if got, want := dst.view(f.id), f.view.Virtual; got != want {
			t.Fatalf("%s after restore: %+v, want %+v", f.id, got, want)
		}
	}
	a, _ := src.a.SnapshotPolicies()
	b, _ := dst.a.SnapshotPolicies()
	if !bytes.Equal(a, b) {
		t.Fatal("original and restored virtual clusters diverged")
	}
}

// TestVirtualDeterminism: two allocators fed the same events make the
// same offers and reach the same virtual cluster, bit for bit.
func TestVirtualDeterminism(t *testing.T) {
	var snaps [2][]byte
	var offers [2][]Offer
	for k := range snaps {
		fx := fspScriptFixture(t)
		fspScript(t, fx, 16)
		offers[k] = fx.cycle()
		var err error
		if snaps[k], err = fx.a.SnapshotPolicies(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(snaps[0], snaps[1]) {
		t.Fatal("same events, different virtual clusters")
	}
	if len(offers[0]) != len(offers[1]) {
		t.Fatalf("same events, %d and %d offers", len(offers[0]), len(offers[1]))
	}
	for i := range offers[0] {
		if offers[0][i].Framework != offers[1][i].Framework || offers[0][i].Agent != offers[1][i].Agent {
			t.Fatalf("offer %d: %+v and %+v", i, offers[0][i], offers[1][i])
		}
	}
}

// TestSetJobSizeValidates: bad declarations are refused, naming what is
// wrong; a valid one to a policy without a virtual cluster is accepted
// and ignored.
func TestSetJobSizeValidates(t *testing.T) {
	fx, _ := fspFixture(t)
	cases := []struct {
		s    policy.JobSize
		want string
	}{
		{policy.JobSize{Size: 1, Known: true, APB: 1}, "no name"},
		{policy.JobSize{Job: "j", Size: math.NaN(), APB: 1}, "size"},
		{policy.JobSize{Job: "j", Size: -1, APB: 1}, "size"},
		{policy.JobSize{Job: "j", Size: math.Inf(1), Known: true, APB: 1}, "size"},
		{policy.JobSize{Job: "j", Known: true, APB: 1}, "known size must be > 0"},
		{policy.JobSize{Job: "j", Size: 1, APB: 0}, "apb"},
		{policy.JobSize{Job: "j", Size: 1, APB: math.Inf(1)}, "apb"},
		{policy.JobSize{Job: "j", Size: 1, APB: 100, AM: 100}, "am"},
		{policy.JobSize{Job: "j", Size: 1, APB: 100, AM: -1}, "am"},
	}
	for _, c := range cases {
		if err := fx.a.Observe(sizeOf("a", c.s)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetJobSize(%+v) = %v, want an error about %q", c.s, err, c.want)
		}
	}
	if err := fx.a.Observe(sizeOf("nobody", policy.JobSize{Job: "j", APB: 1})); err == nil {
		t.Error("declaring a job for an unknown framework succeeded")
	}
	drf := newFixture(t, Config{})
	drf.framework("a", "")
	if err := drf.a.Observe(sizeOf("a", policy.JobSize{Job: "j", Known: true, Size: 5, APB: 1})); err != nil {
		t.Errorf("drf refused a valid job size: %v", err)
	}
}

// TestVRADRF: the DRF virtual cluster (sorter.FSP.DRF) on 16 cpus and
// 8192 MB. a (2048 MB, 16 cpus) and b (8192 MB, 8 cpus) have dominant
// share 1, c (1024 MB, no cpus) 1/8. Cpus bind first: 16s + 8s = 16 at
// s = 2/3, so a gets 2/3 of 2048 MB, b 2/3 of 8192 and c all of its 1024.
// Memory alone would give c 1024, a 2048 and b the 5120 left.
func TestVRADRF(t *testing.T) {
	for _, c := range []struct {
		drf     bool
		a, b, c float64
	}{
		{true, 2048 * 2 / 3.0, 8192 * 2 / 3.0, 1024},
		{false, 2048, 5120, 1024},
	} {
		fx := newFixture(t, Config{Sorter: sorter.FSP{DRF: c.drf}})
		fx.agent("n1", "cpus:8;mem:4096").agent("n2", "cpus:8;mem:4096")
		fx.framework("a", "").framework("b", "").framework("c", "")
		fx.size("a", policy.JobSize{Job: "a", Known: true, Size: 1e6, APB: 2048, APBCPUs: 16})
		fx.size("b", policy.JobSize{Job: "b", Known: true, Size: 1e6, APB: 8192, APBCPUs: 8})
		fx.size("c", policy.JobSize{Job: "c", Known: true, Size: 1e6, APB: 1024, AM: 256})
		fx.cycle()
		for fw, want := range map[string]float64{"a": c.a, "b": c.b, "c": c.c} {
			if got := fx.view(fw).Resource; !near(got, want) {
				t.Errorf("drf %v: %s's virtual memory %v, want %v", c.drf, fw, got, want)
			}
		}
		if got := fx.view("c").Rate; !near(got, c.c-256) {
			t.Errorf("drf %v: c shrinks at %v MB/s, want its virtual memory less its AM", c.drf, got)
		}
	}
}

// A snapshot taken while framework a ran, restored by an allocator where a
// is gone (removed before the failover), does not bring a's unknown-size
// job back for good: b gets the whole virtual cluster.
func TestRestoreForgetsRemovedFrameworks(t *testing.T) {
	fx, _ := fspFixture(t)
	fx.size("a", policy.JobSize{Job: "a1", Known: false, APB: 8192})
	fx.size("b", policy.JobSize{Job: "b1", Known: true, Size: 1e9, APB: 8192})
	fx.cycle()
	snap, err := fx.a.SnapshotPolicies()
	if err != nil {
		t.Fatal(err)
	}
	// The new leader: a was removed before the failover; b re-registered.
	nx := newFixture(t, Config{Sorter: sorter.FSP{Oracle: true}})
	nx.agent("n1", "cpus:8;mem:4096").agent("n2", "cpus:8;mem:4096").framework("b", "")
	if err := nx.a.RestorePolicies(snap); err != nil {
		t.Fatal(err)
	}
	nx.a.ForgetUnknownFrameworks()
	m := nx.a.models[0].(*fsp.Model)
	if h := m.Head("a"); h != nil {
		t.Fatalf("a's job came back with the snapshot: %+v", *h)
	}
	for _, j := range m.Queue() {
		if j.FW == "a" {
			t.Fatalf("a's unknown-size job is still in the virtual cluster, holding %v MB", j.VR)
		}
	}
	if j := m.Head("b"); j == nil || !near(j.VR, 8192) {
		t.Fatalf("b's virtual memory after the restore: %+v, want all 8192 MB", j)
	}
}

// sizeOf is s declared by framework fw.
func sizeOf(fw string, s policy.JobSize) policy.JobSize {
	s.Framework = fw
	return s
}
