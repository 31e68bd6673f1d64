package integration

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// sandboxPids lists processes whose MESOS_EXECUTOR_ID is id (any, if id is
// empty) and whose sandbox lies under dir.
func sandboxPids(dir, id string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		env := "\x00" + string(b)
		if strings.Contains(env, "\x00MESOS_DIRECTORY="+dir) && (id == "" || strings.Contains(env, "\x00MESOS_EXECUTOR_ID="+id+"\x00")) {
			out = append(out, pid)
		}
	}
	return out
}

func checkpointing(name string) mesos.FrameworkInfo {
	ft := 3600.0
	cp := true
	return mesos.FrameworkInfo{Name: name, FailoverTimeout: &ft, Checkpoint: &cp}
}

// kill -9 an agent and start it again on the same work dir: the executor of
// a checkpointing framework keeps running, re-subscribes and still obeys
// KILL; a non-checkpointing framework's task is reported lost.
func TestAgentKill9KeepsCheckpointedExecutor(t *testing.T) {
	c := newCluster(t, 1)
	a := c.Agents[0]
	keep := subscribe(t, c.MasterAddr, checkpointing("keeper"))
	o := keep.takeOffer(t, "")
	ex := execInfo("sleeper")
	if err := keep.call(launch(o, execTask("long", o, ex, "sleep"))); err != nil {
		t.Fatal(err)
	}
	keep.waitState(t, "long", mesos.TASK_RUNNING)

	lose := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "loser"})
	lo := lose.takeOffer(t, "")
	if err := lose.call(launch(lo, cmdTask("doomed", lo, "sleep 60", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	lose.waitState(t, "doomed", mesos.TASK_RUNNING)

	pids := sandboxPids(c.Dir, "sleeper")
	if len(pids) != 1 {
		t.Fatalf("executor processes = %v, want one", pids)
	}
	a.Kill(syscall.SIGKILL)
	if syscall.Kill(pids[0], 0) != nil {
		t.Fatal("the checkpointed executor died with the agent")
	}
	c.StartAgent(a)
	lose.waitState(t, "doomed", mesos.TASK_LOST)
	c.WaitAgents(1)
	if got := sandboxPids(c.Dir, "sleeper"); len(got) != 1 || got[0] != pids[0] {
		t.Fatalf("executor processes after restart = %v, want the same %v", got, pids)
	}
	// The recovered executor re-subscribes: one KILL, sent once the
	// restarted agent is registered with the master, reaches it (the agent
	// holds it until the executor is back) and it answers.
	waitAgentRegistered(t, a.Addr)
	if err := keep.call(calls.Kill("long", o.AgentID.Value)); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, 30*time.Second, "the recovered executor to answer KILL", func() bool {
		return sawState(keep, "long", mesos.TASK_KILLED)
	})
}

// waitAgentRegistered waits until the agent at addr says it is registered
// with the master: the master has its new stream, so what it sends the
// agent from then on is not lost with a dead connection.
func waitAgentRegistered(t testing.TB, addr string) {
	t.Helper()
	testcluster.WaitFor(t, 30*time.Second, "the agent at "+addr+" to register with the master", func() bool {
		doc, err := agentState(addr)
		connected, _ := doc["connected"].(bool)
		return err == nil && connected
	})
}

// sawState reports whether s has seen task id reach want (repeated KILLs of
// a task that is gone answer TASK_LOST afterwards, so the last state is not
// the one to look at).
func sawState(s *sched, id string, want mesos.TaskState) bool {
	for _, st := range s.states(id) {
		if st == want {
			return true
		}
	}
	return false
}

// A master killed with -9 and restarted on the same work dir keeps its
// registry: the framework re-subscribes under its id within the failover
// timeout, the agent re-registers, and the running task is still the
// framework's to kill.
func TestMasterRestartKeepsRegistry(t *testing.T) {
	c := newCluster(t, 1)
	info := checkpointing("survivor")
	fw := subscribe(t, c.MasterAddr, info)
	id := fw.ID()
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, execTask("steady", o, execInfo("steady-ex"), "sleep"))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "steady", mesos.TASK_RUNNING)

	c.Master.Kill(syscall.SIGKILL)
	fw.close()
	c.StartMaster()
	// Before anyone reconnects, the registry already knows the framework.
	st := c.state()
	if len(st.Frameworks) != 1 || st.Frameworks[0].ID != id || st.Frameworks[0].Connected {
		t.Fatalf("frameworks after restart = %+v, want %s known and disconnected", st.Frameworks, id)
	}
	c.WaitAgents(1)
	info.ID = &mesos.FrameworkID{Value: id}
	again := subscribe(t, c.MasterAddr, info)
	if again.ID() != id {
		t.Fatalf("re-subscribed as %s, want %s", again.ID(), id)
	}
	testcluster.WaitFor(t, 10*time.Second, "the task to be listed as running", func() bool {
		for _, f := range c.state().Frameworks {
			for _, tk := range f.Tasks {
				if tk.ID == "steady" && tk.State == "TASK_RUNNING" {
					return true
				}
			}
		}
		return false
	})
	if err := again.call(calls.Kill("steady", o.AgentID.Value)); err != nil {
		t.Fatal(err)
	}
	again.waitState(t, "steady", mesos.TASK_KILLED)
}

// A framework that re-subscribes within its failover timeout keeps its
// tasks; one that does not have them killed and is removed.
func TestFrameworkFailover(t *testing.T) {
	c := newCluster(t, 1)
	ft := 1.5
	info := mesos.FrameworkInfo{Name: "flaky", FailoverTimeout: &ft}
	fw := subscribe(t, c.MasterAddr, info)
	id := fw.ID()
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("kept", o, "sleep 60", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "kept", mesos.TASK_RUNNING)
	// A second scheduler takes over while the first is still connected: the
	// first is told so with an ERROR event and its stream ends.
	info.ID = &mesos.FrameworkID{Value: id}
	back := subscribe(t, c.MasterAddr, info)
	if back.ID() != id {
		t.Fatalf("failover got id %s, want %s", back.ID(), id)
	}
	testcluster.WaitFor(t, 10*time.Second, "the replaced scheduler to get ERROR and lose its stream", func() bool {
		select {
		case <-fw.ended:
		default:
			return false
		}
		fw.mu.Lock()
		defer fw.mu.Unlock()
		return len(fw.events) > 0 && fw.events[len(fw.events)-1] == scheduler.Event_ERROR
	})
	// Reconciliation tells the new scheduler about its running task.
	if err := back.call(calls.Reconcile()); err != nil {
		t.Fatal(err)
	}
	back.waitState(t, "kept", mesos.TASK_RUNNING)
	back.close()
	testcluster.WaitFor(t, 20*time.Second, "the framework to be removed after its failover timeout", func() bool {
		return len(c.state().Frameworks) == 0
	})
	testcluster.WaitFor(t, 20*time.Second, "its task's executor to be gone", func() bool { return len(sandboxPids(c.Dir, "kept")) == 0 })
}

// An update not yet acknowledged when the agent is killed with -9 is on
// disk: the restarted agent sends it again, with the same uuid.
func TestUnacknowledgedUpdateSurvivesAgentKill9(t *testing.T) {
	c := newCluster(t, 1)
	a := c.Agents[0]
	fw := subscribe(t, c.MasterAddr, checkpointing("patient"))
	fw.mu.Lock()
	fw.noAck = true
	fw.mu.Unlock()
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, execTask("pending", o, execInfo("pending-ex"), "sleep"))); err != nil {
		t.Fatal(err)
	}
	first := fw.waitState(t, "pending", mesos.TASK_RUNNING)
	a.Kill(syscall.SIGKILL)
	fw.mu.Lock()
	before := len(fw.updates)
	fw.mu.Unlock()
	c.StartAgent(a)
	c.WaitAgents(1)
	testcluster.WaitFor(t, 20*time.Second, "the restarted agent to resend TASK_RUNNING", func() bool {
		fw.mu.Lock()
		defer fw.mu.Unlock()
		for _, u := range fw.updates[before:] {
			if u.TaskID.Value == "pending" && string(u.UUID) == string(first.UUID) {
				return true
			}
		}
		return false
	})
	if err := fw.call(calls.Acknowledge(o.AgentID.Value, "pending", first.UUID)); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, 10*time.Second, "the agent to hold no pending update", func() bool {
		st, err := agentState(a.Addr)
		if err != nil {
			return false
		}
		tasks, _ := st["tasks"].([]any)
		return len(tasks) == 1 && tasks[0].(map[string]any)["PendingUpdates"] == float64(0)
	})
}
