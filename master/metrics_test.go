package master

import (
	"errors"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// allocOK counts each refused allocator call under its op and nothing else.
func TestAllocOKCounts(t *testing.T) {
	h := newHarness(t, nil)
	calls := []struct {
		op  string
		err error
	}{
		{"recover", errors.New("no")},
		{"recover", nil},
		{"recover", errors.New("no")},
		{"revive", nil},
		{"add_framework", errors.New("no")},
	}
	for _, c := range calls {
		if ok := h.m.allocOK(c.op, c.err, "framework_id", "f"); ok != (c.err == nil) {
			t.Errorf("allocOK(%s, %v) = %v", c.op, c.err, ok)
		}
	}
	for op, want := range map[string]float64{"recover": 2, "revive": 0, "add_framework": 1} {
		if got := testutil.ToFloat64(h.m.m.allocErrors.WithLabelValues(op)); got != want {
			t.Errorf("allocator errors{op=%q} = %v, want %v", op, got, want)
		}
	}
}

// An event the allocator refuses on a real path (returning a declined offer
// for a framework it no longer knows) is counted, and the master still
// forgets the offer.
func TestDroppedRecoverIsCounted(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("cpus:2;mem:2048")
	fw := h.framework("gone")
	o := h.offer(fw)
	h.m.mu.Lock()
	if err := h.m.alloc.RemoveFramework(fw.id); err != nil {
		t.Fatal(err)
	}
	h.m.mu.Unlock()
	err := h.call(fw, &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: []mesos.OfferID{o.ID}}})
	if err != nil {
		t.Fatalf("DECLINE: %v", err)
	}
	if got := testutil.ToFloat64(h.m.m.allocErrors.WithLabelValues("recover")); got != 1 {
		t.Errorf("allocator errors{op=recover} = %v, want 1", got)
	}
	if n := h.outstanding(fw); n != 0 {
		t.Errorf("%d offers outstanding after the decline", n)
	}
}

// gauge is the value of the master's series name with label state (or
// none), from one scrape.
func gauge(t *testing.T, m *Master, name, state string) (float64, bool) {
	t.Helper()
	mfs, err := m.m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			if len(s.GetLabel()) == 0 && state == "" || len(s.GetLabel()) > 0 && s.GetLabel()[0].GetValue() == state {
				return s.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// A scrape never waits for m.mu: while the lock is held it reports the
// last reading (an earlier scrape's or the allocation cycle's), and when
// the lock is free it reads live state.
func TestStateGaugesDoNotWaitForTheLock(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("cpus:1;mem:64")
	if v, _ := gauge(t, h.m, "allot_master_agents", "connected"); v != 1 {
		t.Fatalf("connected agents = %v with the lock free, want 1", v)
	}
	h.agent("cpus:1;mem:64")
	h.m.mu.Lock()
	got := make(chan float64, 1)
	go func() {
		v, _ := gauge(t, h.m, "allot_master_agents", "connected")
		got <- v
	}()
	select {
	case v := <-got:
		if v != 1 {
			t.Errorf("connected agents = %v while the lock is held, want the last reading, 1", v)
		}
	case <-time.After(5 * time.Second):
		t.Error("a scrape waited for m.mu")
	}
	h.m.mu.Unlock()
	if v, _ := gauge(t, h.m, "allot_master_agents", "connected"); v != 2 {
		t.Fatalf("connected agents = %v with the lock free again, want 2", v)
	}
	// A cycle takes a new reading only after a scrape found the lock
	// held, under the lock it holds anyway.
	h.agent("cpus:1;mem:64")
	h.allocate()
	if g := h.m.gauges.Load(); g == nil || g.agentsConn != 2 {
		t.Fatalf("after a cycle nobody asked for, the reading is %+v, want the scrape's 2 connected agents", g)
	}
	h.m.mu.Lock()
	if v, _ := gauge(t, h.m, "allot_master_agents", "connected"); v != 2 {
		t.Errorf("connected agents = %v while the lock is held, want the last reading, 2", v)
	}
	h.m.mu.Unlock()
	h.allocate()
	if g := h.m.gauges.Load(); g == nil || g.agentsConn != 3 {
		t.Fatalf("after a cycle following a scrape that found the lock held, the reading is %+v, want 3 connected agents", g)
	}
}
