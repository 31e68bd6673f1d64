package agent

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
)

// refuseUnsupportedLocked fails every task of o with TASK_FAILED
// (REASON_CONTAINER_LAUNCH_FAILED) when it or its executor asks for a
// container allot cannot provide (the DOCKER containerizer, an image on
// the default executor, networks on a task of a group), and reports
// whether it did. The master refuses
// the DOCKER containerizer first; this keeps
// an agent from running one on its host as if it had not asked, whatever
// sent it. The tasks' updates ride on the executor's record under key,
// made (never launched) when there is none. Caller holds a.mu.
func (a *Agent) refuseUnsupportedLocked(key string, o *runOrder) bool {
	msg := api.UnsupportedContainer("Executor", o.exInfo.Container)
	for i := 0; msg == "" && i < len(o.tasks); i++ {
		msg = api.UnsupportedContainer("Task", o.tasks[i].Container)
	}
	if msg == "" {
		msg = unsupportedImage(o) // container_image.go
	}
	if msg == "" {
		msg = networkRefusal(o) // container_network.go
	}
	if msg == "" {
		return false
	}
	ex := a.executors[key]
	if ex == nil {
		ex = &executor{fw: o.exInfo.FrameworkID.GetValue(), id: o.exInfo.ExecutorID.Value, info: o.exInfo, fwInfo: o.fwInfo,
			exited: true, tasks: map[string]*agentTask{}}
		a.executors[key] = ex
	}
	a.log.Warn().Str("executor_id", ex.id).Str("why", msg).Msg("RUN refused")
	for _, ti := range o.tasks {
		a.newTaskFailed(ex, ti, mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED, msg)
	}
	return true
}
