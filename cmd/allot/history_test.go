package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/master"
)

// historyMaster is a master's /state with a live framework (fw-live, one
// running task) and a completed one (wordcount: a failed and a finished
// task), and the two action endpoints; a kill ends the task TASK_KILLED.
type historyMaster struct {
	mu     sync.Mutex
	killed bool
	calls  []string // the action bodies received
}

func (m *historyMaster) state() operator.State {
	run := operator.Task{ID: "t-run", Name: "sleep", FrameworkID: "fw-live", SlaveID: "S1", State: "TASK_RUNNING",
		Statuses: []operator.TaskStatus{{State: "TASK_RUNNING", Timestamp: 1_700_000_000, Source: "SOURCE_EXECUTOR"}}}
	if m.killed {
		run.State = "TASK_KILLED"
		run.Statuses = append(run.Statuses, operator.TaskStatus{State: "TASK_KILLED", Timestamp: 1_700_000_060, Source: "SOURCE_EXECUTOR", Reason: "REASON_COMMAND_EXECUTOR_FAILED"})
	}
	live := operator.Framework{ID: "fw-live", Name: "allot-run", Tasks: []operator.Task{run}, CompletedTasks: []operator.Task{}}
	if m.killed {
		live.Tasks, live.CompletedTasks = []operator.Task{}, []operator.Task{run}
	}
	done := operator.Framework{ID: "fw-done", Name: "wordcount", Role: "*", Tasks: []operator.Task{}, CompletedTasks: []operator.Task{
		{ID: "t-fail", FrameworkID: "fw-done", SlaveID: "S1", State: "TASK_FAILED", Statuses: []operator.TaskStatus{
			{State: "TASK_RUNNING", Timestamp: 1_700_000_100, Source: "SOURCE_EXECUTOR"},
			{State: "TASK_FAILED", Timestamp: 1_700_000_103, Source: "SOURCE_EXECUTOR", Reason: "REASON_COMMAND_EXECUTOR_FAILED", Message: "Command exited with status 3"}}},
		{ID: "t-ok", FrameworkID: "fw-done", SlaveID: "S1", State: "TASK_FINISHED", Statuses: []operator.TaskStatus{
			{State: "TASK_RUNNING", Timestamp: 1_700_000_100, Source: "SOURCE_EXECUTOR"},
			{State: "TASK_FINISHED", Timestamp: 1_700_000_101, Source: "SOURCE_EXECUTOR", Reason: "REASON_COMMAND_EXECUTOR_FAILED", Message: "Command exited with status 0"}}},
	}}
	return operator.State{Frameworks: []operator.Framework{live}, CompletedFrameworks: []operator.Framework{done}}
}

func (m *historyMaster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch r.URL.Path {
	case "/state":
		json.NewEncoder(w).Encode(m.state())
	case master.KillPath, "/api/v1":
		b, _ := io.ReadAll(r.Body)
		m.calls = append(m.calls, string(b))
		if r.URL.Path == master.KillPath {
			m.killed = true
			w.WriteHeader(http.StatusAccepted)
		}
	default:
		http.NotFound(w, r)
	}
}

func TestHistoryVerbs(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     []string // in stdout (or, with err, the error)
		err      bool
		jsonInto any    // with --json: decodes stdout
		call     string // the action body the master got
	}{
		{name: "completed frameworks", args: []string{"frameworks", "--completed"}, want: []string{"fw-done", "wordcount", "2023-11-14 22:15:03Z"}},
		{name: "completed frameworks json", args: []string{"frameworks", "--completed", "--json"}, jsonInto: &[]operator.Framework{}, want: []string{`"name": "wordcount"`}},
		{name: "tasks with reasons and times", args: []string{"tasks"}, want: []string{"t-fail", "COMMAND_EXECUTOR_FAILED: Command exited with status 3", "2023-11-14 22:15:00Z", "t-run"}},
		{name: "tasks of a completed framework", args: []string{"tasks", "--framework", "fw-d", "--json"}, jsonInto: &[]operator.Task{}, want: []string{`"t-ok"`, `"statuses"`}},
		{name: "one task's history", args: []string{"task", "t-f"}, want: []string{"MESSAGE    Command exited with status 3", "TASK_RUNNING", "EXECUTOR  REASON_COMMAND_EXECUTOR_FAILED  Command exited with status 3"}},
		{name: "one task json", args: []string{"task", "t-fail", "--json"}, jsonInto: &operator.Task{}, want: []string{`"reason": "REASON_COMMAND_EXECUTOR_FAILED"`}},
		{name: "kill", args: []string{"kill", "t-run"}, want: []string{"task t-run of framework fw-live: TASK_KILLED"}, call: `{"framework_id":"fw-live","task_id":"t-run"}`},
		{name: "kill json", args: []string{"kill", "t-r", "--framework", "fw-l", "--json"}, jsonInto: &map[string]string{}, want: []string{`"state": "TASK_KILLED"`}},
		{name: "kill a finished task", args: []string{"kill", "t-fail"}, err: true, want: []string{"already TASK_FAILED"}},
		{name: "kill of another framework", args: []string{"kill", "t-run", "--framework", "fw-done"}, err: true, want: []string{`no task "t-run"`}},
		{name: "kill without a task", args: []string{"kill"}, err: true, want: []string{"usage: allot kill TASK"}},
		{name: "teardown", args: []string{"teardown", "fw-l", "--json"}, jsonInto: &map[string]any{}, want: []string{`"torn_down": true`},
			call: `{"teardown":{"framework_id":{"value":"fw-live"}},"type":"TEARDOWN"}`},
		{name: "teardown of a completed framework", args: []string{"teardown", "fw-done"}, err: true, want: []string{`did you mean "fw-live"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm := &historyMaster{}
			out, err := runAgainst(t, fm, tt.args) // table_test.go
			got := out
			if tt.err {
				if err == nil {
					t.Fatalf("no error; stdout %q", got)
				}
				got = err.Error()
			} else if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			if tt.jsonInto != nil {
				if err := json.Unmarshal([]byte(out), tt.jsonInto); err != nil {
					t.Errorf("--json does not parse: %v\n%s", err, out)
				}
			}
			if tt.call != "" && (len(fm.calls) != 1 || fm.calls[0] != tt.call) {
				t.Errorf("the master got %q, want %q", fm.calls, tt.call)
			}
		})
	}
}
