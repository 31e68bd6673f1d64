package integration

import (
	"slices"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/internal/testcluster"
)

// An agent down longer than --agent-ping-timeout is unreachable and its
// task (of a framework not partition-aware) reported TASK_LOST; the
// operator then marks it gone (MARK_AGENT_GONE). Restarted on the same work
// dir, it recovers the checkpointed executor and comes back under its old
// id: the master refuses it, it kills the executor (the task's process
// goes), and registers afresh under a new id. The framework hears RUNNING,
// LOST and nothing more, and /state lists the task once.
func TestGoneAgentKillsLostTaskAndRegistersAfresh(t *testing.T) {
	c := newCluster(t, 1, "--agent-ping-timeout", "3s")
	a := c.Agents[0]
	fw := subscribe(t, c.MasterAddr, checkpointing("lost"))
	o := fw.takeOffer(t, "")
	oldID := o.AgentID.Value
	if err := fw.call(launch(o, cmdTask("long", o, "sleep 600", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "long", mesos.TASK_RUNNING)
	if pids := sandboxPids(c.Dir, ""); len(pids) == 0 {
		t.Fatal("no process of the task found in the sandboxes")
	}

	a.Kill(syscall.SIGKILL)
	lost := fw.waitState(t, "long", mesos.TASK_LOST)
	if lost.GetReason() != mesos.REASON_AGENT_REMOVED {
		t.Fatalf("TASK_LOST with reason %v, want REASON_AGENT_REMOVED", lost.GetReason())
	}
	body := `{"type":"MARK_AGENT_GONE","mark_agent_gone":{"agent_id":{"value":"` + oldID + `"}}}`
	if code, msg := postRaw(t, c.MasterAddr, "/api/v1", "application/json", []byte(body), nil); code != 200 {
		t.Fatalf("MARK_AGENT_GONE answered %d %q, want 200", code, msg)
	}
	c.StartAgent(a)

	testcluster.WaitFor(t, 30*time.Second, "the task's processes to be killed", func() bool {
		return len(sandboxPids(c.Dir, "")) == 0
	})
	var newID string
	testcluster.WaitFor(t, 30*time.Second, "the agent to register under a new id", func() bool {
		st := c.state()
		if len(st.Slaves) != 1 || !st.Slaves[0].Active {
			return false
		}
		newID = st.Slaves[0].ID
		return true
	})
	if newID == oldID {
		t.Fatalf("the removed agent re-registered under its old id %s", oldID)
	}

	// Whatever the master forwarded before the answer to this
	// reconciliation reached the framework before it.
	if err := fw.call(&scheduler.Call{Type: scheduler.Call_RECONCILE, Reconcile: &scheduler.Call_Reconcile{
		Tasks: []scheduler.Call_Reconcile_Task{{TaskID: mesos.TaskID{Value: "sentinel"}}}}}); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "sentinel", mesos.TASK_LOST)
	if got, want := fw.states("long"), []mesos.TaskState{mesos.TASK_RUNNING, mesos.TASK_LOST}; !slices.Equal(got, want) {
		t.Errorf("the framework heard %v of the task, want %v", got, want)
	}
	listed := 0
	for _, f := range c.state().Frameworks {
		for _, tk := range append(f.Tasks, f.CompletedTasks...) {
			if tk.ID == "long" {
				listed++
				if tk.State != "TASK_LOST" {
					t.Errorf("/state lists the task %s, want TASK_LOST", tk.State)
				}
			}
		}
	}
	if listed != 1 {
		t.Errorf("/state lists the task %d times, want once", listed)
	}
	// The agent under its new id takes work again.
	o2 := fw.takeOffer(t, newID)
	if err := fw.call(launch(o2, cmdTask("after", o2, "true", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "after", mesos.TASK_FINISHED)
}
