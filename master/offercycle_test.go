package master

import (
	"fmt"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/resources"
)

// TestOfferCycleGroupsPerFramework checks that a cycle whose decisions
// interleave frameworks sends each framework one OFFERS event with its
// offers in decision order, and that the next cycle's event carries only
// that cycle's offers (the per-framework lists are reused from cycle to
// cycle), on both codecs.
func TestOfferCycleGroupsPerFramework(t *testing.T) {
	for _, codec := range []api.Codec{api.Protobuf, api.JSON} {
		t.Run(fmt.Sprint(codec), func(t *testing.T) {
			h := newHarness(t, nil)
			var agents [3]string
			for i := range agents {
				agents[i], _ = h.agent("cpus:1;mem:64")
			}
			var fws [2]*fakeFramework
			for i := range fws {
				s := newFakeStream(t, codec)
				ft := 60.0
				info := mesos.FrameworkInfo{User: "test", Name: fmt.Sprintf("fw-%d", i), FailoverTimeout: &ft}
				id, sid, err := h.m.admitFramework("", info, nil, s.Stream)
				if err != nil {
					t.Fatal(err)
				}
				s.nextEvent(t, scheduler.Event_SUBSCRIBED)
				fws[i] = &fakeFramework{id: id, streamID: sid, fakeStream: s}
			}
			// Each cycle: which framework each agent goes to, in decision
			// order, interleaved.
			cycles := [][3]int{{0, 1, 0}, {1, 0, 1}, {1, 1, 1}}
			for c, to := range cycles {
				var d allocator.Decisions
				want := map[int][]string{}
				for i, f := range to {
					d.Offers = append(d.Offers, allocator.Offer{Framework: fws[f].id, Agent: agents[i], Resources: resources.MustParse("cpus:1;mem:64")})
					want[f] = append(want[f], agents[i])
				}
				h.m.mu.Lock()
				h.m.offerLocked(d)
				for _, fw := range h.m.frameworks {
					if len(fw.cycle) != 0 {
						t.Fatalf("cycle %d: framework %s keeps %d offers after the cycle", c, fw.id, len(fw.cycle))
					}
				}
				for _, o := range h.m.offers {
					h.m.removeOfferLocked(o, false, nil)
				}
				h.m.mu.Unlock()
				for f, fw := range fws {
					if len(want[f]) == 0 {
						continue
					}
					ev := fw.nextEvent(t, scheduler.Event_OFFERS)
					var got []string
					for _, o := range ev.Offers.Offers {
						got = append(got, o.AgentID.Value)
					}
					if fmt.Sprint(got) != fmt.Sprint(want[f]) {
						t.Fatalf("cycle %d: framework %d got offers on %v, want %v", c, f, got, want[f])
					}
				}
			}
			// Framework 0 was offered nothing in the last cycle: no event.
			fws[0].mu.Lock()
			left := len(fws[0].frames) - fws[0].next
			fws[0].mu.Unlock()
			if left != 0 {
				t.Fatalf("framework 0 has %d unread frames after a cycle with no offers to it", left)
			}
		})
	}
}
