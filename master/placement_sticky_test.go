package master

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api/operator"
)

// unplacedOfFramework is fw's reason as /state shows it.
func (h *harness) unplacedOfFramework(fw *fakeFramework) *operator.Unplaced {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	for _, f := range h.m.stateFrameworksLocked() {
		if f.ID == fw.id {
			return f.Unplaced
		}
	}
	return nil
}

// A framework that waits for room keeps its reason in /state when it is
// offered a leftover it cannot use (the offer resets its idle cycles), and
// loses it once it launches.
func TestUnplacedReasonStaysUntilLaunch(t *testing.T) {
	h := newHarness(t, nil)
	agentID, _ := h.agent("cpus:4;mem:4096")
	holder := h.framework("holder")
	o := h.offer(holder)
	if err := h.call(holder, launchCall(o, refuse(3600), commandTask("hold", agentID, 3, 32))); err != nil {
		t.Fatal(err)
	}
	w := h.framework("waiter")
	req := &scheduler.Call{Type: scheduler.Call_REQUEST, Request: &scheduler.Call_Request{Requests: []mesos.Request{
		{Resources: []mesos.Resource{scalarRes("cpus", 2), scalarRes("mem", 32)}}}}}
	if err := h.call(w, req); err != nil {
		t.Fatal(err)
	}
	decline := func(o mesos.Offer) {
		t.Helper()
		if err := h.call(w, &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{
			OfferIDs: []mesos.OfferID{o.ID}, Filters: refuse(3600)}}); err != nil {
			t.Fatal(err)
		}
	}
	decline(h.offer(w)) // the leftover cpus 1: too small for its cpus 2
	for range unplacedIdleCycles {
		h.allocate()
	}
	if u := h.unplacedOfFramework(w); u == nil || u.Reason != "no_room" || u.Dimension != "cpus" {
		t.Fatalf("/state after %d idle cycles: %+v, want no_room on cpus", unplacedIdleCycles, u)
	}

	// A revive lifts its filter: the leftover is offered again, which it
	// cannot use either. Its reason stays.
	if err := h.call(w, &scheduler.Call{Type: scheduler.Call_REVIVE}); err != nil {
		t.Fatal(err)
	}
	leftover := h.offer(w)
	if u := h.unplacedOfFramework(w); u == nil || u.Reason != "no_room" || u.IdleCycles != 0 {
		t.Errorf("/state just after a fleeting offer: %+v, want no_room still shown (0 idle cycles)", u)
	}
	h.allocate()
	if u := h.unplacedOfFramework(w); u == nil || u.Reason != "no_room" {
		t.Errorf("/state a cycle after a fleeting offer: %+v, want no_room still shown", u)
	}

	// It launches what fits the leftover: it was placed, the reason goes.
	if err := h.call(w, launchCall(leftover, refuse(3600), commandTask("small", agentID, 0.5, 32))); err != nil {
		t.Fatal(err)
	}
	if u := h.unplacedOfFramework(w); u != nil {
		t.Errorf("/state after it launched: %+v, want no reason", u)
	}
}
