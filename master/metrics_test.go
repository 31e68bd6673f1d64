package master

import (
	"errors"
	"testing"

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
