package master

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

// reconcileCall asks for the named tasks (every task, if none).
func reconcileCall(agent string, ids ...string) *scheduler.Call {
	rc := &scheduler.Call_Reconcile{}
	for _, id := range ids {
		rc.Tasks = append(rc.Tasks, scheduler.Call_Reconcile_Task{TaskID: mesos.TaskID{Value: id}, AgentID: &mesos.AgentID{Value: agent}})
	}
	return &scheduler.Call{Type: scheduler.Call_RECONCILE, Reconcile: rc}
}

// After a failover, a live task whose agent has not re-registered yet is
// known only from the registry, which may be older than what the
// framework heard. Reconciliation must not answer it from there (it would
// move the framework's task back to STAGING); once the agent is back with
// the task running, it answers RUNNING. A sentinel (a task nobody knows,
// on an agent nobody knows, answered TASK_LOST) marks where each answer
// ends on the stream.
func TestReconcileWaitsForAgentAfterFailover(t *testing.T) {
	h := newHarness(t, nil)
	agentID, _ := h.agent("cpus:4;mem:4096")
	fw := h.framework("reconcile")
	if err := h.call(fw, launchCall(h.offer(fw), nil, commandTask("t1", agentID, 1, 512))); err != nil {
		t.Fatalf("ACCEPT: %v", err)
	}
	// The launch reaches the registry asynchronously: wait for it, so the
	// new term knows the task (as STAGING: its RUNNING was never reported).
	deadline := time.Now().Add(5 * time.Second)
	for !h.registryHasTask("t1") {
		if time.Now().After(deadline) {
			t.Fatal("the launched task never reached the registry")
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.reelect(t)
	fw2 := h.resubscribe(fw)

	for _, c := range []struct {
		name string
		call *scheduler.Call
	}{
		{"explicit", reconcileCall(agentID, "t1")},
		{"implicit", reconcileCall("")},
	} {
		if err := h.call(fw2, c.call); err != nil {
			t.Fatalf("%s RECONCILE: %v", c.name, err)
		}
		if err := h.call(fw2, reconcileCall("no-such-agent", "sentinel")); err != nil {
			t.Fatalf("sentinel RECONCILE: %v", err)
		}
		if st := fw2.nextEvent(t, scheduler.Event_UPDATE).Update.Status; st.TaskID.Value != "sentinel" {
			t.Fatalf("%s reconciliation answered %s %s while its agent had not re-registered, want no answer",
				c.name, st.TaskID.Value, st.State)
		}
	}

	running := api.TaskRecord{FrameworkId: fw.id, TaskId: "t1", State: int32(mesos.TASK_RUNNING)}
	s := newFakeStream(t, api.Protobuf)
	if _, err := h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER, AgentId: agentID,
		Agent: &api.AgentRecord{Id: agentID, Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:4096"},
		Tasks: []*api.TaskRecord{&running}}, s.Stream); err != nil {
		t.Fatalf("re-REGISTER: %v", err)
	}
	if err := h.call(fw2, reconcileCall(agentID, "t1")); err != nil {
		t.Fatalf("RECONCILE: %v", err)
	}
	if st := fw2.nextEvent(t, scheduler.Event_UPDATE).Update.Status; st.TaskID.Value != "t1" || st.State == nil || *st.State != mesos.TASK_RUNNING {
		t.Fatalf("after the agent re-registered, reconciliation answered %s %v, want t1 TASK_RUNNING", st.TaskID.Value, st.State)
	}
}

// resubscribe subscribes fw again with its id, as a framework does after a
// failover, and returns the new session.
func (h *harness) resubscribe(fw *fakeFramework) *fakeFramework {
	h.t.Helper()
	s := newFakeStream(h.t, api.JSON)
	ft := 60.0
	info := mesos.FrameworkInfo{User: "test", Name: "reconcile", ID: &mesos.FrameworkID{Value: fw.id}, FailoverTimeout: &ft}
	id, sid, err := h.m.admitFramework(fw.id, info, nil, s.Stream)
	if err != nil {
		h.t.Fatal(err)
	}
	s.nextEvent(h.t, scheduler.Event_SUBSCRIBED)
	return &fakeFramework{id: id, streamID: sid, fakeStream: s}
}

// registryHasTask reports whether the registry holds task id.
func (h *harness) registryHasTask(id string) bool {
	for _, r := range h.m.reg.Tasks() {
		if r.TaskId == id {
			return true
		}
	}
	return false
}
