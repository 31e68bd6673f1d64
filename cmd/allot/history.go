package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/master"
)

// What finished and how, and the two ways to act on work: the master keeps
// completed frameworks and each task's state history (Mesos's
// completed_frameworks and Task.statuses), and an operator may kill one
// task or tear a whole framework down.

func init() {
	register(command{name: "task", summary: "one task and its state history: when, state, source, reason, message", run: runTaskVerb})
	register(command{name: "kill", summary: "kill a task as its framework would (TASK_KILLED)", run: runKill})
	register(command{name: "teardown", summary: "tear a framework down: its tasks are killed and it is removed", run: runTeardown})
}

// killPoll is how often `allot kill` looks whether the task has ended.
const killPoll = 200 * time.Millisecond

// printCompletedFrameworks lists /state's completed_frameworks: the
// frameworks that ended whose tasks the master keeps.
func printCompletedFrameworks(st *operator.State, c *cliFlags, stdout io.Writer) error {
	if c.json {
		return printJSON(stdout, st.CompletedFrameworks)
	}
	ids := statePrinter(st, c.fullIDs)
	tb := newTable(stdout, "ID", "NAME", "ROLE", "TASKS", "FINISHED", "FAILED", "KILLED", "OTHER", "ENDED")
	for _, f := range st.CompletedFrameworks {
		n := map[string]int{}
		var ended float64
		for _, t := range f.CompletedTasks {
			n[t.State]++
			if _, end := taskTimes(t); end > ended {
				ended = end
			}
		}
		other := len(f.CompletedTasks) - n["TASK_FINISHED"] - n["TASK_FAILED"] - n["TASK_KILLED"]
		tb.row(ids.id(kindFramework, f.ID), orDash(f.Name), orDash(f.Role), strconv.Itoa(len(f.CompletedTasks)),
			strconv.Itoa(n["TASK_FINISHED"]), strconv.Itoa(n["TASK_FAILED"]), strconv.Itoa(n["TASK_KILLED"]), strconv.Itoa(other), fmtStamp(ended))
	}
	return tb.flush()
}

// taskTimes are when the task started (its first TASK_STARTING or
// TASK_RUNNING) and when it ended (its terminal status), 0 if not known.
func taskTimes(t operator.Task) (start, end float64) {
	for _, s := range t.Statuses {
		if start == 0 && (s.State == "TASK_STARTING" || s.State == "TASK_RUNNING") {
			start = s.Timestamp
		}
		if isTerminalName(s.State) && end == 0 {
			end = s.Timestamp
		}
	}
	return start, end
}

// lastStatus is the task's newest history entry.
func lastStatus(t operator.Task) operator.TaskStatus {
	if len(t.Statuses) == 0 {
		return operator.TaskStatus{State: t.State}
	}
	return t.Statuses[len(t.Statuses)-1]
}

// fmtStamp writes a /state timestamp (Unix seconds) in UTC, "-" for none.
func fmtStamp(s float64) string {
	if s <= 0 {
		return "-"
	}
	return time.Unix(0, int64(s*1e9)).UTC().Format("2006-01-02 15:04:05Z")
}

// frameworkIDs lists the ids of the live frameworks and, with completed,
// of the completed ones too.
func frameworkIDs(st *operator.State, completed bool) []string {
	var ids []string
	for _, f := range st.Frameworks {
		ids = append(ids, f.ID)
	}
	if completed {
		for _, f := range st.CompletedFrameworks {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// findTaskOf resolves a task id (its short form, or any unique end or
// beginning) among tasks, of the framework fw (likewise; "" for any).
func findTaskOf(st *operator.State, tasks []operator.Task, id, fw string) (operator.Task, error) {
	if fw != "" {
		full, err := resolveID(kindFramework, fw, knownIDs(st, kindFramework))
		if err != nil {
			return operator.Task{}, err
		}
		var of []operator.Task
		for _, t := range tasks {
			if t.FrameworkID == full {
				of = append(of, t)
			}
		}
		tasks = of
	}
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	full, err := resolveID(kindTask, id, ids)
	if err != nil {
		return operator.Task{}, err
	}
	for _, t := range tasks {
		if t.ID == full {
			return t, nil
		}
	}
	return operator.Task{}, fmt.Errorf("no task %q", id)
}

// taskArgs parses the arguments of a verb that names one task, TASK
// [--framework FW], and fetches the leader's /state.
func taskArgs(name, description string, args []string, stderr io.Writer) (c *cliFlags, st *operator.State, task, fw string, err error) {
	fs, c := newCLIFlags(name, "TASK [--framework FW] [flags]", description+" Ids in their short form\n(or any unique end or beginning) will do.", stderr)
	fs.StringVar(&fw, "framework", "", "the task's framework `FW`, where several frameworks have a task of that id")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, nil, "", "", err
	}
	if len(pos) != 1 {
		return nil, nil, "", "", usagef("usage: allot %s TASK [--framework FW] (allot tasks lists the ids)", name)
	}
	st, err = c.state()
	return c, st, pos[0], fw, err
}

// runTaskVerb prints one task and its state history, its ids whole: this
// is the page to copy them from.
func runTaskVerb(args []string, stdout, stderr io.Writer) error {
	c, st, id, fw, err := taskArgs("task", "Print one task, live or finished, and its state history: each status the master\napplied, with its time, source, reason and message.", args, stderr)
	if err != nil {
		return err
	}
	t, err := findTaskOf(st, allTasks(st), id, fw)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(stdout, t)
	}
	last := lastStatus(t)
	start, end := taskTimes(t)
	tb := newTable(stdout)
	for _, kv := range [][2]string{{"ID", t.ID}, {"NAME", orDash(t.Name)}, {"FRAMEWORK", t.FrameworkID}, {"AGENT", t.SlaveID},
		{"STATE", t.State}, {"REASON", orDash(last.Reason)}, {"MESSAGE", orDash(last.Message)}, {"STARTED", fmtStamp(start)}, {"ENDED", fmtStamp(end)}} {
		tb.row(kv[0], kv[1])
	}
	for _, kv := range taskContainerRows(c, st, t) { // task_container.go
		tb.row(kv[0], kv[1])
	}
	tb.row()
	tb.row("TIME", "STATE", "SOURCE", "REASON", "MESSAGE")
	for _, s := range t.Statuses {
		tb.row(fmtStamp(s.Timestamp), s.State, orDash(strings.TrimPrefix(s.Source, "SOURCE_")), orDash(s.Reason), orDash(s.Message))
	}
	return tb.flush()
}

// runKill kills a live task through the master (master.KillPath) and waits
// until the master reports it ended.
func runKill(args []string, stdout, stderr io.Writer) error {
	c, st, id, fw, err := taskArgs("kill", "Kill a running task as its framework's KILL would: the agent kills it under the task's\nkill policy and the framework receives TASK_KILLED. Waits (up to --timeout) until the\nmaster reports the task ended. Needs the kill_tasks ACL.", args, stderr)
	if err != nil {
		return err
	}
	var live []operator.Task
	for _, f := range st.Frameworks {
		for _, t := range f.Tasks {
			if !isTerminalName(t.State) {
				live = append(live, t)
			}
		}
	}
	t, err := findTaskOf(st, live, id, fw)
	if err != nil {
		if done, derr := findTaskOf(st, allTasks(st), id, fw); derr == nil {
			return fmt.Errorf("task %s of framework %s is already %s", done.ID, done.FrameworkID, done.State)
		}
		return err
	}
	body, _ := json.Marshal(master.KillRequest{FrameworkID: t.FrameworkID, TaskID: t.ID})
	if _, err := call(c.client(), c.masters, http.MethodPost, master.KillPath, body); err != nil {
		return err
	}
	state, err := waitTaskEnded(c, t)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(stdout, map[string]string{"framework_id": t.FrameworkID, "task_id": t.ID, "state": state})
	}
	fmt.Fprintf(stdout, "task %s of framework %s: %s\n", t.ID, t.FrameworkID, state)
	return nil
}

// waitTaskEnded polls /state until task t is terminal, for up to
// --timeout, and returns its state.
func waitTaskEnded(c *cliFlags, t operator.Task) (string, error) {
	state := t.State
	for deadline := time.Now().Add(c.timeout); ; time.Sleep(killPoll) {
		if st, err := c.state(); err == nil {
			for _, now := range allTasks(st) {
				if now.ID == t.ID && now.FrameworkID == t.FrameworkID {
					state = now.State
				}
			}
		}
		if isTerminalName(state) {
			return state, nil
		}
		if time.Now().After(deadline) {
			return state, fmt.Errorf("killed task %s, but it is still %s after %v (a kill policy's grace period may be longer: see allot task %s)", t.ID, state, c.timeout, t.ID)
		}
	}
}

// runTeardown tears a framework down with the operator API's TEARDOWN.
func runTeardown(args []string, stdout, stderr io.Writer) error {
	fs, c := newCLIFlags("teardown", "FRAMEWORK [flags]", "Tear a framework down (the operator API's TEARDOWN): its tasks are killed, its offers\nrescinded, and it is removed; its tasks stay listed under allot frameworks --completed.\nNeeds the teardown_frameworks ACL. Its id's short form (or any unique end or beginning) will do.", stderr)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: allot teardown FRAMEWORK (allot frameworks lists the ids)")
	}
	st, err := c.state()
	if err != nil {
		return err
	}
	id, err := resolveID(kindFramework, pos[0], frameworkIDs(st, false))
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"type": "TEARDOWN", "teardown": map[string]any{"framework_id": map[string]string{"value": id}}})
	if _, err := call(c.client(), c.masters, http.MethodPost, "/api/v1", body); err != nil {
		return err
	}
	if c.json {
		return printJSON(stdout, map[string]any{"framework_id": id, "torn_down": true})
	}
	fmt.Fprintf(stdout, "framework %s torn down\n", id)
	return nil
}

// reasonOf is why a finished task ended: its last status's reason and
// message; "-" for a live task.
func reasonOf(t operator.Task) string {
	if !isTerminalName(t.State) {
		return "-"
	}
	last := lastStatus(t)
	switch {
	case last.Reason != "" && last.Message != "":
		return strings.TrimPrefix(last.Reason, "REASON_") + ": " + last.Message
	case last.Message != "":
		return last.Message
	}
	return orDash(strings.TrimPrefix(last.Reason, "REASON_"))
}
