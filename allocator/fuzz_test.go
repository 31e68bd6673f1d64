package allocator

import (
	"bytes"
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/allocator/policy/bandit"
	"github.com/allot-sched/allot/sorter"
)

// policyKinds are the allocators whose policies keep state in the
// registry's policy record: the bandit (JSON), the gang timelines (JSON)
// and the FSP virtual cluster (gob).
var policyKinds = []func(tb testing.TB) *Allocator{
	func(tb testing.TB) *Allocator {
		return banditFixture(tb, 1, bandit.Config{Step: 0.3, WaitScale: -1}).a
	},
	func(tb testing.TB) *Allocator { a, _ := newGang(tb, sorter.Prophet{}, 2, nil); return a },
	func(tb testing.TB) *Allocator { return newFixture(tb, Config{Sorter: sorter.FSP{Oracle: true}}).a },
	func(tb testing.TB) *Allocator { return newFixture(tb, Config{}).a },
}

// FuzzRestorePolicies feeds a policy record (replicated by raft, restored
// by a new leader) to RestorePolicies on a fresh allocator of each policy
// kind, and to SplitPolicies (the operator's "policy show"). A damaged
// record is an error that changes nothing; an accepted one snapshots and
// restores again to the same bytes.
func FuzzRestorePolicies(f *testing.F) {
	for k, mk := range policyKinds {
		a := mk(f)
		snap, err := a.SnapshotPolicies()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(snap, uint8(k))
	}
	// states with content: the co-locating bandit after a few
	// observations, timelines after allocating apps
	fx, _ := coLocate(f, 11, bandit.Config{Step: 0.3, WaitScale: -1}, nil, [2]string{"b", "B"}, [2]string{"c", "C"})
	fx.observe(usageHigh)
	fx.observe(usageLow)
	if snap, err := fx.a.SnapshotPolicies(); err == nil {
		f.Add(snap, uint8(0))
	}
	g, clk := newGang(f, sorter.Prophet{}, 3, nil)
	for _, fw := range []string{"f0", "f1"} {
		_ = g.AddFramework(fw, "")
		_ = g.Observe(policy.AppDemand{Framework: fw, Demand: app(2, 2, 50)})
		clk.Advance(time.Second)
		g.Allocate()
	}
	if snap, err := g.SnapshotPolicies(); err == nil {
		f.Add(snap, uint8(1))
	}
	f.Add([]byte("{}"), uint8(0))
	f.Add([]byte{snapshotVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, uint8(3))
	f.Fuzz(func(t *testing.T, snap []byte, kind uint8) {
		SplitPolicies(snap)
		mk := policyKinds[int(kind)%len(policyKinds)]
		a := mk(t)
		before, err := a.SnapshotPolicies()
		if err != nil {
			t.Fatal(err)
		}
		if err := a.RestorePolicies(snap); err != nil {
			if after, _ := a.SnapshotPolicies(); !bytes.Equal(after, before) {
				t.Fatalf("a failed restore (%v) changed the policy state", err)
			}
			return
		}
		if _, err := SplitPolicies(snap); err != nil {
			t.Fatalf("RestorePolicies accepted what SplitPolicies rejects: %v", err)
		}
		a.Allocate() // the restored state must be usable, not just stored
		out, err := a.SnapshotPolicies()
		if err != nil {
			t.Fatalf("restored state does not snapshot: %v", err)
		}
		b := mk(t)
		if err := b.RestorePolicies(out); err != nil {
			t.Fatalf("a snapshot of restored state does not restore: %v", err)
		}
		if again, _ := b.SnapshotPolicies(); !bytes.Equal(again, out) {
			t.Fatalf("snapshot not stable across restore:\n%q\n%q", out, again)
		}
	})
}
