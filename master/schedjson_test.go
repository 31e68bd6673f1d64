package master

import (
	"bytes"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

// A JSON scheduler stream writes its events as Mesos does, without unset
// fields: no member is null or an empty array, and each event is exactly
// what mesos-go's types decode and write again with the unset fields left
// out (so nothing is lost either).
func TestSchedulerJSONEventsOmitUnsetFields(t *testing.T) {
	h := newHarness(t, nil)
	agentID, _ := h.agent("cpus:4;mem:1024")
	fw := h.framework("json")
	if err := h.call(fw, launchCall(h.offer(fw), nil, commandTask("t1", agentID, 1, 128))); err != nil {
		t.Fatal(err)
	}
	if err := h.agentUpdate(agentID, fw.id, "t1", mesos.TASK_RUNNING, "u1"); err != nil {
		t.Fatal(err)
	}
	fw.nextEvent(t, scheduler.Event_UPDATE)

	fw.mu.Lock()
	frames := append([][]byte(nil), fw.frames...)
	fw.mu.Unlock()
	seen := map[scheduler.Event_Type]bool{}
	for _, f := range frames {
		var ev scheduler.Event
		if err := api.JSON.Unmarshal(f, &ev); err != nil {
			t.Fatalf("event does not decode with mesos-go: %v\n%s", err, f)
		}
		seen[ev.Type] = true
		if bytes.Contains(f, []byte(":null")) || bytes.Contains(f, []byte(":[]")) {
			t.Errorf("%s event has unset fields written: %s", ev.Type, f)
		}
		again, err := api.JSON.MarshalOmitEmpty(&ev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, f) {
			t.Errorf("%s event is not mesos-go's:\n got %s\nwant %s", ev.Type, f, again)
		}
	}
	for _, typ := range []scheduler.Event_Type{scheduler.Event_SUBSCRIBED, scheduler.Event_OFFERS, scheduler.Event_UPDATE} {
		if !seen[typ] {
			t.Errorf("no %s event on the stream", typ)
		}
	}
}
