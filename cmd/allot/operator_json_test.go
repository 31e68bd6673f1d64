package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/master"
)

// The operator verbs that read or switch something answer JSON with
// --json, flags before or after the verb's arguments.
func TestOperatorJSON(t *testing.T) {
	m, err := master.New(master.Config{Listen: "127.0.0.1:0", WorkDir: t.TempDir(), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	defer m.Stop(context.Background())
	snap := filepath.Join(t.TempDir(), "registry.snap")
	for _, tc := range []struct {
		args  []string
		check func(b []byte) bool
	}{
		{[]string{"sorter", "get", "--json"}, func(b []byte) bool {
			var c master.SorterConfig
			return json.Unmarshal(b, &c) == nil && c.Sorter == "drf"
		}},
		{[]string{"sorter", "set", "--sorter", "tsf", "--json"}, func(b []byte) bool {
			var c master.SorterConfig
			return json.Unmarshal(b, &c) == nil && c.Sorter == "tsf"
		}},
		{[]string{"policy", "show", "--json"}, func(b []byte) bool { return json.Valid(b) }},
		{[]string{"raft", "list-peers", "--json"}, func(b []byte) bool { return json.Valid(b) }},
		{[]string{"snapshot", "save", "--json", snap}, func(b []byte) bool {
			var v struct{ Bytes int64 }
			return json.Unmarshal(b, &v) == nil && v.Bytes > 0
		}},
	} {
		var out, errOut bytes.Buffer
		// The flags come before the verb's arguments (allot operator's rule).
		args := append(append(tc.args[:2:2], "--master", m.Addr()), tc.args[2:]...)
		err := runOperator(args, &out, &errOut)
		if err != nil || !tc.check(out.Bytes()) {
			t.Errorf("allot operator %v: %v (%s), output:\n%s", tc.args, err, errOut.String(), out.String())
		}
	}
	var out bytes.Buffer
	if err := runOperator([]string{"sorter", "set", "--json", "--master", m.Addr()}, &out, &out); err == nil {
		t.Errorf("sorter set --json with nothing to set: no error")
	}
}
