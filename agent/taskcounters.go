package agent

import (
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// taskEndCounts are Mesos's agent's lifetime task counters
// (slave/tasks_finished, tasks_failed, tasks_killed, tasks_lost,
// tasks_gone): the tasks whose update stream turned terminal on this agent
// process, by that state, counted once (a retried update does not count
// again). As Mesos's agent, the other terminal states are not counted, and
// a restarted agent starts at zero. Guarded by Agent.mu.
type taskEndCounts map[mesos.TaskState]float64

// agentEndedStates are the states the agent counts, as Mesos's agent does.
var agentEndedStates = []mesos.TaskState{mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_GONE}

// count records a task that turned terminal in state; the map is made on
// first use, so an Agent built without New counts too.
func (c *taskEndCounts) count(state mesos.TaskState) {
	if *c == nil {
		*c = taskEndCounts{}
	}
	(*c)[state]++
}

// snapshot adds the counters, zero where no task ended so, to out.
func (c taskEndCounts) snapshot(out map[string]float64) {
	for _, st := range agentEndedStates {
		out["slave/tasks_"+strings.ToLower(strings.TrimPrefix(st.String(), "TASK_"))] = c[st]
	}
}
