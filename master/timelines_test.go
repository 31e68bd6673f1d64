package master

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/profile"
)

// getTimelines asks the harness's master for GET /timelines?query.
func getTimelines(t *testing.T, h *harness, query string) (int, api.Timelines) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.m.handleTimelines(rec, httptest.NewRequest(http.MethodGet, api.TimelinesPath+query, nil))
	var doc api.Timelines
	if rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatalf("GET /timelines%s: %v in %s", query, err, rec.Body)
		}
	}
	return rec.Code, doc
}

// GET /timelines publishes the allocator's timelines: after a gang of 2
// is offered under prophet, exactly the 2 agents it went to carry the
// framework's executor, anchored at the offer, with availability lowered
// by its profile; ?agent_id= narrows to one agent and an unknown one is 404.
func TestTimelinesPublished(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Sorter = "prophet"; c.Mode = "characterized" })
	for i := 0; i < 3; i++ {
		h.agent("cpus:4;mem:4096;disk_bw:100;net_bw:100")
	}
	fw := h.framework("app")
	if err := h.call(fw, appRequest(t, 2, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	offeredAt := h.clock.Now()
	h.allocate()
	ev := fw.nextEvent(t, scheduler.Event_OFFERS)
	placed := map[string]bool{}
	for _, o := range ev.Offers.Offers {
		placed[o.AgentID.Value] = true
	}
	h.clock.Advance(2 * time.Second)

	code, doc := getTimelines(t, h, "")
	if code != http.StatusOK || !doc.Modelled || doc.Sorter != "prophet" || len(doc.Agents) != 3 {
		t.Fatalf("GET /timelines: %d, modelled %v, sorter %q, %d agents; want 200, true, prophet, 3", code, doc.Modelled, doc.Sorter, len(doc.Agents))
	}
	for _, a := range doc.Agents {
		if !placed[a.AgentID] {
			if len(a.Executors) != 0 || len(a.Segments) != 0 || a.DiskBW != 100 {
				t.Errorf("agent %s got no executor but shows %+v", a.AgentID, a)
			}
			continue
		}
		if len(a.Executors) != 1 || a.Executors[0].FrameworkID != fw.id || a.Executors[0].LaunchUnixNano != offeredAt.UnixNano() {
			t.Fatalf("agent %s executors %+v, want framework %s's anchored at the offer", a.AgentID, a.Executors, fw.id)
		}
		// 8 s of the 10 s stage are left: 50 MB/s disk, 10 MB/s net taken
		if len(a.Segments) != 1 || a.Segments[0].DiskBW != 50 || a.Segments[0].NetBW != 90 ||
			time.Duration(a.Segments[0].EndUnixNano-a.Segments[0].StartUnixNano) != 8*time.Second {
			t.Errorf("agent %s segments %+v, want 8 s of 50/90 MB/s", a.AgentID, a.Segments)
		}
		tl, err := a.Timeline("")
		if err != nil {
			t.Fatal(err)
		}
		if got := tl.At(h.clock.Now(), profile.Disk); got != 50 {
			t.Errorf("rebuilt timeline of %s: disk %v now, want 50", a.AgentID, got)
		}
	}

	var one string
	for id := range placed {
		one = id
	}
	if code, doc := getTimelines(t, h, "?agent_id="+one); code != http.StatusOK || len(doc.Agents) != 1 || doc.Agents[0].AgentID != one {
		t.Errorf("?agent_id=%s: %d with %d agents, want 200 with that one", one, code, len(doc.Agents))
	}
	if code, _ := getTimelines(t, h, "?agent_id=nope"); code != http.StatusNotFound {
		t.Errorf("unknown agent: %d, want 404", code)
	}
}

// Under a sorter without timelines the agents show capacities only.
func TestTimelinesUnmodelled(t *testing.T) {
	h := newHarness(t, nil)
	id, _ := h.agent("cpus:4;mem:4096;disk_bw:330;net_bw:125")
	code, doc := getTimelines(t, h, "")
	if code != http.StatusOK || doc.Modelled || len(doc.Agents) != 1 {
		t.Fatalf("GET /timelines under drf: %d, modelled %v, %d agents; want 200, false, 1", code, doc.Modelled, len(doc.Agents))
	}
	if a := doc.Agents[0]; a.AgentID != id || a.DiskBW != 330 || a.NetBW != 125 || len(a.Executors) != 0 {
		t.Errorf("agent %+v, want %s with 330/125 MB/s and no executors", a, id)
	}
}
