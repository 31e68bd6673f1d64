package master

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api/operator"
)

// A framework whose declared task no agent can hold is told apart from
// one still waiting: /explain without an agent says why (text and JSON),
// /state carries it once cycles pass without an offer, and the
// unplaceable gauge counts it by reason.
func TestPlacementFeedback(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("cpus:4;mem:4096")
	h.agent("cpus:4;mem:4096")
	fw := h.framework("big")
	req := &scheduler.Call{Type: scheduler.Call_REQUEST, Request: &scheduler.Call_Request{Requests: []mesos.Request{
		{Resources: []mesos.Resource{scalarRes("cpus", 16), scalarRes("mem", 32)}}}}}
	if err := h.call(fw, req); err != nil {
		t.Fatal(err)
	}
	explain := func(q string) (int, string) {
		rec := httptest.NewRecorder()
		h.m.handleExplain(rec, httptest.NewRequest(http.MethodGet, "/explain?framework_id="+fw.id+q, nil))
		return rec.Code, rec.Body.String()
	}
	unplaced := func() *operator.Unplaced {
		h.m.mu.Lock()
		defer h.m.mu.Unlock()
		for _, f := range h.m.stateFrameworksLocked() {
			if f.ID == fw.id {
				return f.Unplaced
			}
		}
		return nil
	}
	h.allocate() // whole agents, as oblivious mode offers them; it keeps them
	fw.nextEvent(t, scheduler.Event_OFFERS)
	h.allocate()
	if u := unplaced(); u != nil {
		t.Errorf("/state shows a reason after one cycle without an offer: %+v", u)
	}
	h.allocate()
	h.allocate()
	if u := unplaced(); u == nil || u.Reason != "too_big" || u.Dimension != "cpus" || !u.Never || u.IdleCycles != 3 {
		t.Errorf("/state after 3 cycles: %+v, want too_big on cpus, never, 3 idle cycles", u)
	}
	if code, body := explain(""); code != 200 || !strings.Contains(body, "needs cpus 16; the largest agent has 4 cpus in total (2 agents)") {
		t.Errorf("/explain as text: %d %q", code, body)
	}
	var u operator.Unplaced
	code, body := explain("&format=json")
	if err := json.Unmarshal([]byte(body), &u); code != 200 || err != nil || u.Reason != "too_big" || u.FrameworkID != fw.id {
		t.Errorf("/explain as JSON: %d %q (%v)", code, body, err)
	}
	if code, body := explain("&format=yaml"); code != http.StatusBadRequest || !strings.Contains(body, "format") {
		t.Errorf("/explain format=yaml: %d %q, want 400 naming format", code, body)
	}
	// A scrape that finds m.mu held (a background loop of the master's)
	// reports the last reading, and before the first there is none: scrape
	// until one is had.
	got := map[string]float64{}
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		fams, err := h.m.m.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() == "allot_master_frameworks_unplaceable" {
				for _, m := range f.Metric {
					got[m.Label[0].GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	if got["too_big"] != 1 || got["no_room"] != 0 {
		t.Errorf("allot_master_frameworks_unplaceable = %v, want too_big 1 and the other reasons 0", got)
	}
}
