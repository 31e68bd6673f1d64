package integration

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/internal/shortid"
	"github.com/allot-sched/allot/internal/testcluster"
)

// allotJSON runs an allot verb with --json and decodes its stdout into v;
// it fails the test if the verb fails or its output does not parse.
func allotJSON(t testing.TB, v any, args ...string) {
	t.Helper()
	cmd := exec.Command(allotBin, append(args, "--json")...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("allot %s --json: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("allot %s --json does not parse: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// detach starts `allot run --detach -- command...` and returns the task id
// it prints on stdout once the task runs.
func detach(t testing.TB, masters string, command ...string) string {
	t.Helper()
	cmd := exec.Command(allotBin, append([]string{"run", "--detach", "--master", masters, "--"}, command...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("allot run --detach: %v\n%s%s", err, out, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// shortTaskID is the short form of task id that `allot tasks` prints.
func shortTaskID(t testing.TB, masters, id string) string {
	var tasks []operator.Task
	allotJSON(t, &tasks, "tasks", "--master", masters)
	var ids []string
	for _, tk := range tasks {
		ids = append(ids, tk.ID)
	}
	table := allot(t, "tasks", "--master", masters)
	short := shortid.Short(id, ids)
	if short == id || !strings.Contains(table, "\n"+short+" ") {
		t.Fatalf("allot tasks does not list task %s by its short form %q:\n%s", id, short, table)
	}
	return short
}

// completedRuns is what `allot frameworks --completed` lists of the
// `allot run` frameworks: task command name -> its one task.
func completedRuns(t testing.TB, masters string) map[string]operator.Task {
	var fws []operator.Framework
	allotJSON(t, &fws, "frameworks", "--completed", "--master", masters)
	out := map[string]operator.Task{}
	for _, f := range fws {
		if strings.HasPrefix(f.Name, "allot run: ") && len(f.CompletedTasks) == 1 {
			out[f.Name] = f.CompletedTasks[0]
		}
	}
	return out
}

// historyOK says what is wrong with a finished task's state history ("" if
// nothing): it ran, then ended in state with message.
func historyOK(tk operator.Task, state, message string) string {
	var states []string
	for _, s := range tk.Statuses {
		states = append(states, s.State)
	}
	if len(tk.Statuses) < 2 || tk.State != state {
		return "history " + strings.Join(states, ",") + ", want it ran then ended " + state
	}
	last := tk.Statuses[len(tk.Statuses)-1]
	if last.State != state || last.Message != message || last.Timestamp < tk.Statuses[0].Timestamp || tk.Statuses[0].Timestamp == 0 {
		return "last status " + last.State + " " + last.Message + ", want " + state + " " + message + " with times"
	}
	return ""
}

// Finished work stays listed: two `allot run` frameworks, one failing
// (exit 3) and one succeeding, are listed by `allot frameworks
// --completed` with their names, and their tasks by `allot tasks` and
// `allot task` with their state history and reason, on the leader and,
// after it is killed -9, on the next one (the registry replicates them).
// Then `allot run --detach` and `allot kill` end a task TASK_KILLED, and
// `allot teardown` ends another's framework, its task TASK_KILLED for
// REASON_FRAMEWORK_REMOVED.
func TestCompletedHistoryAndActionsFromCLI(t *testing.T) {
	c := newMCluster(t, 3, 1)
	masters := strings.Join(c.seeds(), ",")
	c.leader(30 * time.Second)
	var exit *exec.ExitError
	if out, err := exec.Command(allotBin, "run", "--master", masters, "--", "sh", "-c", "exit 3").CombinedOutput(); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("allot run -- sh -c 'exit 3': %v, want exit 3\n%s", err, out)
	}
	allot(t, "run", "--master", masters, "--", "true")
	const failed, ok = "allot run: sh -c exit 3", "allot run: true"
	check := func(when string) {
		t.Helper()
		var runs map[string]operator.Task
		testcluster.WaitFor(t, 30*time.Second, when+": both allot run frameworks completed", func() bool {
			runs = completedRuns(t, masters)
			return runs[failed].ID != "" && runs[ok].ID != ""
		})
		if msg := historyOK(runs[failed], "TASK_FAILED", "Command exited with status 3"); msg != "" {
			t.Errorf("%s: the failed task: %s", when, msg)
		}
		if msg := historyOK(runs[ok], "TASK_FINISHED", "Command exited with status 0"); msg != "" {
			t.Errorf("%s: the successful task: %s", when, msg)
		}
		var one operator.Task
		allotJSON(t, &one, "task", runs[failed].ID, "--framework", runs[failed].FrameworkID, "--master", masters)
		if msg := historyOK(one, "TASK_FAILED", "Command exited with status 3"); msg != "" {
			t.Errorf("%s: allot task: %s", when, msg)
		}
		var tasks []operator.Task
		allotJSON(t, &tasks, "tasks", "--state", "failed", "--master", masters)
		table := allot(t, "tasks", "--master", masters)
		if len(tasks) == 0 || !strings.Contains(table, "COMMAND_EXECUTOR_FAILED: Command exited with status 3") {
			t.Errorf("%s: allot tasks lists %d failed tasks and no reason:\n%s", when, len(tasks), table)
		}
	}
	check("the first leader")
	old := c.leader(10 * time.Second)
	c.kill9(old)
	if lead := c.leader(30 * time.Second); lead == old {
		t.Fatalf("master %d still leads after kill -9", old)
	}
	check("after the leader's kill -9")

	// The actions take ids in the short form the tables print.
	id := detach(t, masters, "sleep", "600")
	var killed map[string]string
	allotJSON(t, &killed, "kill", shortTaskID(t, masters, id), "--master", masters, "--timeout", "60s")
	if killed["state"] != "TASK_KILLED" || killed["task_id"] != id {
		t.Fatalf("allot kill %s: %v, want %s TASK_KILLED", shortTaskID(t, masters, id), killed, id)
	}
	id = detach(t, masters, "sleep", "600")
	var tk operator.Task
	allotJSON(t, &tk, "task", shortTaskID(t, masters, id), "--master", masters)
	var fws []operator.Framework
	allotJSON(t, &fws, "frameworks", "--master", masters)
	var fwIDs []string
	for _, f := range fws {
		fwIDs = append(fwIDs, f.ID)
	}
	var down map[string]any
	allotJSON(t, &down, "teardown", shortid.Short(tk.FrameworkID, fwIDs), "--master", masters)
	if down["framework_id"] != tk.FrameworkID {
		t.Fatalf("allot teardown %s tore down %v, want %s", shortid.Short(tk.FrameworkID, fwIDs), down["framework_id"], tk.FrameworkID)
	}
	testcluster.WaitFor(t, 30*time.Second, "the torn-down framework's task listed TASK_KILLED", func() bool {
		allotJSON(t, &tk, "task", id, "--framework", tk.FrameworkID, "--master", masters)
		last := tk.Statuses[len(tk.Statuses)-1]
		return tk.State == "TASK_KILLED" && last.Reason == "REASON_FRAMEWORK_REMOVED"
	})
}
