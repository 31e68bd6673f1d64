package master

import (
	"fmt"
	"math"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// TestOfferIDFromParts checks that an offer's id, built from its parts,
// has the format frameworks always saw, "<master>-O<seq>[-T<ns>]", and that
// idLen (which the OFFERS encoder sizes fields with) is its length at every
// digit count.
func TestOfferIDFromParts(t *testing.T) {
	seqs := []uint64{0, 1, 9, 10, 99, 100, 12345, 999999999, 1000000000, math.MaxUint64}
	for _, stamp := range []string{"", "-T1763900000123456789"} {
		for _, seq := range seqs {
			o := &offer{seq: seq, master: "7c0e-master", stamp: stamp}
			want := fmt.Sprintf("7c0e-master-O%d%s", seq, stamp)
			if got := o.id(); got != want {
				t.Errorf("id of seq %d stamp %q = %q, want %q", seq, stamp, got, want)
			}
			if o.idLen() != len(want) {
				t.Errorf("idLen of %q = %d, want %d", want, o.idLen(), len(want))
			}
			if !o.hasID(want) {
				t.Errorf("offer %q does not have its own id", want)
			}
		}
	}
}

// TestFrameworkOfferLookup checks that ACCEPT's and DECLINE's lookup by id
// finds exactly the framework's offer whose id was sent, and nothing for
// any other name, though the tables are keyed by sequence number.
func TestFrameworkOfferLookup(t *testing.T) {
	m := &Master{id: "m1", offers: map[uint64]*offer{}}
	fw := &framework{id: "fw-a", offers: map[uint64]*offer{}}
	other := &framework{id: "fw-b", offers: map[uint64]*offer{}}
	add := func(f *framework, seq uint64, stamp string) {
		o := &offer{seq: seq, master: m.id, stamp: stamp, fw: f.id}
		m.offers[seq], f.offers[seq] = o, o
	}
	add(fw, 7, "")
	add(fw, 12, "-T99")
	add(other, 8, "")
	tests := []struct {
		id      string
		wantSeq uint64 // 0: no offer
	}{
		{"m1-O7", 7},
		{"m1-O12-T99", 12},
		{"m1-O12", 0},                   // the stamp is part of the id
		{"m1-O12-T98", 0},               // another cycle's stamp
		{"m1-O7-T99", 0},                // a stamp the offer never had
		{"m1-O07", 0},                   // a leading zero
		{"m1-O7x", 0},                   // trailing bytes
		{"m1-O8", 0},                    // the other framework's offer
		{"m1-O9", 0},                    // no such offer
		{"m12-O7", 0},                   // another master whose id extends this one's
		{"x-m1-O7", 0},                  // another master's prefix
		{"m1-0x7", 0},                   // no -O
		{"m1-O", 0},                     // no number
		{"m1-O-7", 0},                   // a sign
		{"m1-O+7", 0},                   // a sign
		{"", 0},                         // empty
		{"m1-O18446744073709551616", 0}, // past uint64
	}
	for _, tc := range tests {
		o := m.frameworkOfferLocked(fw, tc.id)
		switch {
		case tc.wantSeq == 0 && o != nil:
			t.Errorf("%q names offer %q, want none", tc.id, o.id())
		case tc.wantSeq != 0 && (o == nil || o.seq != tc.wantSeq):
			t.Errorf("%q names %v, want offer %d", tc.id, o, tc.wantSeq)
		}
	}
}

// TestStampedOfferIDs checks the ids --stamp-offers gives, as a framework
// receives them, and that the framework can decline and accept by them: a
// DECLINE naming the id without its stamp returns nothing, the stamped id
// returns the offer.
func TestStampedOfferIDs(t *testing.T) {
	for _, stamp := range []bool{false, true} {
		t.Run(fmt.Sprintf("stamp=%v", stamp), func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.StampOffers = stamp })
			agentID, _ := h.agent("cpus:4;mem:4096")
			fw := h.framework("stamped")
			now := h.clock.Now().UnixNano()
			o := h.offer(fw)
			want := fmt.Sprintf("%s-O%d", h.m.id, h.m.seq)
			if stamp {
				want += fmt.Sprintf("-T%d", now)
			}
			if o.ID.Value != want {
				t.Fatalf("offer id %q, want %q", o.ID.Value, want)
			}
			if stamp {
				unstamped := strings.TrimSuffix(o.ID.Value, fmt.Sprintf("-T%d", now))
				decline := &scheduler.Call{Type: scheduler.Call_DECLINE,
					Decline: &scheduler.Call_Decline{OfferIDs: []mesos.OfferID{{Value: unstamped}}}}
				if err := h.call(fw, decline); err != nil {
					t.Fatalf("DECLINE: %v", err)
				}
				if n := h.outstanding(fw); n != 1 {
					t.Fatalf("a DECLINE of %q (no stamp) left %d offers, want 1", unstamped, n)
				}
			}
			if err := h.call(fw, launchCall(o, nil, commandTask("t1", agentID, 1, 128))); err != nil {
				t.Fatalf("ACCEPT of %q: %v", o.ID.Value, err)
			}
			if n := h.outstanding(fw); n != 0 {
				t.Errorf("%d offers outstanding after the ACCEPT, want 0", n)
			}
		})
	}
}

// TestAgentOffersIndex checks the agent's offer list: after any sequence
// of drops each remaining offer knows its place, a dropped offer is gone,
// and dropping it again (or an offer never added) changes nothing.
func TestAgentOffersIndex(t *testing.T) {
	tests := []struct {
		name  string
		add   int
		drops []int // offers by the order they were added
	}{
		{"last", 3, []int{2}},
		{"first", 3, []int{0}},
		{"middle then first", 5, []int{2, 0}},
		{"all from the front", 4, []int{0, 1, 2, 3}},
		{"all from the back", 4, []int{3, 2, 1, 0}},
		{"twice", 3, []int{1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &agentState{}
			offers := make([]*offer, tc.add)
			for i := range offers {
				offers[i] = &offer{seq: uint64(i)}
				a.addOffer(offers[i])
			}
			a.dropOffer(&offer{seq: 99}) // never added: a no-op
			live := map[*offer]bool{}
			for _, o := range offers {
				live[o] = true
			}
			for _, d := range tc.drops {
				a.dropOffer(offers[d])
				delete(live, offers[d])
			}
			if len(a.offers) != len(live) {
				t.Fatalf("%d offers left, want %d", len(a.offers), len(live))
			}
			for i, o := range a.offers {
				if !live[o] || o.agentIdx != i {
					t.Errorf("offer %d at %d (index %d, live %v)", o.seq, i, o.agentIdx, live[o])
				}
			}
		})
	}
}
