package main

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Every verb that reports on or acts on a cluster takes --json (its
// --help lists it), so that scripts never scrape a table. A verb added
// later fails here until it takes --json or is exempted with its reason.
func TestEveryVerbTakesJSON(t *testing.T) {
	exempt := map[string]string{
		"master":           "a long-running process, not a report",
		"executor":         "started by agents",
		"container-launch": "started by agents",
		"dev":              "a foreground cluster",
		"completion":       "prints a shell script",
	}
	// Verbs with subverbs are checked subverb by subverb.
	subverbs := map[string][]string{
		"agent":       {"drain", "reactivate"},
		"operator":    {"raft list-peers", "raft add-voter", "raft remove-peer", "raft transfer-leadership", "snapshot save", "snapshot restore", "policy show", "sorter get", "sorter set"},
		"maintenance": {"schedule", "status", "start", "stop"},
		"quota":       {"get", "set"},
		"experiment":  {"psdsf-table1"},
	}
	var names []string
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := exempt[name]; ok {
			continue
		}
		paths := []string{name}
		if subs, ok := subverbs[name]; ok {
			paths = nil
			for _, s := range subs {
				paths = append(paths, name+" "+s)
			}
		}
		for _, p := range paths {
			var out bytes.Buffer
			run(append(strings.Fields(p), "--help"), &out, &out)
			if !strings.Contains(out.String(), "-json") {
				t.Errorf("allot %s --help lists no --json:\n%s", p, out.String())
			}
		}
	}
}

// allot run --json's document: the task's end and allot run's exit code.
func TestRunResultJSON(t *testing.T) {
	msg := "Command exited with status 3"
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: "allot-run-1"}, AgentID: &mesos.AgentID{Value: "a-S1"},
		State: mesos.TASK_FAILED.Enum(), Message: &msg, Reason: mesos.REASON_COMMAND_EXECUTOR_FAILED.Enum()}
	var out bytes.Buffer
	if err := printRunResult(&out, "fw-1", st, taskExit(st)); err != nil {
		t.Fatal(err)
	}
	var r runResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.ExitCode == nil || *r.ExitCode != 3 || r.State != "TASK_FAILED" ||
		r.Reason != "REASON_COMMAND_EXECUTOR_FAILED" || r.AgentID != "a-S1" || r.FrameworkID != "fw-1" {
		t.Errorf("allot run --json printed %s (%v)", out.String(), err)
	}
}
