package main

import (
	"errors"
	"io"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// runResult is what allot run --json prints on stdout: with --detach the
// task's id once it runs; else, the task's own output having gone to
// stderr so that stdout stays one JSON document, how it ended.
type runResult struct {
	TaskID      string `json:"task_id"`
	FrameworkID string `json:"framework_id,omitempty"`
	AgentID     string `json:"agent_id,omitempty"`
	State       string `json:"state,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Message     string `json:"message,omitempty"`
	// ExitCode is allot run's own exit code (the command's, for
	// TASK_FAILED); absent with --detach.
	ExitCode *int `json:"exit_code,omitempty"`
}

// printRunResult prints framework fw's task's terminal status st and the
// exit code exit (taskExit's) allot run makes for it.
func printRunResult(w io.Writer, fw string, st mesos.TaskStatus, exit error) error {
	code := 0
	var ec exitCode
	if errors.As(exit, &ec) {
		code = int(ec)
	}
	r := runResult{TaskID: st.TaskID.Value, FrameworkID: fw, AgentID: st.GetAgentID().GetValue(), State: st.GetState().String(),
		Message: st.GetMessage(), ExitCode: &code}
	if st.Reason != nil {
		r.Reason = st.GetReason().String()
	}
	return printJSON(w, r)
}
