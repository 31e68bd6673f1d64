package agent

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// The agent's /metrics/snapshot carries Mesos's lifetime task counters,
// each task counted once in the state its update stream ended in.
func TestAgentLifetimeTaskCounters(t *testing.T) {
	a := operatorAgent(t, HTTPAuthn{}, nil)
	a.mu.Lock()
	ex := a.executors[exKey("f", "e")]
	for _, u := range []struct {
		id    string
		state mesos.TaskState
	}{{"t1", mesos.TASK_FINISHED}, {"t1", mesos.TASK_FINISHED}, {"t2", mesos.TASK_KILLED}} {
		tk := ex.tasks[u.id]
		a.enqueueUpdateLocked(ex, tk, a.agentStatus(ex, tk, u.state, mesos.REASON_COMMAND_EXECUTOR_FAILED, "over"))
	}
	a.mu.Unlock()
	got := a.mesosMetrics()
	want := map[string]float64{"slave/tasks_finished": 1, "slave/tasks_killed": 1, "slave/tasks_failed": 0, "slave/tasks_lost": 0,
		"slave/tasks_gone": 0, "slave/tasks_running": 0}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}
