package master

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// postSorter sends a POST to the runtime switch and returns status and body.
func (h *harness) postSorter(body string) (int, string) {
	h.t.Helper()
	rec := httptest.NewRecorder()
	h.m.handleSorterSwitch(rec, httptest.NewRequest(http.MethodPost, SorterPath, strings.NewReader(body)))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func (h *harness) getSorter() SorterConfig {
	h.t.Helper()
	rec := httptest.NewRecorder()
	h.m.handleSorter(rec, httptest.NewRequest(http.MethodGet, SorterPath, nil))
	var c SorterConfig
	if err := json.NewDecoder(rec.Result().Body).Decode(&c); err != nil {
		h.t.Fatal(err)
	}
	return c
}

// The runtime switch validates what it is given (400 naming the field),
// rescinds the offers made under the old policy, takes effect at the next
// cycle and is kept by the registry, so a new leader runs the switched
// policy.
func TestSorterSwitch(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("cpus:4;mem:4096")
	fw := h.framework("a")
	o := h.offer(fw)

	bad := []struct{ body, want string }{
		{`{"sorter":"nope"}`, "sorter:"},
		{`{"agent_selection":"sideways"}`, "agent_selection:"},
		{`{"mode":"psychic"}`, "mode:"},
		{`{"sorter":"psdsf","agent_selection":"bestfit"}`, "bestfit"},
		{`{"sorter":"drf","colour":"red"}`, "unknown field"},
		{`not json`, "want JSON"},
	}
	for _, tc := range bad {
		if code, body := h.postSorter(tc.body); code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("POST %s: %d %q, want 400 with %q", tc.body, code, body, tc.want)
		}
	}
	if h.outstanding(fw) != 1 {
		t.Fatalf("a refused switch touched the offers: %d outstanding", h.outstanding(fw))
	}
	if got := h.getSorter(); got.Sorter != "drf" || got.AgentSelection != "rrr" || got.Mode != "oblivious" {
		t.Fatalf("before the switch: %+v", got)
	}

	code, body := h.postSorter(`{"sorter":"fifo","mode":"characterized"}`)
	if code != http.StatusOK {
		t.Fatalf("switch: %d %s", code, body)
	}
	ev := fw.nextEvent(t, scheduler.Event_RESCIND)
	if ev.Rescind.OfferID.Value != o.ID.Value {
		t.Errorf("rescinded %s, want the outstanding offer %s", ev.Rescind.OfferID.Value, o.ID.Value)
	}
	if got := h.getSorter(); got.Sorter != "fifo" || got.AgentSelection != "rrr" || got.Mode != "characterized" {
		t.Fatalf("after the switch: %+v (omitted fields must keep their value)", got)
	}
	h.offer(fw) // the next cycle offers again, under fifo

	h.reelect(t)
	if got := h.getSorter(); got.Sorter != "fifo" || got.Mode != "characterized" {
		t.Fatalf("a new leader runs %+v, want the switched fifo/characterized", got)
	}
	h.m.mu.Lock()
	name := h.m.alloc.Config().Sorter.Name()
	h.m.mu.Unlock()
	if name != "fifo" {
		t.Fatalf("the new leader's allocator runs %s", name)
	}
}
