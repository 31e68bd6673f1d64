package master

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

// emptyField is a JSON member Mesos never writes: an unset field.
var emptyField = regexp.MustCompile(`"[a-z_]+":(null|\[\])`)

// The operator API answers in JSON as Mesos does: no unset field appears
// as null or [] (Mesos omits them), after a task ran and its framework was
// torn down (which leaves frameworks empty and completed_frameworks set).
// Decoding each answer with mesos-go's types and encoding it again gives
// the same bytes: nothing in it is outside Mesos's messages. /state, a
// document of its own, has arrays where Mesos has them, never null.
func TestOperatorJSONOmitsUnsetFields(t *testing.T) {
	h := newHarness(t, nil)
	h.m.ln = fixedListener{}
	agentID, agent := h.agent("cpus:4;mem:4096")
	fw := h.framework("json")
	o := h.offer(fw)
	if err := h.call(fw, launchCall(o, nil, commandTask("t1", agentID, 1, 128))); err != nil {
		t.Fatal(err)
	}
	agent.nextAgentEvent(t, api.AgentEventType_RUN)
	if err := h.agentUpdate(agentID, fw.id, "t1", mesos.TASK_RUNNING, "u1"); err != nil {
		t.Fatal(err)
	}
	if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_TEARDOWN}); err != nil {
		t.Fatal(err)
	}
	handler := h.m.Handler()
	for _, typ := range []mmaster.Call_Type{mmaster.Call_GET_HEALTH, mmaster.Call_GET_VERSION, mmaster.Call_GET_FLAGS,
		mmaster.Call_GET_MASTER, mmaster.Call_GET_STATE, mmaster.Call_GET_AGENTS, mmaster.Call_GET_FRAMEWORKS,
		mmaster.Call_GET_EXECUTORS, mmaster.Call_GET_TASKS, mmaster.Call_GET_ROLES, mmaster.Call_GET_WEIGHTS} {
		body, _ := json.Marshal(&mmaster.Call{Type: typ})
		rec := serve(handler, context.Background(), http.MethodPost, "/api/v1", string(body), map[string]string{"Accept": "application/json"})
		if rec.Code != http.StatusOK {
			t.Errorf("%s answered %d: %s", typ, rec.Code, rec.Body)
			continue
		}
		got := rec.Body.Bytes()
		if m := emptyField.FindAll(got, -1); len(m) > 0 {
			t.Errorf("%s answer has unset fields %q", typ, m)
		}
		var resp mmaster.Response
		if err := json.Unmarshal(got, &resp); err != nil {
			t.Fatalf("%s: mesos-go cannot decode the answer: %v", typ, err)
		}
		again, err := api.JSON.MarshalOmitEmpty(&resp)
		if err != nil || !bytes.Equal(again, got) {
			t.Errorf("%s re-encoded by mesos-go's types differs:\n%s\nwant\n%s", typ, again, got)
		}
	}
	rec := httptest.NewRecorder()
	h.m.handleState(rec, httptest.NewRequest(http.MethodGet, "/state", nil))
	if bytes.Contains(rec.Body.Bytes(), []byte("null")) {
		t.Errorf("/state has null: %s", rec.Body)
	}
}
