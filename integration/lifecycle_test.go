package integration

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/internal/testcluster"
)

// A mesos-go framework launches a command task, sees RUNNING and FINISHED
// and acknowledges both; the agent then holds no unacknowledged update and
// the task's output is in its sandbox.
func TestCommandTaskRunsToFinished(t *testing.T) {
	c := newCluster(t, 2)
	for _, media := range []string{"protobuf", "json"} {
		t.Run(media, func(t *testing.T) { runToFinished(t, c, media) })
	}
}

func runToFinished(t *testing.T, c *cluster, media string) {
	fw := subscribeWith(t, newCaller(c.MasterAddr, media), mesos.FrameworkInfo{Name: "lifecycle-" + media})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("t1", o, "echo hello from allot; exit 0", 0.5, 64))); err != nil {
		t.Fatalf("ACCEPT: %v", err)
	}
	fw.waitState(t, "t1", mesos.TASK_RUNNING)
	fin := fw.waitState(t, "t1", mesos.TASK_FINISHED)
	if got := fw.states("t1"); len(got) < 2 || got[0] != mesos.TASK_RUNNING {
		t.Errorf("states = %v, want RUNNING then FINISHED", got)
	}
	if !strings.Contains(fin.GetMessage(), "status 0") {
		t.Errorf("FINISHED message = %q, want the exit status", fin.GetMessage())
	}
	var agent *testcluster.Agent
	for _, a := range c.Agents {
		if st, _ := agentState(a.Addr); st != nil && st["id"] == o.AgentID.Value {
			agent = a
		}
	}
	if agent == nil {
		t.Fatalf("no agent has id %s", o.AgentID.Value)
	}
	// Acknowledged: the agent forgets the task once both updates are acked.
	testcluster.WaitFor(t, 15*time.Second, "the agent to drop the acknowledged task", func() bool {
		st, err := agentState(agent.Addr)
		return err == nil && st["tasks"] == nil
	})
	testcluster.WaitFor(t, 10*time.Second, "the master to list t1 as completed", func() bool {
		for _, f := range c.state().Frameworks {
			for _, ct := range f.CompletedTasks {
				if ct.ID == "t1" && ct.State == "TASK_FINISHED" {
					return true
				}
			}
		}
		return false
	})
	out, _ := filepath.Glob(filepath.Join(agent.Dir, "slaves", "*", "frameworks", fw.ID(), "executors", "t1", "runs", "*", "stdout"))
	if len(out) != 1 {
		t.Fatalf("sandbox stdout files = %v, want one", out)
	}
	if lines := readLines(out[0]); len(lines) == 0 || lines[len(lines)-1] != "hello from allot" {
		t.Errorf("stdout = %q, want the command's output", lines)
	}
}

// A custom executor built from mesos-go's executor library runs tasks on
// both agents: one executor process per framework and executor id, LAUNCH
// events delivered to it, updates acknowledged, and framework messages
// relayed both ways.
func TestCustomExecutorOnTwoAgents(t *testing.T) {
	c := newCluster(t, 2)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "custom"})
	seen := map[string]bool{}
	for i := 0; len(seen) < 2; i++ {
		if i > 10 {
			t.Fatalf("offers came from %d agent(s), want 2", len(seen))
		}
		o := fw.takeOffer(t, "")
		if seen[o.AgentID.Value] {
			continue
		}
		seen[o.AgentID.Value] = true
		ex := execInfo("ex-" + o.AgentID.Value)
		a, b := "a-"+o.AgentID.Value, "b-"+o.AgentID.Value
		if err := fw.call(launch(o, execTask(a, o, ex, ""), execTask(b, o, ex, ""))); err != nil {
			t.Fatalf("ACCEPT: %v", err)
		}
		fw.waitState(t, a, mesos.TASK_FINISHED)
		fw.waitState(t, b, mesos.TASK_FINISHED)
		if got := fw.states(a); got[0] != mesos.TASK_RUNNING {
			t.Errorf("task %s states = %v, want RUNNING first", a, got)
		}
		if err := fw.call(messageCall(o.AgentID.Value, ex.ExecutorID.Value, "ping")); err != nil {
			t.Fatalf("MESSAGE: %v", err)
		}
		testcluster.WaitFor(t, 10*time.Second, "the executor's echo", func() bool {
			fw.mu.Lock()
			defer fw.mu.Unlock()
			for _, m := range fw.msgs {
				if string(m) == "echo:ping" {
					return true
				}
			}
			return false
		})
		fw.mu.Lock()
		fw.msgs = nil
		fw.mu.Unlock()
	}
}
