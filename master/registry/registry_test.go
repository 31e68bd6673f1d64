package registry

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/master/registry/registrytest"
)

func applyAll(t *testing.T, r *Registry, cmds []*api.Command) {
	t.Helper()
	for _, c := range cmds {
		if err := r.ApplyCommand(c); err != nil {
			t.Fatalf("apply %v: %v", c.Type, err)
		}
	}
}

func TestRegistryApply(t *testing.T) {
	r := NewRegistry()
	applyAll(t, r, registrytest.Commands())
	if got := len(r.Agents()); got != 1 {
		t.Errorf("agents = %d, want 1 (a2 removed in the batch)", got)
	}
	if tasks := r.Tasks(); len(tasks) != 1 || tasks[0].TaskId != "t1" {
		t.Errorf("tasks = %v, want only t1", tasks)
	}
	if w := r.Config().Weights["prod"]; w != 2 {
		t.Errorf("weight = %v, want 2", w)
	}
	// Removing a framework removes its tasks.
	applyAll(t, r, []*api.Command{{Type: api.CommandType_FRAMEWORK_REMOVE, Id: "f1"}})
	if len(r.Frameworks()) != 0 || len(r.Tasks()) != 0 {
		t.Errorf("after FRAMEWORK_REMOVE: frameworks %v tasks %v", r.Frameworks(), r.Tasks())
	}
}

func TestRegistryRejectsBadCommands(t *testing.T) {
	tests := []struct {
		name string
		cmd  *api.Command
		want string
	}{
		{"unknown type", &api.Command{Type: 99}, "unknown command type 99"},
		{"agent without id", &api.Command{Type: api.CommandType_AGENT_UPSERT, Agent: &api.AgentRecord{}}, "without an agent id"},
		{"framework without id", &api.Command{Type: api.CommandType_FRAMEWORK_UPSERT}, "without a framework id"},
		{"task without ids", &api.Command{Type: api.CommandType_TASK_UPSERT, Task: &api.TaskRecord{TaskId: "t"}}, "without framework and task ids"},
		{"config missing", &api.Command{Type: api.CommandType_CONFIG_SET}, "without a config"},
		{"nested batch", &api.Command{Type: api.CommandType_BATCH, Batch: []*api.Command{{Type: api.CommandType_BATCH}}}, "nested BATCH"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			err := r.ApplyCommand(tc.cmd)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
			if len(r.Agents())+len(r.Frameworks())+len(r.Tasks()) != 0 {
				t.Errorf("a rejected command changed the registry")
			}
		})
	}
}

// Every replicated type survives a snapshot and restore unchanged.
func TestRegistrySnapshotRestoreRoundTrip(t *testing.T) {
	r := NewRegistry()
	applyAll(t, r, registrytest.Commands())
	var buf bytes.Buffer
	if err := r.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	r2 := NewRegistry()
	r2.ApplyCommand(&api.Command{Type: api.CommandType_AGENT_UPSERT, Agent: &api.AgentRecord{Id: "stale"}})
	if err := r2.Restore(io.NopCloser(bytes.NewReader(buf.Bytes()))); err != nil {
		t.Fatal(err)
	}
	eq := func(what string, a, b []proto.Message) {
		if len(a) != len(b) {
			t.Fatalf("%s: %d records restored, want %d", what, len(b), len(a))
		}
		for i := range a {
			if !proto.Equal(a[i], b[i]) {
				t.Errorf("%s %d: restored %v, want %v", what, i, b[i], a[i])
			}
		}
	}
	eq("agents", msgs(r.Agents()), msgs(r2.Agents()))
	eq("frameworks", msgs(r.Frameworks()), msgs(r2.Frameworks()))
	eq("tasks", msgs(r.Tasks()), msgs(r2.Tasks()))
	if !proto.Equal(r.Config(), r2.Config()) {
		t.Errorf("config restored %v, want %v", r2.Config(), r.Config())
	}
	eq("completed tasks", msgs(r.CompletedTasks()), msgs(r2.CompletedTasks()))
	eq("unreachable agents", msgs(r.Unreachable()), msgs(r2.Unreachable()))
	if len(r2.Unreachable()) != 2 {
		t.Errorf("restored unreachable agents %v, want a4 and a5", r2.Unreachable())
	}
	if len(r2.CompletedTasks()) != 2 || !r2.AgentRemoved("a2") {
		t.Errorf("restored completed tasks %v and a2 removed %v, want t3 and f2's t4, and true", r2.CompletedTasks(), r2.AgentRemoved("a2"))
	}
	var again bytes.Buffer
	r2.WriteSnapshot(&again)
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Error("a restored registry writes a different snapshot")
	}
}

func msgs[T proto.Message](in []T) []proto.Message {
	out := make([]proto.Message, len(in))
	for i, m := range in {
		out[i] = m
	}
	return out
}

// A damaged snapshot is an error and leaves the current state in place.
func TestRegistryRestoreRejectsDamage(t *testing.T) {
	var good bytes.Buffer
	src := NewRegistry()
	applyAll(t, src, registrytest.Commands())
	src.WriteSnapshot(&good)
	tests := []struct{ name, snap string }{
		{"bad length", "xyz\n"},
		{"truncated", good.String()[:good.Len()-3]},
		{"not a record", "3\n\xff\xff\xff"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			r.ApplyCommand(&api.Command{Type: api.CommandType_AGENT_UPSERT, Agent: &api.AgentRecord{Id: "keep"}})
			if err := r.Restore(io.NopCloser(strings.NewReader(tc.snap))); err == nil {
				t.Fatal("Restore accepted a damaged snapshot")
			}
			if a := r.Agents(); len(a) != 1 || a[0].Id != "keep" {
				t.Errorf("state after failed restore = %v", a)
			}
		})
	}
}
