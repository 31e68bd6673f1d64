package master

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
)

// A task's end is final. Once its framework was told a terminal state
// (TASK_LOST when its agent was removed, say), no later update of that task
// reaches the framework: Mesos's master keeps a removed agent's tasks lost
// and its agent refuses further transitions of a terminal task. The rules
// below hold whatever the agents do:
//
//   - a REGISTER with a removed agent's id is refused 410 (agentproto.go);
//     the agent shuts its executors down and registers afresh, as Mesos's
//     agent does on "agent attempted to re-register after removal";
//   - a task a re-registering agent reports but whose end the framework
//     already heard is killed there and not taken back (killOverTaskLocked);
//   - an update of a task already over is acknowledged to the agent, so it
//     stops retrying, and not forwarded (updateOfTaskOverLocked).

// killOverTaskLocked tells agent a to kill a task it reported that is over
// in the master. Caller holds m.mu.
func (m *Master) killOverTaskLocked(a *agentState, fwID string, tr *api.TaskRecord) {
	m.log.Warn().Str("agent_id", a.rec.Id).Str("framework_id", fwID).Str("task_id", tr.TaskId).
		Msg("agent reports a task whose end its framework already heard; killing it there")
	if taskstate.IsTerminal(mesos.TaskState(tr.State)) {
		return
	}
	a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_KILL, FrameworkId: fwID, ExecutorId: tr.ExecutorId, TaskId: tr.TaskId})
}

// updateOfTaskOverLocked reports whether st is an update of a task already
// over for fw: a completed task, or one whose terminal update fw was sent
// and st is not (a retry of that same update, same uuid, is forwarded
// again: the framework may not have it yet). Such an update is
// acknowledged to the agent and counted. Caller holds m.mu.
func (m *Master) updateOfTaskOverLocked(a *agentState, fw *framework, st *mesos.TaskStatus) bool {
	id := st.TaskID.Value
	over := false
	if t := fw.tasks[id]; t != nil {
		over = t.final && string(t.finalUUID) != string(st.UUID)
	} else {
		over = m.completed.get(fw.id, id) != nil
	}
	if !over {
		return false
	}
	m.m.invalidUpdates.Inc()
	m.log.Warn().Str("agent_id", a.rec.Id).Str("framework_id", fw.id).Str("task_id", id).Str("state", st.GetState().String()).
		Msg("status update of a task already over; acknowledged to the agent, not forwarded")
	if len(st.UUID) > 0 && a.stream != nil {
		a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_ACKNOWLEDGE, FrameworkId: fw.id, TaskId: id, Uuid: st.UUID})
	}
	return true
}
