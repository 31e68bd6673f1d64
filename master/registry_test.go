package master

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// fixture returns one command of every type.
func fixture() []*api.Command {
	return []*api.Command{
		{Type: api.CommandType_AGENT_UPSERT, Agent: &api.AgentRecord{Id: "a1", Hostname: "h1", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:1024", Attributes: map[string]string{"rack": "r1"}}},
		{Type: api.CommandType_AGENT_UPSERT, Agent: &api.AgentRecord{Id: "a2", Address: "127.0.0.1:5052", Resources: "cpus:2"}},
		{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: &api.FrameworkRecord{Id: "f1", Info: []byte{1, 2}, RegisteredUnixNano: 7}},
		{Type: api.CommandType_TASK_UPSERT, Task: &api.TaskRecord{FrameworkId: "f1", TaskId: "t1", AgentId: "a1", State: 1, Resources: "cpus:1"}},
		{Type: api.CommandType_TASK_UPSERT, Task: &api.TaskRecord{FrameworkId: "f1", TaskId: "t2", AgentId: "a2"}},
		{Type: api.CommandType_CONFIG_SET, Config: &api.ConfigRecord{Weights: map[string]float64{"prod": 2}}},
		{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: &api.FrameworkRecord{Id: "f2"}},
		{Type: api.CommandType_TASK_UPSERT, Task: &api.TaskRecord{FrameworkId: "f1", TaskId: "t3", AgentId: "a1", State: 2}},
		{Type: api.CommandType_TASK_COMPLETE, Task: &api.TaskRecord{FrameworkId: "f1", TaskId: "t3", AgentId: "a1", State: 2}, Limit: 10},
		{Type: api.CommandType_TASK_COMPLETE, Task: &api.TaskRecord{FrameworkId: "f2", TaskId: "t4", AgentId: "a1", State: 3}},
		{Type: api.CommandType_FRAMEWORK_REMOVE, Id: "f2", Limit: 5},
		{Type: api.CommandType_BATCH, Batch: []*api.Command{
			{Type: api.CommandType_TASK_REMOVE, Id: "f1/t2"},
			{Type: api.CommandType_AGENT_REMOVE, Id: "a2"},
		}},
	}
}

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
	applyAll(t, r, fixture())
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
	applyAll(t, r, fixture())
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
	applyAll(t, src, fixture())
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

// The registry lives in raft-boltdb: reopening the work dir replays it.
func TestReplicatorKeepsRegistryAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	reg := NewRegistry()
	rep, err := openRaft(dir, reg, raftOptions{LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.waitLeader(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, c := range fixture() {
		rep.propose(c)
	}
	if err := rep.proposeWait(&api.Command{Type: api.CommandType_AGENT_UPSERT, Agent: &api.AgentRecord{Id: "last"}}); err != nil {
		t.Fatal(err)
	}
	want := len(reg.Agents())
	if err := rep.close(); err != nil {
		t.Fatal(err)
	}
	rep.propose(&api.Command{Type: api.CommandType_AGENT_REMOVE, Id: "last"}) // after close: dropped, no panic

	reg2 := NewRegistry()
	rep2, err := openRaft(dir, reg2, raftOptions{LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	defer rep2.close()
	if err := rep2.waitLeader(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := len(reg2.Agents()); got != want || want != 2 {
		t.Fatalf("agents after reopen = %d, want %d (a1 and last)", got, want)
	}
	if len(reg2.Tasks()) != 1 {
		t.Errorf("tasks after reopen = %v", reg2.Tasks())
	}
}

// After a raft snapshot, reopening restores the registry from the snapshot
// stream (and the log entries after it).
func TestReplicatorRestoresFromSnapshot(t *testing.T) {
	dir := t.TempDir()
	reg := NewRegistry()
	rep, err := openRaft(dir, reg, raftOptions{LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.waitLeader(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, c := range fixture() {
		if err := rep.proposeWait(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := rep.raft.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if err := rep.proposeWait(&api.Command{Type: api.CommandType_TASK_UPSERT, Task: &api.TaskRecord{FrameworkId: "f1", TaskId: "after-snapshot"}}); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	reg.WriteSnapshot(&want)
	rep.close()

	reg2 := NewRegistry()
	rep2, err := openRaft(dir, reg2, raftOptions{LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	defer rep2.close()
	if err := rep2.waitLeader(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	reg2.WriteSnapshot(&got)
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("registry after snapshot and reopen differs:\n got %d bytes\nwant %d bytes", got.Len(), want.Len())
	}
	if len(reg2.Tasks()) != 2 {
		t.Errorf("tasks = %v, want t1 and after-snapshot", reg2.Tasks())
	}
}
