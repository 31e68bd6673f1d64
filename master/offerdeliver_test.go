package master

import (
	"fmt"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

// pbFramework subscribes a framework on a protobuf stream, whose OFFERS
// events the cycle delivers after m.mu is released (h.framework's streams
// are JSON, whose events are sent under the lock).
func pbFramework(t *testing.T, h *harness, name string) *fakeFramework {
	t.Helper()
	s := newFakeStream(t, api.Protobuf)
	ft := 60.0
	id, sid, err := h.m.admitFramework("", mesos.FrameworkInfo{User: "test", Name: name, FailoverTimeout: &ft}, nil, s.Stream)
	if err != nil {
		t.Fatal(err)
	}
	s.nextEvent(t, scheduler.Event_SUBSCRIBED)
	return &fakeFramework{id: id, streamID: sid, fakeStream: s}
}

// nextEvents waits for the stream's next n frames and returns them
// decoded, in order.
func nextEvents(t *testing.T, s *fakeStream, n int) []scheduler.Event {
	t.Helper()
	var out []scheduler.Event
	for len(out) < n {
		s.take(t, fmt.Sprintf("event %d of %d", len(out)+1, n), func(b []byte) bool {
			var ev scheduler.Event
			if err := s.Codec.Unmarshal(b, &ev); err != nil {
				t.Fatalf("undecodable frame: %v", err)
			}
			out = append(out, ev)
			return true
		})
	}
	return out
}

// orderCase is what happens to a framework between a cycle that released
// m.mu and its OFFERS being delivered, and the events it must then see.
type orderCase struct {
	name string
	// between runs after the cycle released m.mu; deliverFirst delivers
	// the cycle's batch before it, concurrent during it.
	between                  func(h *harness, seq uint64)
	deliverFirst, concurrent bool
	want                     []scheduler.Event_Type
}

// A cycle's OFFERS, delivered after the unlock, still reaches the framework
// before anything a later holder of m.mu sends it about those offers,
// whether the cycle's goroutine delivers first, the later holder does, or
// both race; and a later cycle's OFFERS never overtakes an earlier one.
func TestPendingOffersKeepOrder(t *testing.T) {
	rescind := func(h *harness, seq uint64) { h.m.rescindOffer(seq, "test") }
	again := func(h *harness, _ uint64) {
		h.m.mu.Lock()
		defer h.m.mu.Unlock()
		// The first cycle's offers go back, so the second has
		// something to offer.
		for _, o := range h.m.offers {
			h.m.removeOfferLocked(o, true, nil)
		}
		h.m.offerLocked(h.m.alloc.Allocate())
	}
	offersThenRescind := []scheduler.Event_Type{scheduler.Event_OFFERS, scheduler.Event_RESCIND}
	for _, c := range []orderCase{
		{"rescind before the cycle delivers", rescind, false, false, offersThenRescind},
		{"rescind after the cycle delivered", rescind, true, false, offersThenRescind},
		{"rescind racing the delivery", rescind, false, true, offersThenRescind},
		{"a second cycle before the first delivers", again, false, false,
			[]scheduler.Event_Type{scheduler.Event_OFFERS, scheduler.Event_OFFERS}},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs := 1
			if c.concurrent {
				runs = 50
			}
			for range runs {
				checkOrder(t, c)
			}
		})
	}
}

// checkOrder runs c once on a fresh master with two agents and one
// protobuf framework.
func checkOrder(t *testing.T, c orderCase) {
	h := newHarness(t, nil)
	h.agent("cpus:1;mem:64")
	h.agent("cpus:1;mem:64")
	fw := pbFramework(t, h, "pb")
	h.m.mu.Lock()
	b := h.m.prepareOffersLocked(h.m.alloc.Allocate())
	var seq uint64
	for s := range h.m.offers {
		seq = max(seq, s)
	}
	h.m.mu.Unlock()
	if len(b) != 1 {
		t.Fatalf("the cycle left %d pending events, want 1", len(b))
	}
	if c.deliverFirst {
		b.deliver()
	}
	done := make(chan struct{})
	go func() {
		if c.concurrent {
			b.deliver()
		}
		close(done)
	}()
	c.between(h, seq)
	<-done
	b.deliver()
	evs := nextEvents(t, fw.fakeStream, len(c.want))
	for i, ev := range evs {
		if ev.Type != c.want[i] {
			t.Fatalf("event %d is %v, want %v (all: %v)", i, ev.Type, c.want[i], types(evs))
		}
	}
	if evs[0].Offers == nil || len(evs[0].Offers.Offers) != 2 {
		t.Fatalf("first OFFERS carries %v, want the first cycle's 2 offers", evs[0].Offers)
	}
	if evs[1].Type == scheduler.Event_RESCIND && !offered(evs[0], evs[1].Rescind.OfferID.Value) {
		t.Fatalf("RESCIND of %s, which the OFFERS before it did not carry", evs[1].Rescind.OfferID.Value)
	}
	if evs[1].Type == scheduler.Event_OFFERS && offered(evs[1], evs[0].Offers.Offers[0].ID.Value) {
		t.Fatal("the second cycle's OFFERS repeats the first's offer ids")
	}
}

func types(evs []scheduler.Event) []scheduler.Event_Type {
	out := make([]scheduler.Event_Type, len(evs))
	for i := range evs {
		out[i] = evs[i].Type
	}
	return out
}

func offered(ev scheduler.Event, id string) bool {
	for _, o := range ev.Offers.Offers {
		if o.ID.Value == id {
			return true
		}
	}
	return false
}

// The allocation loop's cycle delivers its OFFERS events itself once m.mu
// is released: nothing else has to send to the framework for them to go.
func TestAllocateDeliversOffers(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("cpus:1;mem:64")
	fw := pbFramework(t, h, "pb")
	h.allocate()
	ev := fw.nextEvent(t, scheduler.Event_OFFERS)
	if len(ev.Offers.Offers) != 1 {
		t.Fatalf("OFFERS carries %d offers, want 1", len(ev.Offers.Offers))
	}
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if p := h.m.frameworks[fw.id].pending; p != nil {
		p.mu.Lock()
		sent := p.sent
		p.mu.Unlock()
		if !sent {
			t.Fatal("the cycle's event is still pending after allocate returned")
		}
	}
}
