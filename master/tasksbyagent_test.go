package master

import (
	"sort"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

// indexedTasks is what tasksOnLocked returns for agent, as sorted ids.
func indexedTasks(h *harness, agent string) []string {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	var ids []string
	for _, p := range h.m.tasksOnLocked(agent) {
		ids = append(ids, p.t.id)
	}
	sort.Strings(ids)
	return ids
}

// checkIndex asserts the index's one promise: every task the master knows
// is indexed under its agent.
func checkIndex(t *testing.T, h *harness) {
	t.Helper()
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	for _, fw := range h.m.frameworks {
		for _, tk := range fw.tasks {
			if _, ok := h.m.tasksOn[tk.agent][tk]; !ok {
				t.Errorf("task %s on %s is not indexed", tk.id, tk.agent)
			}
		}
	}
}

// lostTasks waits for n TASK_LOST updates with reason on fw's stream
// (skipping other events) and returns their tasks, sorted.
func lostTasks(t *testing.T, fw *fakeFramework, reason mesos.TaskStatus_Reason, n int) []string {
	t.Helper()
	var ids []string
	for len(ids) < n {
		st := fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
		if st.GetState() == mesos.TASK_LOST && st.GetReason() == reason {
			ids = append(ids, st.TaskID.Value)
		}
	}
	sort.Strings(ids)
	return ids
}

// A re-registering agent loses exactly the tasks the master placed on it
// that it no longer reports, a task it reports from another agent moves to
// it, and a removed agent loses what is on it: all found through the index
// instead of a scan of every task.
func TestTasksByAgentReregisterAndRemove(t *testing.T) {
	h := newHarness(t, nil)
	a1, _ := h.agent("cpus:4;mem:4096")
	a2, _ := h.agent("cpus:4;mem:4096")
	fw := h.framework("idx")
	h.allocate()
	offers := map[string]mesos.Offer{}
	for _, o := range fw.nextEvent(t, scheduler.Event_OFFERS).Offers.Offers {
		offers[o.AgentID.Value] = o
	}
	if err := h.call(fw, launchCall(offers[a1], refuse(0), commandTask("t1", a1, 1, 64), commandTask("t2", a1, 1, 64), commandTask("t3", a1, 1, 64))); err != nil {
		t.Fatal(err)
	}
	if err := h.call(fw, launchCall(offers[a2], refuse(0), commandTask("t4", a2, 1, 64))); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, h)
	if got := indexedTasks(h, a1); len(got) != 3 {
		t.Fatalf("a1 holds %v, want t1-t3", got)
	}

	// a1 comes back reporting t1, t2 and t4 (which the master had on a2).
	report := func(id string) *api.TaskRecord {
		return &api.TaskRecord{FrameworkId: fw.id, TaskId: id, State: int32(mesos.TASK_RUNNING)}
	}
	s := newFakeStream(t, api.Protobuf)
	if _, err := h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER, Tasks: []*api.TaskRecord{report("t1"), report("t2"), report("t4")},
		Agent: &api.AgentRecord{Id: a1, Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:4096"}}, s.Stream); err != nil {
		t.Fatal(err)
	}
	if got := lostTasks(t, fw, mesos.REASON_AGENT_RESTARTED, 1); got[0] != "t3" {
		t.Errorf("lost on re-registration: %v, want [t3]", got)
	}
	if got := indexedTasks(h, a1); len(got) != 3 || got[0] != "t1" || got[1] != "t2" || got[2] != "t4" {
		t.Errorf("a1 holds %v after re-registering, want [t1 t2 t4]", got)
	}
	if got := indexedTasks(h, a2); len(got) != 0 {
		t.Errorf("a2 still holds %v, want nothing (t4 moved)", got)
	}
	checkIndex(t, h)

	h.m.mu.Lock()
	h.m.removeAgentLocked(h.m.agents[a1], "test")
	_, left := h.m.tasksOn[a1]
	h.m.mu.Unlock()
	if got := lostTasks(t, fw, mesos.REASON_AGENT_REMOVED, 3); got[0] != "t1" || got[1] != "t2" || got[2] != "t4" {
		t.Errorf("lost with the agent: %v, want t1, t2, t4", got)
	}
	if left {
		t.Error("the removed agent's tasks are still indexed")
	}
	checkIndex(t, h)
}

// A stale entry (a task its framework no longer has) is dropped by the
// next lookup, never returned.
func TestTasksByAgentDropsStale(t *testing.T) {
	h := newHarness(t, nil)
	fw := h.framework("stale")
	h.m.mu.Lock()
	f := h.m.frameworks[fw.id]
	live := &task{id: "live", fw: fw.id, agent: "a"}
	gone := &task{id: "gone", fw: fw.id, agent: "a"}
	moved := &task{id: "moved", fw: fw.id, agent: "a"}
	orphan := &task{id: "orphan", fw: "no-such-framework", agent: "a"}
	for _, tk := range []*task{live, gone, moved, orphan} {
		h.m.tasksOn.place(tk)
	}
	f.tasks["live"], f.tasks["moved"] = live, moved
	moved.agent = "b" // moved without the index knowing
	got := h.m.tasksOnLocked("a")
	n := len(h.m.tasksOn["a"])
	h.m.mu.Unlock()
	if len(got) != 1 || got[0].t != live || got[0].fw != f {
		t.Fatalf("lookup returned %v, want only the live task", got)
	}
	if n != 1 {
		t.Errorf("%d entries left for the agent, want 1", n)
	}
}
