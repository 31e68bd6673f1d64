package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/allot-sched/allot/master"
)

// operatorJSON answers the operator verbs that read or switch something
// with --json: the master's own JSON answer, indented. It reports handled
// false for the verbs whose usual output already is the answer (snapshot
// save writes a file; raft changes and restores print a sentence), which
// then run as without --json after their flags and arguments are checked
// the usual way.
func operatorJSON(cli *http.Client, f *operatorFlags, verb string, rest []string, stdout io.Writer) (bool, error) {
	var b []byte
	var err error
	switch verb {
	case "raft list-peers":
		b, err = call(cli, f.masters, http.MethodGet, master.RaftPath, nil)
	case "policy show":
		b, err = call(cli, f.masters, http.MethodGet, master.PolicyPath, nil)
	case "sorter get":
		b, err = call(cli, f.masters, http.MethodGet, master.SorterPath, nil)
	case "sorter set":
		if f.sw.Sorter == "" && f.sw.AgentSelection == "" && f.sw.Mode == "" {
			return true, usagef("sorter set: give at least one of --sorter, --agent-selection, --mode")
		}
		body, _ := json.Marshal(f.sw)
		b, err = call(cli, f.masters, http.MethodPost, master.SorterPath, body)
	default:
		return false, nil
	}
	if err != nil {
		return true, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return true, fmt.Errorf("%s: the master's answer is not JSON: %q", verb, b)
	}
	return true, printJSON(stdout, v)
}
