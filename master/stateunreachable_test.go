package master

import (
	"encoding/json"
	"testing"

	"github.com/allot-sched/allot/api/operator"
)

// /state lists a partition-aware framework's tasks on an unreachable
// agent in the framework's unreachable_tasks, as Mesos does, not in its
// tasks; they move back when the agent re-registers. Every framework has
// the list, [] when empty, as Mesos writes it.
func TestStateListsUnreachableTasks(t *testing.T) {
	p := partition(t, true)
	type task struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	type framework struct {
		ID          string  `json:"id"`
		Tasks       []task  `json:"tasks"`
		Unreachable *[]task `json:"unreachable_tasks"`
	}
	lists := func() (tasks, unreachable []task) {
		t.Helper()
		var doc struct {
			Frameworks []framework `json:"frameworks"`
		}
		p.h.m.mu.Lock()
		b, err := json.Marshal(operator.State{Frameworks: p.h.m.stateFrameworksLocked()})
		p.h.m.mu.Unlock()
		if err != nil || json.Unmarshal(b, &doc) != nil {
			t.Fatalf("/state does not round-trip: %v", err)
		}
		if len(doc.Frameworks) != 1 || doc.Frameworks[0].Unreachable == nil {
			t.Fatalf("/state frameworks %+v, want one with unreachable_tasks", doc.Frameworks)
		}
		return doc.Frameworks[0].Tasks, *doc.Frameworks[0].Unreachable
	}
	tasks, unreachable := lists()
	if len(tasks) != 0 || len(unreachable) != 1 || unreachable[0].ID != "t1" || unreachable[0].State != "TASK_UNREACHABLE" {
		t.Errorf("while the agent is unreachable: tasks %v, unreachable_tasks %v; want t1 unreachable alone", tasks, unreachable)
	}
	if _, err := p.reregister(); err != nil {
		t.Fatal(err)
	}
	tasks, unreachable = lists()
	if len(tasks) != 1 || tasks[0].State != "TASK_RUNNING" || len(unreachable) != 0 {
		t.Errorf("once the agent is back: tasks %v, unreachable_tasks %v; want t1 running", tasks, unreachable)
	}
}
