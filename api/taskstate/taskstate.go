package taskstate

import mesos "github.com/mesos/mesos-go/api/v1/lib"

// IsTerminal says whether a task in state s is finished for good: its
// resources are released and no later update may move it back to a
// running state. The set is Mesos's protobuf::isTerminalState.
//
// TASK_UNREACHABLE is not terminal (the agent may come back and the task
// with it), nor is TASK_UNKNOWN (the master has no record, which says
// nothing about the task itself); TASK_KILLING is a task still running.
func IsTerminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR,
		mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR:
		return true
	}
	return false
}
