package master

import (
	"fmt"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/master/registry/registrytest"
)

// completedState is /state's completed task ids of framework fw.
func (h *harness) completedState(fw string) string {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	var ids []string
	for _, f := range h.m.stateFrameworksLocked() {
		if f.ID == fw {
			for _, t := range f.CompletedTasks {
				ids = append(ids, t.ID+":"+t.State)
			}
		}
	}
	return strings.Join(ids, " ")
}

// Completed tasks are replicated: a new leader lists the same ones, bounded
// by --max-completed-tasks-per-framework.
func TestCompletedTasksSurviveFailover(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxCompletedTasksPerFramework = 3 })
	agentID, as := h.agent("cpus:8;mem:8192")
	fw := h.framework("history")
	var tasks []mesos.TaskInfo
	for i := 0; i < 5; i++ {
		tasks = append(tasks, commandTask(fmt.Sprint("t", i), agentID, 1, 64))
	}
	if err := h.call(fw, launchCall(h.offer(fw), nil, tasks...)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		id := fmt.Sprint("t", i)
		if err := h.agentUpdate(agentID, fw.id, id, mesos.TASK_FINISHED, "u"+id); err != nil {
			t.Fatal(err)
		}
		if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_ACKNOWLEDGE, Acknowledge: &scheduler.Call_Acknowledge{
			AgentID: mesos.AgentID{Value: agentID}, TaskID: mesos.TaskID{Value: id}, UUID: []byte("u" + id)}}); err != nil {
			t.Fatal(err)
		}
		as.nextAgentEvent(t, api.AgentEventType_ACKNOWLEDGE) // sent once TASK_COMPLETE committed
	}
	const want = "t2:TASK_FINISHED t3:TASK_FINISHED t4:TASK_FINISHED"
	if got := h.completedState(fw.id); got != want {
		t.Fatalf("completed before the failover: %q, want %q", got, want)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(h.m.reg.CompletedTasks()) != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("registry completed tasks: %s, want t2-t4", registrytest.TaskIDs(h.m.reg.CompletedTasks()))
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.reelect(t)
	if got := h.completedState(fw.id); got != want {
		t.Errorf("completed after the failover: %q, want %q", got, want)
	}
}
