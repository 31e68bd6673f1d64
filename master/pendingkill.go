package master

// KILL as Mesos's master answers it: a task the framework no longer has
// running (unknown, ended, unreachable) is answered by explicit
// reconciliation; a task on a disconnected agent is killed when the agent
// re-registers. Every KILL is remembered on its task, as Mesos keeps its
// killed tasks per agent, because the master may not yet know that the
// agent it just sent the kill to is partitioned.

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
)

// killLocked sends a KILL to the task's agent, or keeps it for when the
// agent is back. Caller holds m.mu.
func (m *Master) killLocked(fw *framework, k *scheduler.Call_Kill) error {
	t := fw.tasks[k.TaskID.Value]
	switch {
	case t == nil || taskstate.IsTerminal(t.state):
		m.reconcileLocked(fw, &scheduler.Call_Reconcile{Tasks: []scheduler.Call_Reconcile_Task{{TaskID: k.TaskID, AgentID: k.AgentID}}})
		return nil
	case t.state == mesos.TASK_UNREACHABLE:
		// Mesos keeps such a task apart from the framework's tasks, so
		// its KILL is reconciled, not remembered.
		st := m.unknownTaskStatusLocked(fw, k.TaskID, &mesos.AgentID{Value: t.agent})
		m.sendFrameworkLocked(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
		return nil
	}
	ev := &api.AgentEvent{Type: api.AgentEventType_KILL, FrameworkId: fw.id, ExecutorId: t.executor, TaskId: t.id}
	if kp := k.GetKillPolicy(); kp != nil && kp.GracePeriod != nil {
		ev.GraceNanos = kp.GracePeriod.Nanoseconds
	}
	t.kill = ev
	if a := m.agents[t.agent]; a != nil && a.stream != nil {
		a.stream.SendProto(ev)
		return nil
	}
	m.log.Warn().Str("framework_id", fw.id).Str("task_id", t.id).Str("agent_id", t.agent).
		Msg("cannot kill the task now: its agent is disconnected; the kill is sent if the agent re-registers")
	return nil
}

// pendingKillsLocked returns the KILLs to send again to agent a as it
// re-registers: those of its tasks still running. Caller holds m.mu.
func (m *Master) pendingKillsLocked(a *agentState) []*api.AgentEvent {
	var kills []*api.AgentEvent
	for _, p := range m.tasksOnLocked(a.rec.Id) {
		if p.t.kill != nil && !taskstate.IsTerminal(p.t.state) {
			kills = append(kills, p.t.kill)
		}
	}
	return kills
}
