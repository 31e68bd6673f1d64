package registry

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/master/registry/registrytest"
)

// The completed history keeps the newest tasks of each framework and the
// histories of the newest removed frameworks, by the bound each command
// carries (0: Mesos's defaults).
func TestRegistryCompletedHistoryBounds(t *testing.T) {
	complete := func(fw, id string, limit int32) *api.Command {
		return &api.Command{Type: api.CommandType_TASK_COMPLETE, Task: &api.TaskRecord{FrameworkId: fw, TaskId: id, State: int32(mesos.TASK_FINISHED)}, Limit: limit}
	}
	fwUp := func(id string) *api.Command {
		return &api.Command{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: &api.FrameworkRecord{Id: id}}
	}
	tests := []struct {
		name string
		cmds []*api.Command
		want string
	}{
		{"newest per framework", []*api.Command{fwUp("f"), complete("f", "1", 2), complete("f", "2", 2), complete("f", "3", 2)}, "f/2 f/3"},
		{"live frameworks by id", []*api.Command{fwUp("b"), fwUp("a"), complete("b", "1", 0), complete("a", "1", 0)}, "a/1 b/1"},
		{"unknown framework kept nothing", []*api.Command{complete("nobody", "1", 0)}, ""},
		{"removed frameworks, newest kept, in removal order", []*api.Command{
			fwUp("x"), fwUp("y"), fwUp("z"), fwUp("w"), complete("x", "1", 0), complete("y", "1", 0), complete("z", "1", 0), complete("w", "1", 0),
			{Type: api.CommandType_FRAMEWORK_REMOVE, Id: "z", Limit: 2},
			{Type: api.CommandType_FRAMEWORK_REMOVE, Id: "x", Limit: 2},
			{Type: api.CommandType_FRAMEWORK_REMOVE, Id: "y", Limit: 2},
		}, "w/1 x/1 y/1"},
		{"a framework removed without history", []*api.Command{fwUp("f"), {Type: api.CommandType_FRAMEWORK_REMOVE, Id: "f"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			applyAll(t, r, tc.cmds)
			if got := registrytest.TaskIDs(r.CompletedTasks()); got != tc.want {
				t.Errorf("completed = %q, want %q", got, tc.want)
			}
		})
	}

	r := NewRegistry()
	applyAll(t, r, []*api.Command{fwUp("f")})
	for i := 0; i < DefaultMaxCompletedTasksPerFramework+5; i++ {
		applyAll(t, r, []*api.Command{complete("f", fmt.Sprint(i), 0)})
	}
	if got := r.CompletedTasks(); len(got) != DefaultMaxCompletedTasksPerFramework || got[0].TaskId != "5" {
		t.Errorf("limit 0 keeps %d from %s, want Mesos's default %d from 5", len(got), got[0].TaskId, DefaultMaxCompletedTasksPerFramework)
	}
	for i := 0; i <= maxRemovedAgents; i++ {
		r.hist.removeAgent(fmt.Sprint("a", i))
	}
	if r.AgentRemoved("a0") || !r.AgentRemoved("a1") || len(r.hist.removedOrder) != maxRemovedAgents {
		t.Errorf("removed agents: a0 %v, a1 %v, %d kept; want the oldest forgotten beyond %d",
			r.AgentRemoved("a0"), r.AgentRemoved("a1"), len(r.hist.removedOrder), maxRemovedAgents)
	}
}

// A snapshot written before the registry kept a history (no completed task
// or removed agent records) restores, with an empty history.
func TestRegistryRestoresSnapshotWithoutHistory(t *testing.T) {
	var old bytes.Buffer
	err := writeRecords(&old, []*api.SnapshotRecord{
		{Record: &api.SnapshotRecord_Config{Config: &api.ConfigRecord{}}},
		{Record: &api.SnapshotRecord_Agent{Agent: &api.AgentRecord{Id: "a1"}}},
		{Record: &api.SnapshotRecord_Framework{Framework: &api.FrameworkRecord{Id: "f1"}}},
		{Record: &api.SnapshotRecord_Task{Task: &api.TaskRecord{FrameworkId: "f1", TaskId: "t1"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRegistry()
	if err := r.Restore(io.NopCloser(bytes.NewReader(old.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if len(r.Agents()) != 1 || len(r.Tasks()) != 1 || len(r.CompletedTasks()) != 0 || r.AgentRemoved("a1") {
		t.Errorf("restored agents %v tasks %v completed %v", r.Agents(), r.Tasks(), r.CompletedTasks())
	}
	var again bytes.Buffer
	r.WriteSnapshot(&again)
	if !bytes.Equal(again.Bytes(), old.Bytes()) {
		t.Error("an old snapshot does not write back unchanged")
	}
	// And the history then grows from the log as on any registry.
	applyAll(t, r, []*api.Command{{Type: api.CommandType_TASK_COMPLETE, Task: &api.TaskRecord{FrameworkId: "f1", TaskId: "t1"}}})
	if len(r.Tasks()) != 0 || registrytest.TaskIDs(r.CompletedTasks()) != "f1/t1" {
		t.Errorf("after TASK_COMPLETE: tasks %v completed %v", r.Tasks(), r.CompletedTasks())
	}
}
