package taskstate

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func TestIsTerminal(t *testing.T) {
	tests := []struct {
		state mesos.TaskState
		want  bool
	}{
		{mesos.TASK_STAGING, false},
		{mesos.TASK_STARTING, false},
		{mesos.TASK_RUNNING, false},
		{mesos.TASK_KILLING, false},
		{mesos.TASK_UNREACHABLE, false},
		{mesos.TASK_UNKNOWN, false},
		{mesos.TASK_FINISHED, true},
		{mesos.TASK_FAILED, true},
		{mesos.TASK_KILLED, true},
		{mesos.TASK_ERROR, true},
		{mesos.TASK_LOST, true},
		{mesos.TASK_DROPPED, true},
		{mesos.TASK_GONE, true},
		{mesos.TASK_GONE_BY_OPERATOR, true},
	}
	seen := map[mesos.TaskState]bool{}
	for _, tc := range tests {
		seen[tc.state] = true
		if got := IsTerminal(tc.state); got != tc.want {
			t.Errorf("IsTerminal(%s) = %v, want %v", tc.state, got, tc.want)
		}
	}
	// A state mesos-go adds later must be classified here on purpose, not
	// fall through to "not terminal" unnoticed.
	for v, name := range mesos.TaskState_name {
		if !seen[mesos.TaskState(v)] {
			t.Errorf("state %s (%d) is missing from the table", name, v)
		}
	}
	// A value outside the enum (a newer peer's state decoded by an older
	// binary) is not terminal: the task is left alone rather than forgotten.
	if IsTerminal(mesos.TaskState(999)) {
		t.Errorf("IsTerminal(999) = true, want false")
	}
}
