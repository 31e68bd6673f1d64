package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/allot-sched/allot/master"
)

// operatorJSON answers an operator verb with --json: the master's own
// JSON answer, indented, for the verbs that read or switch something, and
// an object saying what was done for the others. It reports handled false
// for a verb it does not know, which then gets the usual answer.
func operatorJSON(cli *http.Client, f *operatorFlags, verb string, rest []string, stdout io.Writer) (bool, error) {
	var b []byte
	var err error
	switch verb {
	case "raft add-voter", "raft remove-peer", "raft transfer-leadership":
		if err := operatorRaftChange(cli, f.masters, strings.TrimPrefix(verb, "raft "), rest, io.Discard); err != nil {
			return true, err
		}
		return true, printJSON(stdout, map[string]any{"op": strings.TrimPrefix(verb, "raft "), "args": nonNil(rest), "done": true})
	case "snapshot save":
		if err := operatorSnapshotSave(cli, f.masters, rest, io.Discard); err != nil {
			return true, err
		}
		st, err := os.Stat(rest[0])
		if err != nil {
			return true, err
		}
		return true, printJSON(stdout, map[string]any{"file": rest[0], "bytes": st.Size()})
	case "snapshot restore":
		var buf bytes.Buffer
		if err := operatorSnapshotRestore(cli, f.masters, rest, &buf); err != nil {
			return true, err
		}
		return true, printJSON(stdout, map[string]any{"file": rest[0], "message": strings.TrimSpace(buf.String())})
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

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
