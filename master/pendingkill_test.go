package master

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// agentKills lists the KILL commands sent on s so far, by task id, with
// their grace periods.
func agentKills(s *fakeStream) map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	kills := map[string]int64{}
	for _, f := range s.frames {
		var ev api.AgentEvent
		if proto.Unmarshal(f, &ev) == nil && ev.Type == api.AgentEventType_KILL {
			kills[ev.TaskId] = ev.GraceNanos
		}
	}
	return kills
}

// A KILL of a task whose agent is disconnected is answered 202, as Mesos:
// the master remembers it and sends it when the agent re-registers, for
// the tasks it still runs; a KILL of a task the master does not know is
// answered by reconciliation.
func TestKillWhileAgentDisconnected(t *testing.T) {
	h := newHarness(t, nil)
	agentID, as := h.agent("cpus:4;mem:4096")
	fw := h.frameworkPA("pa", true)
	h.runningTasks(fw, agentID, commandTask("t1", agentID, 1, 256), commandTask("t2", agentID, 1, 256))
	h.updatesUntilSentinel(fw)
	h.m.agentDisconnected(agentID, as.Stream)

	grace := &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(3 * time.Second)}}
	kill := &scheduler.Call{Type: scheduler.Call_KILL, Kill: &scheduler.Call_Kill{TaskID: mesos.TaskID{Value: "t1"}, KillPolicy: grace}}
	if err := h.call(fw, kill); err != nil {
		t.Fatalf("KILL of a task on a disconnected agent: %v, want 202", err)
	}
	unknown := &scheduler.Call{Type: scheduler.Call_KILL, Kill: &scheduler.Call_Kill{TaskID: mesos.TaskID{Value: "nope"}}}
	if err := h.call(fw, unknown); err != nil {
		t.Fatalf("KILL of an unknown task: %v", err)
	}
	st := fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
	if st.TaskID.Value != "nope" || st.GetState() != mesos.TASK_UNKNOWN || st.GetReason() != mesos.REASON_RECONCILIATION ||
		st.GetMessage() != "Reconciliation: Task is unknown" {
		t.Errorf("KILL of an unknown task answered %v %v %q, want Mesos's reconciliation TASK_UNKNOWN", st.GetState(), st.GetReason(), st.GetMessage())
	}

	s := newFakeStream(t, api.Protobuf)
	var reports []*api.TaskRecord
	for _, id := range []string{"t1", "t2"} {
		reports = append(reports, &api.TaskRecord{FrameworkId: fw.id, TaskId: id, AgentId: agentID, State: int32(mesos.TASK_RUNNING)})
	}
	if _, err := h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER, AgentId: agentID,
		Agent: &api.AgentRecord{Id: agentID, Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:4096"},
		Tasks: reports}, s.Stream); err != nil {
		t.Fatalf("re-registering: %v", err)
	}
	s.nextAgentEvent(t, api.AgentEventType_REGISTERED)
	if ev := s.nextAgentEvent(t, api.AgentEventType_KILL); ev.TaskId != "t1" || ev.GraceNanos != int64(3*time.Second) || ev.FrameworkId != fw.id {
		t.Errorf("re-registered agent told to kill %q (grace %d), want t1 with the framework's 3s", ev.TaskId, ev.GraceNanos)
	}
	if kills := agentKills(s); len(kills) != 1 {
		t.Errorf("re-registered agent told to kill %v, want t1 alone", kills)
	}

	// Once t1 ended, a later re-registration does not kill it again.
	if err := h.agentUpdate(agentID, fw.id, "t1", mesos.TASK_KILLED, "end-t1"); err != nil {
		t.Fatal(err)
	}
	h.m.agentDisconnected(agentID, s.Stream)
	s2 := newFakeStream(t, api.Protobuf)
	if _, err := h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER, AgentId: agentID,
		Agent: &api.AgentRecord{Id: agentID, Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:4096"},
		Tasks: reports[1:]}, s2.Stream); err != nil {
		t.Fatalf("re-registering again: %v", err)
	}
	s2.nextAgentEvent(t, api.AgentEventType_REGISTERED)
	if kills := agentKills(s2); len(kills) != 0 {
		t.Errorf("agent told to kill %v after t1 ended", kills)
	}
}
