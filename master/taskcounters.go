package master

import (
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/prometheus/client_golang/prometheus"
)

// Mesos's lifetime task counters (master/tasks_finished, tasks_failed,
// ...): how many tasks this master has seen turn terminal, by the state
// they ended in, since it started. Mesos counts where its master moves a
// task to a terminal state: an agent's update, a task the master ends
// itself (lost with its agent, gone by the operator) and the tasks of an
// ACCEPT it never launches (TASK_ERROR, or TASK_LOST/TASK_DROPPED for
// invalid offers). Like Mesos's, the counters are the process's, not the
// cluster's: a new leader starts at zero.

// endedTaskStates are the states with a lifetime counter, Mesos's terminal
// states.
var endedTaskStates = []mesos.TaskState{mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST,
	mesos.TASK_ERROR, mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR}

const tasksEndedName = "allot_master_tasks_ended_total"

func newTasksEndedCounter(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: tasksEndedName,
		Help: "Tasks that turned terminal on this master, by the state they ended in (Mesos's master/tasks_<state>)."}, []string{"state"})
	reg.MustRegister(c)
	return c
}

// taskEndCountLocked counts a task that just turned terminal in state.
// Caller holds m.mu.
func (m *Master) taskEndCountLocked(state mesos.TaskState) {
	m.m.tasksEnded.WithLabelValues(state.String()).Inc()
}

// snapshotName is the master/... or slave/... name of state's counter
// (TASK_GONE_BY_OPERATOR: tasks_gone_by_operator).
func snapshotName(prefix string, state mesos.TaskState) string {
	return prefix + "/tasks_" + strings.ToLower(strings.TrimPrefix(state.String(), "TASK_"))
}

// taskEndSnapshot is the snapshot name and value of the gathered counter
// of tasks ended in the state labelled stateLabel, or ok false.
func taskEndSnapshot(stateLabel string, v float64) (name string, value float64, ok bool) {
	st, ok := mesos.TaskState_value[stateLabel]
	if !ok {
		return "", 0, false
	}
	return snapshotName("master", mesos.TaskState(st)), v, true
}
