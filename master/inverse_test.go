package master

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api/operator"
)

func (h *harness) pressure() operator.Pressure {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	return h.m.pressureLocked()
}

// outstandingInverse lists the ids of fw's outstanding inverse offers.
func (h *harness) outstandingInverse(fw *fakeFramework) []string {
	var ids []string
	for _, io := range h.pressure().InverseOffers {
		if io.FrameworkID == fw.id {
			ids = append(ids, io.ID)
		}
	}
	return ids
}

func answerInverse(typ scheduler.Call_Type, refuse *float64, ids ...mesos.OfferID) *scheduler.Call {
	var fl *mesos.Filters
	if refuse != nil {
		fl = &mesos.Filters{RefuseSeconds: refuse}
	}
	c := &scheduler.Call{Type: typ}
	if typ == scheduler.Call_ACCEPT_INVERSE_OFFERS {
		c.AcceptInverseOffers = &scheduler.Call_AcceptInverseOffers{InverseOfferIDs: ids, Filters: fl}
	} else {
		c.DeclineInverseOffers = &scheduler.Call_DeclineInverseOffers{InverseOfferIDs: ids, Filters: fl}
	}
	return c
}

// holdAndStarve: f1 holds the only agent's offer, f2 arrives and gets
// nothing.
func holdAndStarve(t *testing.T, reclaim bool) (*harness, string, *fakeFramework, *fakeFramework, mesos.Offer) {
	h := newHarness(t, func(c *Config) { c.Reclaim = reclaim })
	agentID, _ := h.agent("cpus:4;mem:4096")
	f1 := h.framework("f1")
	o := h.offer(f1)
	f2 := h.framework("f2")
	h.allocate()
	return h, agentID, f1, f2, o
}

// The whole conversation: the holder is asked for its excess over the
// fair share (half the agent), is not asked twice, declines
// with a filter that keeps it quiet, is asked again after it, and the
// inverse offer is rescinded once the starving framework got room.
func TestInverseOffersConversation(t *testing.T) {
	h, agentID, f1, f2, o := holdAndStarve(t, true)
	ev := f1.nextEvent(t, scheduler.Event_INVERSE_OFFERS)
	if n := len(ev.InverseOffers.InverseOffers); n != 1 {
		t.Fatalf("INVERSE_OFFERS carries %d, want 1", n)
	}
	io := ev.InverseOffers.InverseOffers[0]
	if io.FrameworkID.Value != f1.id || io.GetAgentID().GetValue() != agentID {
		t.Fatalf("inverse offer %+v: want framework %s, agent %s", io, f1.id, agentID)
	}
	if got := scalarsOf(io.Resources); !reflect.DeepEqual(got, map[string]float64{"cpus": 2, "mem": 2048}) {
		t.Fatalf("inverse offer asks for %v", got)
	}
	p := h.pressure()
	if !p.Reclaim || len(p.Starving) != 1 || p.Starving[0].FrameworkID != f2.id || len(p.InverseOffers) != 1 ||
		!strings.Contains(p.InverseOffers[0].Reason, f2.id+" waits") {
		t.Fatalf("pressure %+v", p)
	}

	h.allocate()
	if ids := h.outstandingInverse(f1); !reflect.DeepEqual(ids, []string{io.OfferID.Value}) {
		t.Fatalf("after a second cycle outstanding %v, want only %s", ids, io.OfferID.Value)
	}

	refuse := 60.0
	if err := h.call(f1, answerInverse(scheduler.Call_DECLINE_INVERSE_OFFERS, &refuse, io.OfferID)); err != nil {
		t.Fatal(err)
	}
	h.allocate()
	if ids := h.outstandingInverse(f1); len(ids) != 0 {
		t.Fatalf("declined for 60 s but asked again at once: %v", ids)
	}
	h.clock.Advance(61 * time.Second)
	h.allocate()
	again := f1.nextEvent(t, scheduler.Event_INVERSE_OFFERS).InverseOffers.InverseOffers[0]
	if again.OfferID == io.OfferID {
		t.Fatalf("a new inverse offer reuses the declined one's id %s", io.OfferID.Value)
	}

	// f1 gives the agent back: f2 gets it and the inverse offer is withdrawn.
	long := 600.0
	if err := h.call(f1, &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: []mesos.OfferID{o.ID}, Filters: &mesos.Filters{RefuseSeconds: &long}}}); err != nil {
		t.Fatal(err)
	}
	h.allocate()
	f2.nextEvent(t, scheduler.Event_OFFERS)
	if r := f1.nextEvent(t, scheduler.Event_RESCIND_INVERSE_OFFER); r.RescindInverseOffer.InverseOfferID != again.OfferID {
		t.Fatalf("rescinded %s, want %s", r.RescindInverseOffer.InverseOfferID.Value, again.OfferID.Value)
	}
	// f1 now starves by its own decline (its filter covers the agent), so
	// nothing on that agent is asked of f2 for it.
	if p := h.pressure(); len(p.Starving) != 1 || p.Starving[0].FrameworkID != f1.id || len(p.InverseOffers) != 0 {
		t.Fatalf("pressure after f2 got room: %+v", p)
	}
}

// Accepting removes the inverse offer and keeps the pair quiet for the
// default refuse_seconds (5 s), so the framework has time to release.
func TestInverseOfferAccepted(t *testing.T) {
	h, _, f1, _, _ := holdAndStarve(t, true)
	io := f1.nextEvent(t, scheduler.Event_INVERSE_OFFERS).InverseOffers.InverseOffers[0]
	if err := h.call(f1, answerInverse(scheduler.Call_ACCEPT_INVERSE_OFFERS, nil, io.OfferID)); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(4 * time.Second)
	h.allocate()
	if ids := h.outstandingInverse(f1); len(ids) != 0 {
		t.Fatalf("accepted 4 s ago and asked again: %v", ids)
	}
	h.clock.Advance(time.Second)
	h.allocate()
	if ids := h.outstandingInverse(f1); len(ids) != 1 {
		t.Fatalf("5 s after accepting, still holding: outstanding %v, want one", ids)
	}
}

// Unknown ids (a rescind crossed the answer), another framework's ids and a
// call without its body.
func TestInverseOfferAnswers(t *testing.T) {
	h, _, f1, f2, _ := holdAndStarve(t, true)
	io := f1.nextEvent(t, scheduler.Event_INVERSE_OFFERS).InverseOffers.InverseOffers[0]
	if err := h.call(f2, answerInverse(scheduler.Call_DECLINE_INVERSE_OFFERS, nil, io.OfferID, mesos.OfferID{Value: "nope"})); err != nil {
		t.Fatalf("stale or foreign ids: %v", err)
	}
	if ids := h.outstandingInverse(f1); len(ids) != 1 {
		t.Fatalf("f2 answered f1's inverse offer: outstanding %v", ids)
	}
	err := h.call(f1, &scheduler.Call{Type: scheduler.Call_ACCEPT_INVERSE_OFFERS})
	if err == nil || !strings.Contains(err.Error(), "inverse_offer_ids") {
		t.Fatalf("ACCEPT_INVERSE_OFFERS without a body: %v", err)
	}
}

// With reclaim off (the default) nothing is asked back, the pressure is
// still there to read, and /state keeps its shape.
func TestInverseOffersOffByDefault(t *testing.T) {
	h, _, f1, f2, _ := holdAndStarve(t, false)
	h.allocate()
	p := h.pressure()
	if p.Reclaim || len(p.InverseOffers) != 0 || len(p.Starving) != 1 || p.Starving[0].FrameworkID != f2.id {
		t.Fatalf("pressure %+v", p)
	}
	if ids := h.outstandingInverse(f1); len(ids) != 0 {
		t.Fatalf("inverse offers with reclaim off: %v", ids)
	}
	rec := httptest.NewRecorder()
	h.m.handlePressure(rec, httptest.NewRequest(http.MethodGet, "/pressure", nil))
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	st := doc["starving"].([]any)[0].(map[string]any)
	if st["framework_id"] != f2.id || st["fair_share"].(float64) != 0.5 || doc["reclaim"] != false {
		t.Fatalf("/pressure %s", rec.Body.String())
	}
}
