package agent

import (
	"sort"

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

// lostLaunchesLocked rebuilds the launches an earlier run of this agent
// queued for ex and never sent. The queue lives in memory: an agent killed
// between starting an executor and its subscription loses it, and the
// recovered executor would wait for a task that stays TASK_STAGING for
// ever. A task is launched again when the executor does not report it,
// it was never sent, it is not queued and has not ended. Task groups are
// not rebuilt: their launch is one event for the whole group, whose
// membership the agent does not record. Caller holds a.mu.
func (a *Agent) lostLaunchesLocked(ex *executor, known map[string]bool) []*exec1.Event {
	if ex.command && !ex.commandTask {
		return nil
	}
	queued := map[string]bool{}
	for _, ev := range ex.queued {
		if ev.Launch != nil {
			queued[ev.Launch.Task.TaskID.Value] = true
		}
	}
	var ids []string
	for id, t := range ex.tasks {
		if !t.launched && !known[id] && !queued[id] && !taskstate.IsTerminal(t.state) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var out []*exec1.Event
	for _, id := range ids {
		a.log.Info().Str("task_id", id).Str("executor_id", ex.id).Msg("launch lost with the agent's last run; sending it again")
		out = append(out, &exec1.Event{Type: exec1.Event_LAUNCH, Launch: &exec1.Event_Launch{Task: ex.tasks[id].info}})
	}
	return out
}
