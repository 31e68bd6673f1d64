package master

import (
	"net/http"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
)

// agentStatus posts st as task id's update from the agent.
func (h *harness) agentStatus(agentID, fwID string, st mesos.TaskStatus) {
	h.t.Helper()
	b, err := st.Marshal()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.m.agentCall(&api.AgentCall{Type: api.AgentCallType_STATUS_UPDATE, AgentId: agentID, FrameworkId: fwID, Status: b}); err != nil {
		h.t.Fatal(err)
	}
}

// completedFramework is /state's completed framework id, nil if none.
func (h *harness) completedFramework(id string) *operator.Framework {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	for _, f := range h.m.stateCompletedFrameworksLocked() {
		if f.ID == id {
			return &f
		}
	}
	return nil
}

// historyOf is a task's state history as "STATE/REASON/message" entries.
func historyOf(t operator.Task) string {
	var out []string
	for _, st := range t.Statuses {
		out = append(out, st.State+"/"+st.Reason+"/"+st.Message)
	}
	return strings.Join(out, " ")
}

// A finished framework keeps its name, and each of its tasks its whole
// state history (reason and message included): in /state's
// completed_frameworks and GET_FRAMEWORKS's, on this leader and the next.
// A task still running when the framework is torn down ends TASK_KILLED,
// REASON_FRAMEWORK_REMOVED, as in Mesos.
func TestCompletedFrameworkKeepsNameAndTaskHistory(t *testing.T) {
	h := newHarness(t, nil)
	agentID, as := h.agent("cpus:4;mem:4096")
	fw := h.framework("wordcount")
	if err := h.call(fw, launchCall(h.offer(fw), nil, commandTask("t1", agentID, 1, 64), commandTask("t2", agentID, 1, 64))); err != nil {
		t.Fatal(err)
	}
	ts := func(s float64) *float64 { return &s }
	msg := "Command exited with status 3"
	for _, st := range []mesos.TaskStatus{
		{TaskID: mesos.TaskID{Value: "t1"}, State: mesos.TASK_RUNNING.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: []byte("r1"), Timestamp: ts(100)},
		{TaskID: mesos.TaskID{Value: "t1"}, State: mesos.TASK_RUNNING.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: []byte("r1"), Timestamp: ts(100)}, // a retry: not history
		{TaskID: mesos.TaskID{Value: "t1"}, State: mesos.TASK_FAILED.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: []byte("f1"), Timestamp: ts(103),
			Reason: mesos.REASON_COMMAND_EXECUTOR_FAILED.Enum(), Message: &msg, Data: []byte("not kept")},
		{TaskID: mesos.TaskID{Value: "t2"}, State: mesos.TASK_RUNNING.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: []byte("r2"), Timestamp: ts(101)},
	} {
		h.agentStatus(agentID, fw.id, st)
	}
	if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_ACKNOWLEDGE, Acknowledge: &scheduler.Call_Acknowledge{
		AgentID: mesos.AgentID{Value: agentID}, TaskID: mesos.TaskID{Value: "t1"}, UUID: []byte("f1")}}); err != nil {
		t.Fatal(err)
	}
	as.nextAgentEvent(t, api.AgentEventType_ACKNOWLEDGE)
	h.m.mu.Lock()
	h.m.removeFrameworkLocked(h.m.frameworks[fw.id], "test teardown")
	h.m.mu.Unlock()

	want := map[string]string{
		"t1": "TASK_RUNNING//" + " TASK_FAILED/REASON_COMMAND_EXECUTOR_FAILED/" + msg,
		"t2": "TASK_RUNNING// TASK_KILLED/REASON_FRAMEWORK_REMOVED/Framework " + fw.id + " removed",
	}
	check := func(when string) {
		t.Helper()
		f := h.completedFramework(fw.id)
		if f == nil || f.Name != "wordcount" {
			t.Fatalf("%s: completed framework %+v, want one named wordcount", when, f)
		}
		got := map[string]string{}
		for _, task := range f.CompletedTasks {
			got[task.ID] = historyOf(task)
		}
		for id, w := range want {
			if got[id] != w {
				t.Errorf("%s: %s's history %q, want %q", when, id, got[id], w)
			}
		}
		h.m.mu.Lock()
		gf := h.m.getFrameworksLocked()
		gt := h.m.getTasksLocked()
		h.m.mu.Unlock()
		if len(gf.CompletedFrameworks) != 1 || gf.CompletedFrameworks[0].FrameworkInfo.Name != "wordcount" || gf.CompletedFrameworks[0].FrameworkInfo.GetID().GetValue() != fw.id {
			t.Errorf("%s: GET_FRAMEWORKS completed_frameworks %+v, want wordcount", when, gf.CompletedFrameworks)
		}
		for _, task := range gt.CompletedTasks {
			if task.TaskID.Value == "t1" {
				last := task.Statuses[len(task.Statuses)-1]
				if len(task.Statuses) != 2 || last.GetMessage() != msg || last.Data != nil {
					t.Errorf("%s: GET_TASKS t1 statuses %+v, want RUNNING then FAILED %q without data", when, task.Statuses, msg)
				}
			}
		}
	}
	check("this leader")
	deadline := time.Now().Add(5 * time.Second)
	for h.m.reg.CompletedFramework(fw.id) == nil || len(h.m.reg.CompletedTasks()) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the registry did not record the completed framework and its 2 tasks")
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.reelect(t)
	check("after the failover")
}

// setStatus keeps the first status and the newest, without retries.
func TestTaskStatusHistoryBound(t *testing.T) {
	tk := &task{}
	for i := 0; i < maxTaskStatuses+10; i++ {
		ts := float64(i)
		st := &mesos.TaskStatus{State: mesos.TASK_RUNNING.Enum(), Timestamp: &ts}
		tk.setStatus(st)
		tk.setStatus(st)
	}
	if len(tk.statuses) != maxTaskStatuses || tk.statuses[0].GetTimestamp() != 0 || tk.statuses[1].GetTimestamp() != 11 ||
		tk.statuses[maxTaskStatuses-1].GetTimestamp() != maxTaskStatuses+9 {
		t.Fatalf("history of %d: first %v, second %v", len(tk.statuses), tk.statuses[0].GetTimestamp(), tk.statuses[1].GetTimestamp())
	}
}

// POST /api/v1/allot/kill: bad bodies are 400, unknown ids 404, a finished
// task 409, the kill_tasks ACL on the framework's principal decides, and an
// allowed kill sends the agent the framework's KILL.
func TestKillRoute(t *testing.T) {
	h := newAuthzHarness(t, `{"permissive": false,
		"kill_tasks": [{"principals": {"values": ["ops"]}, "framework_principals": {"type": "ANY"}},
		               {"principals": {"values": ["alice"]}, "framework_principals": {"values": ["alice"]}},
		               {"principals": {"type": "ANY"}, "framework_principals": {"type": "NONE"}}],
		"register_frameworks": [{"principals": {"type": "ANY"}, "roles": {"type": "ANY"}}],
		"run_tasks": [{"principals": {"type": "ANY"}, "users": {"type": "ANY"}}]}`)
	agentID, as := h.agent("cpus:4;mem:4096")
	fw := h.frameworkAs("alice", "alice")
	if err := h.call(fw, launchCall(h.offer(fw), nil, commandTask("t1", agentID, 1, 64), commandTask("t2", agentID, 1, 64))); err != nil {
		t.Fatal(err)
	}
	if err := h.agentUpdate(agentID, fw.id, "t2", mesos.TASK_FINISHED, "f2"); err != nil {
		t.Fatal(err)
	}
	body := func(fwID, task string) []byte {
		return []byte(`{"framework_id":"` + fwID + `","task_id":"` + task + `"}`)
	}
	tests := []struct {
		name, principal string
		body            []byte
		wantCode        int
		want            string
	}{
		{"not JSON", "ops", []byte("kill t1"), 400, "want JSON"},
		{"unknown field", "ops", []byte(`{"task":"t1"}`), 400, "unknown field"},
		{"no task id", "ops", []byte(`{"framework_id":"` + fw.id + `"}`), 400, "framework_id and task_id are required"},
		{"unknown framework", "ops", body("nope", "t1"), 404, "framework nope is not known"},
		{"other principal", "eve", body(fw.id, "t1"), 403, "kill_tasks"},
		{"unknown task", "ops", body(fw.id, "t9"), 404, "has no task t9"},
		{"finished task", "ops", body(fw.id, "t2"), 409, "already TASK_FINISHED"},
		{"its own principal", "alice", body(fw.id, "t1"), 202, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got := h.do(http.MethodPost, KillPath, tt.principal, tt.body, nil)
			if code != tt.wantCode || !strings.Contains(got, tt.want) {
				t.Fatalf("%d %q, want %d containing %q", code, got, tt.wantCode, tt.want)
			}
		})
	}
	if ev := as.nextAgentEvent(t, api.AgentEventType_KILL); ev.TaskId != "t1" || ev.FrameworkId != fw.id || ev.GraceNanos != 0 {
		t.Fatalf("KILL to the agent %+v, want t1 with the task's own kill policy", ev)
	}
	if n := h.denials("kill_tasks"); n != 1 {
		t.Errorf("kill_tasks denials %v, want 1", n)
	}
}
