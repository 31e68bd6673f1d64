package master

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api/healthcheck"
)

// refusedTask is a task of an accepted offer that is not launched but
// answered TASK_ERROR, as Mesos answers a task it finds invalid. Only a
// malformed health check is refused this way: the framework learns which
// task and why from the update, while the rest of the ACCEPT goes ahead.
// (Other malformed tasks still fail the whole call with 400, as before.)
type refusedTask struct {
	id     mesos.TaskID
	reason mesos.TaskStatus_Reason
	msg    string
}

// healthRefusals returns the tasks whose health checks are invalid. In a
// task group (group), one such task refuses every task of the group with
// REASON_TASK_GROUP_INVALID: Mesos launches a group whole or not at all.
func healthRefusals(tasks []mesos.TaskInfo, group bool) []refusedTask {
	var bad []refusedTask
	for i := range tasks {
		if err := healthcheck.Validate(tasks[i].HealthCheck); err != nil {
			bad = append(bad, refusedTask{id: tasks[i].TaskID, reason: mesos.REASON_TASK_INVALID,
				msg: "Task uses invalid health check: " + err.Error()})
		}
	}
	if !group || len(bad) == 0 {
		return bad
	}
	first := bad[0]
	out := make([]refusedTask, len(tasks))
	for i := range tasks {
		out[i] = refusedTask{id: tasks[i].TaskID, reason: mesos.REASON_TASK_GROUP_INVALID,
			msg: "Task group is invalid: task '" + first.id.Value + "': " + first.msg}
	}
	return out
}

// withoutRefused returns tasks minus the refused ones.
func withoutRefused(tasks []mesos.TaskInfo, refused []refusedTask) []mesos.TaskInfo {
	if len(refused) == 0 {
		return tasks
	}
	skip := map[string]bool{}
	for _, r := range refused {
		skip[r.id.Value] = true
	}
	var out []mesos.TaskInfo
	for _, t := range tasks {
		if !skip[t.TaskID.Value] {
			out = append(out, t)
		}
	}
	return out
}

// refuseLocked sends fw a TASK_ERROR from the master for each refused
// task. The update carries no uuid: there is nothing to acknowledge, the
// task never existed. Caller holds m.mu.
func (m *Master) refuseLocked(fw *framework, agentID string, refused []refusedTask) {
	for _, r := range refused {
		now := float64(m.clock.Now().UnixNano()) / 1e9
		st := mesos.TaskStatus{TaskID: r.id, State: mesos.TASK_ERROR.Enum(), Source: mesos.SOURCE_MASTER.Enum(),
			Reason: r.reason.Enum(), Message: strPtr(r.msg), AgentID: &mesos.AgentID{Value: agentID}, Timestamp: &now}
		m.sendFrameworkLocked(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
	}
}
