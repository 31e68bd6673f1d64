package agent

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	exec1 "github.com/mesos/mesos-go/api/v1/lib/executor"

	"github.com/allot-sched/allot/api/taskstate"
)

// droppedAfterTerminalLocked drops an executor's update for a task whose
// update stream has already ended in a terminal state, and acknowledges it
// to the executor so that it stops holding it. Such an update is older
// than the terminal one: an executor that re-subscribes after an agent
// restart resends every update it has not seen acknowledged, and a RUNNING
// whose acknowledgement the restart lost would otherwise follow the task's
// FINISHED to the framework, make the task live again here, and end it
// FAILED when the executor exits. As Mesos's status update manager, the
// first terminal update ends the stream. Caller holds a.mu.
func (a *Agent) droppedAfterTerminalLocked(ex *executor, t *agentTask, st *mesos.TaskStatus) bool {
	if !taskstate.IsTerminal(t.state) {
		return false
	}
	a.log.Debug().Str("task_id", t.info.TaskID.Value).Str("state", st.GetState().String()).Str("terminal", t.state.String()).Msg("executor update after the task's terminal state dropped")
	if ex.stream != nil {
		ex.stream.Send(&exec1.Event{Type: exec1.Event_ACKNOWLEDGED, Acknowledged: &exec1.Event_Acknowledged{TaskID: t.info.TaskID, UUID: st.UUID}})
	}
	return true
}
