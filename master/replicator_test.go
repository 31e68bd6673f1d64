package master

import (
	"bytes"
	"testing"
	"time"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/master/registry"
	"github.com/allot-sched/allot/master/registry/registrytest"
)

// openLoneRaft opens a lone master's raft on dir with an empty registry
// and waits until it leads with the log applied.
func openLoneRaft(t *testing.T, dir string) (*registry.Registry, *replicator) {
	t.Helper()
	reg := registry.NewRegistry()
	rep, err := openRaft(dir, reg, raftOptions{LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.waitLeader(10 * time.Second); err != nil {
		rep.close()
		t.Fatal(err)
	}
	return reg, rep
}

// The registry lives in raft-boltdb: reopening the work dir replays it.
func TestReplicatorKeepsRegistryAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	reg, rep := openLoneRaft(t, dir)
	for _, c := range registrytest.Commands() {
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

	reg2, rep2 := openLoneRaft(t, dir)
	defer rep2.close()
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
	reg, rep := openLoneRaft(t, dir)
	for _, c := range registrytest.Commands() {
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

	reg2, rep2 := openLoneRaft(t, dir)
	defer rep2.close()
	var got bytes.Buffer
	reg2.WriteSnapshot(&got)
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("registry after snapshot and reopen differs:\n got %d bytes\nwant %d bytes", got.Len(), want.Len())
	}
	if len(reg2.Tasks()) != 2 {
		t.Errorf("tasks = %v, want t1 and after-snapshot", reg2.Tasks())
	}
}
