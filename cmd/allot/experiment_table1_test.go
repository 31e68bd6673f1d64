package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The tests go through run, the same entry point as main, so they cover the
// subcommand and experiment dispatch and the exit codes an operator sees.
// They use a few trials: the figures themselves are pinned in sim/.

func runTable1(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"experiment", "psdsf-table1"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

var table1Schedulers = []string{"DRF", "TSF", "RRR-PS-DSF", "BF-DRF", "PS-DSF", "rPS-DSF", "RRR-rPS-DSF"}

func TestPSDSFTable1ExitCodes(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		code    int
		errWant string // substring of stderr
	}{
		{name: "tables", args: []string{"--trials", "5"}, code: 0},
		{name: "json", args: []string{"--trials", "5", "--seed", "9", "--json"}, code: 0},
		{name: "help", args: []string{"--help"}, code: 0, errWant: "Usage: allot experiment psdsf-table1"},
		{name: "zero trials", args: []string{"--trials", "0"}, code: 2, errWant: "--trials must be between 1 and"},
		{name: "negative trials", args: []string{"--trials", "-3"}, code: 2, errWant: "got -3"},
		{name: "too many trials", args: []string{"--trials", "1000001"}, code: 2, errWant: "got 1000001"},
		{name: "trials not a number", args: []string{"--trials", "abc"}, code: 2, errWant: `invalid value "abc" for flag -trials`},
		{name: "negative seed", args: []string{"--seed", "-1"}, code: 2, errWant: `invalid value "-1" for flag -seed`},
		{name: "unknown flag", args: []string{"--trails", "5"}, code: 2, errWant: "trails"},
		{name: "stray argument", args: []string{"--trials", "5", "now"}, code: 2, errWant: `unexpected argument "now"`},
		// parseFlags reads ALLOT_<FLAG>; a bad value there is as bad as on
		// the command line, and the message names the variable.
		{name: "env trials bad", env: map[string]string{"ALLOT_TRIALS": "many"}, code: 2, errWant: "ALLOT_TRIALS"},
		{name: "env trials zero", env: map[string]string{"ALLOT_TRIALS": "0"}, code: 2, errWant: "got 0"},
		{name: "env trials ok", env: map[string]string{"ALLOT_TRIALS": "3"}, args: []string{"--json"}, code: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, _, stderr := runTable1(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.errWant) {
				t.Errorf("stderr does not mention %q:\n%s", tc.errWant, stderr)
			}
			if tc.code == 0 && tc.errWant == "" && stderr != "" {
				t.Errorf("success wrote to stderr:\n%s", stderr)
			}
		})
	}
}

func TestPSDSFTable1JSON(t *testing.T) {
	code, stdout, stderr := runTable1(t, "--json", "--trials", "10", "--seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Exactly one JSON object: a decoder that reads it must find nothing
	// but whitespace after it.
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	var got struct {
		Rows []struct {
			Scheduler    string      `json:"scheduler"`
			X            [][]float64 `json:"x"`
			Total        float64     `json:"total"`
			Stddev       [][]float64 `json:"stddev"`
			Unused       [][]float64 `json:"unused"`
			UnusedStddev [][]float64 `json:"unused_stddev"`
			Trials       int         `json:"trials"`
		} `json:"rows"`
	}
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("output is not the documented JSON object: %v\n%s", err, stdout)
	}
	if rest := strings.TrimSpace(stdout[dec.InputOffset():]); rest != "" {
		t.Errorf("more than one JSON value; trailing %q", rest)
	}
	if len(got.Rows) != len(table1Schedulers) {
		t.Fatalf("%d rows, want %d", len(got.Rows), len(table1Schedulers))
	}
	for k, r := range got.Rows {
		if r.Scheduler != table1Schedulers[k] {
			t.Errorf("row %d is %q, want %q", k, r.Scheduler, table1Schedulers[k])
		}
		for name, g := range map[string][][]float64{"x": r.X, "stddev": r.Stddev, "unused": r.Unused, "unused_stddev": r.UnusedStddev} {
			if len(g) != 2 || len(g[0]) != 2 || len(g[1]) != 2 {
				t.Errorf("%s: %s is not 2x2: %v", r.Scheduler, name, g)
			}
		}
		if len(r.X) == 2 && len(r.X[0]) == 2 && len(r.X[1]) == 2 {
			if sum := r.X[0][0] + r.X[0][1] + r.X[1][0] + r.X[1][1]; sum-r.Total > 1e-9 || r.Total-sum > 1e-9 {
				t.Errorf("%s: total %v, sum of x %v", r.Scheduler, r.Total, sum)
			}
		}
		wantTrials := 1
		if strings.HasPrefix(r.Scheduler, "RRR-") || r.Scheduler == "DRF" || r.Scheduler == "TSF" {
			wantTrials = 10
		}
		if r.Trials != wantTrials {
			t.Errorf("%s: trials %d, want %d", r.Scheduler, r.Trials, wantTrials)
		}
	}
}

func TestPSDSFTable1Tables(t *testing.T) {
	code, stdout, stderr := runTable1(t, "--trials", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Table 1", "Table 2", "Table 3", "Table 4", "paper", "mean over 4 trials"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	// Every table has one line per scheduler, in the paper's order, each
	// followed by the paper's figure for comparison.
	for _, table := range strings.Split(stdout, "\nTable ")[1:] {
		var names []string
		for _, line := range strings.Split(table, "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && strings.Contains(line, "|") && f[0] != "scheduler" && f[0] != "allot" {
				names = append(names, f[0])
			}
		}
		if strings.Join(names, ",") != strings.Join(table1Schedulers, ",") {
			t.Errorf("table %.7s... rows %v, want %v", table, names, table1Schedulers)
		}
	}
	// The paper's published PS-DSF line is typed in as the reference.
	if !strings.Contains(stdout, "|    19.00    0.00    2.00   20.00   41.00") {
		t.Errorf("Table 1 lacks the paper's PS-DSF figures (19, 0, 2, 20; 41):\n%s", stdout)
	}
}

// TestPSDSFTable1Deterministic: the same seed gives byte-identical output,
// in both formats, because the allocator takes its randomness from a seeded
// source and nothing in the command depends on time or map order.
func TestPSDSFTable1Deterministic(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"json default seed", []string{"--json", "--trials", "20"}},
		{"json seed 42", []string{"--json", "--trials", "20", "--seed", "42"}},
		{"tables seed 42", []string{"--trials", "20", "--seed", "42"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c1, a, e1 := runTable1(t, tc.args...)
			c2, b, e2 := runTable1(t, tc.args...)
			if c1 != 0 || c2 != 0 {
				t.Fatalf("exit %d, %d: %s %s", c1, c2, e1, e2)
			}
			if a != b {
				t.Errorf("two runs differ:\n%s\n---\n%s", a, b)
			}
		})
	}
}
