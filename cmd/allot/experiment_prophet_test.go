package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProphetExperimentCLI(t *testing.T) {
	for _, c := range []struct {
		args    []string
		code    int
		errWant string
	}{
		{[]string{"--seeds", "0"}, 2, "--seeds must be between 1 and 100"},
		{[]string{"--pred-error", "2"}, 2, "--pred-error must be in"},
		{[]string{"--beta", "-1"}, 2, "--beta must be in"},
		{[]string{"stray"}, 2, `unexpected argument "stray"`},
	} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"experiment", "prophet"}, c.args...), &out, &errb); code != c.code || !strings.Contains(errb.String(), c.errWant) {
			t.Errorf("%v: code %d, stderr %q; want %d and %q", c.args, code, errb.String(), c.code, c.errWant)
		}
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run([]string{"experiment", "prophet", "--seeds", "1", "--json", "--out", dir}, &out, &errb); code != 0 {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	var doc struct {
		Rows []struct {
			Policy   string  `json:"policy"`
			Makespan float64 `json:"makespan_s"`
		} `json:"rows"`
		Paper   map[string]float64 `json:"paper"`
		Backoff *struct {
			Exec float64 `json:"exec_reduction_p50"`
		} `json:"backoff_share"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rows) != 10 || doc.Rows[9].Policy != "drf-prophetfw" || doc.Rows[4].Policy != "prophet-nobackoff" || doc.Paper["prophet"] != 11290 || doc.Paper["prophet-nobackoff"] != 15707 {
		t.Fatalf("rows %v, paper %v", doc.Rows, doc.Paper)
	}
	if doc.Backoff == nil || doc.Backoff.Exec == 0 {
		t.Errorf("backoff share %+v, want a paired median reduction", doc.Backoff)
	}
	for _, r := range doc.Rows {
		if !(r.Makespan > 1200) {
			t.Errorf("%s: makespan %v", r.Policy, r.Makespan)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "prophet.json")); err != nil {
		t.Error(err)
	}
}
