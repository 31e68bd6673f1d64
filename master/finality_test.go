package master

import (
	"errors"
	"net/http"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
)

// agentUpdate posts a status update of task id as the agent would.
func (h *harness) agentUpdate(agentID, fwID, id string, state mesos.TaskState, uuid string) error {
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: id}, State: state.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: []byte(uuid)}
	b, err := st.Marshal()
	if err != nil {
		h.t.Fatal(err)
	}
	return h.m.agentCall(&api.AgentCall{Type: api.AgentCallType_STATUS_UPDATE, AgentId: agentID, FrameworkId: fwID, Status: b})
}

// updatesUntilSentinel returns the updates fw receives before the answer
// to a reconciliation of a task nobody knows: what the master sent fw up to
// that moment.
func (h *harness) updatesUntilSentinel(fw *fakeFramework) []mesos.TaskStatus {
	h.t.Helper()
	if err := h.call(fw, reconcileCall("no-such-agent", "sentinel")); err != nil {
		h.t.Fatalf("sentinel RECONCILE: %v", err)
	}
	var out []mesos.TaskStatus
	for {
		st := fw.nextEvent(h.t, scheduler.Event_UPDATE).Update.Status
		if st.TaskID.Value == "sentinel" {
			return out
		}
		out = append(out, st)
	}
}

// stateListings counts the times /state lists task id (live and completed).
func (h *harness) stateListings(id string) int {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	n := 0
	for _, f := range h.m.stateFrameworksLocked() {
		for _, list := range [][]operator.Task{f.Tasks, f.CompletedTasks} {
			for _, t := range list {
				if t.ID == id {
					n++
				}
			}
		}
	}
	return n
}

// An agent the operator marked gone (MARK_AGENT_GONE) while it was away had
// its task reported TASK_LOST (its framework is not partition-aware). When
// it comes back under the same id it is refused
// (410, by this leader and, from the registry, by the next), so the task's
// later RUNNING and FINISHED never reach the framework, and /state lists
// the task once, lost.
func TestRemovedAgentIsRefusedAndItsTaskStaysLost(t *testing.T) {
	h := newHarness(t, nil)
	agentID, as := h.agent("cpus:4;mem:4096")
	fw := h.framework("lost")
	if err := h.call(fw, launchCall(h.offer(fw), nil, commandTask("t1", agentID, 1, 512))); err != nil {
		t.Fatalf("ACCEPT: %v", err)
	}
	if err := h.agentUpdate(agentID, fw.id, "t1", mesos.TASK_RUNNING, "u1"); err != nil {
		t.Fatal(err)
	}
	if got := h.updatesUntilSentinel(fw); len(got) != 1 || got[0].GetState() != mesos.TASK_RUNNING {
		t.Fatalf("updates before the agent went away: %v, want t1 RUNNING", got)
	}

	h.m.agentDisconnected(agentID, as.Stream)
	if _, err := h.m.markAgentGone(&mmaster.Call_MarkAgentGone{AgentID: mesos.AgentID{Value: agentID}}); err != nil {
		t.Fatal(err)
	}
	if got := lostTasks(t, fw, mesos.REASON_AGENT_REMOVED, 1); got[0] != "t1" {
		t.Fatalf("lost with the agent: %v, want [t1]", got)
	}

	reregister := func() error {
		running := api.TaskRecord{FrameworkId: fw.id, TaskId: "t1", AgentId: agentID, State: int32(mesos.TASK_RUNNING)}
		_, err := h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER, AgentId: agentID,
			Agent: &api.AgentRecord{Id: agentID, Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:4096"},
			Tasks: []*api.TaskRecord{&running}}, newFakeStream(t, api.Protobuf).Stream)
		return err
	}
	var he *api.HTTPError
	if err := reregister(); !errors.As(err, &he) || he.Code != http.StatusGone {
		t.Fatalf("the removed agent re-registering under its id: %v, want 410 Gone", err)
	}
	// Its later updates (it reached them before it learnt it was removed)
	// are refused too: it is not registered.
	if err := h.agentUpdate(agentID, fw.id, "t1", mesos.TASK_FINISHED, "u2"); err == nil {
		t.Error("a FINISHED from the removed agent was accepted")
	}
	if got := h.updatesUntilSentinel(fw); len(got) != 0 {
		t.Errorf("after TASK_LOST the framework heard %v, want nothing", got)
	}
	if n := h.stateListings("t1"); n != 1 {
		t.Errorf("/state lists t1 %d times, want once (completed, lost)", n)
	}

	// A new leader knows from the registry both that the agent was
	// removed and that t1 is over.
	deadline := time.Now().Add(5 * time.Second)
	for !h.m.reg.AgentRemoved(agentID) || len(h.m.reg.CompletedTasks()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the registry never recorded the removal and the lost task")
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.reelect(t)
	if err := reregister(); !errors.As(err, &he) || he.Code != http.StatusGone {
		t.Fatalf("after a failover, the removed agent re-registering: %v, want 410 Gone", err)
	}
	if n := h.stateListings("t1"); n != 1 {
		t.Errorf("after a failover /state lists t1 %d times, want once", n)
	}
}

// Whatever an agent sends, a framework hears one terminal state of a task:
// a later update of a task whose terminal update it was sent, or whose end
// it acknowledged, is acknowledged to the agent and not forwarded; a retry
// of the terminal update itself (same uuid) is forwarded again.
func TestUpdateOfTaskOverIsNotForwarded(t *testing.T) {
	h := newHarness(t, nil)
	agentID, as := h.agent("cpus:4;mem:4096")
	fw := h.framework("final")
	if err := h.call(fw, launchCall(h.offer(fw), nil, commandTask("t1", agentID, 1, 512), commandTask("t2", agentID, 1, 512))); err != nil {
		t.Fatalf("ACCEPT: %v", err)
	}
	for _, u := range []struct {
		task  string
		state mesos.TaskState
		uuid  string
	}{{"t1", mesos.TASK_FINISHED, "f1"}, {"t2", mesos.TASK_FINISHED, "f2"}} {
		if err := h.agentUpdate(agentID, fw.id, u.task, u.state, u.uuid); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.updatesUntilSentinel(fw); len(got) != 2 {
		t.Fatalf("terminal updates forwarded: %v, want t1 and t2 FINISHED", got)
	}
	// t1's end is acknowledged: it completes.
	if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_ACKNOWLEDGE, Acknowledge: &scheduler.Call_Acknowledge{
		AgentID: mesos.AgentID{Value: agentID}, TaskID: mesos.TaskID{Value: "t1"}, UUID: []byte("f1")}}); err != nil {
		t.Fatal(err)
	}
	as.nextAgentEvent(t, api.AgentEventType_ACKNOWLEDGE)

	for _, u := range []struct {
		task  string
		state mesos.TaskState
		uuid  string
	}{
		{"t1", mesos.TASK_RUNNING, "r1"}, // completed
		{"t1", mesos.TASK_FAILED, "x1"},
		{"t2", mesos.TASK_RUNNING, "r2"}, // terminal, not yet acknowledged
		{"t2", mesos.TASK_FAILED, "x2"},
	} {
		if err := h.agentUpdate(agentID, fw.id, u.task, u.state, u.uuid); err != nil {
			t.Fatal(err)
		}
		if ack := as.nextAgentEvent(t, api.AgentEventType_ACKNOWLEDGE); ack.TaskId != u.task || string(ack.Uuid) != u.uuid {
			t.Errorf("%s %s: agent got ACKNOWLEDGE %s %q, want it acknowledged by the master", u.task, u.state, ack.TaskId, ack.Uuid)
		}
	}
	if got := h.updatesUntilSentinel(fw); len(got) != 0 {
		t.Errorf("updates after the tasks ended reached the framework: %v", got)
	}
	// A retry of t2's terminal update is delivered again.
	if err := h.agentUpdate(agentID, fw.id, "t2", mesos.TASK_FINISHED, "f2"); err != nil {
		t.Fatal(err)
	}
	if got := h.updatesUntilSentinel(fw); len(got) != 1 || got[0].GetState() != mesos.TASK_FINISHED {
		t.Errorf("a retry of the terminal update: forwarded %v, want t2 FINISHED again", got)
	}
}
