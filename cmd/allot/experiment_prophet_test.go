package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot/lab/prophet"
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
			Policy      string  `json:"policy"`
			Calibrated  *bool   `json:"calibrated"`
			Calibration string  `json:"calibration"`
			Makespan    float64 `json:"makespan_s"`
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
		// the workload was fitted on the three baselines alone
		if want := prophetCalibrated[r.Policy]; r.Calibrated == nil || *r.Calibrated != want || (r.Calibration != "") != want {
			t.Errorf("row %s: calibrated %v, calibration %q; want calibrated %v", r.Policy, r.Calibrated, r.Calibration, want)
		}
		if !(r.Makespan > 1200) {
			t.Errorf("%s: makespan %v", r.Policy, r.Makespan)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "prophet.json")); err != nil {
		t.Error(err)
	}
}

// prophetCalibrated are the rows DefaultProphetWorkload was fitted to
// (Table III's CS makespan and DRF/CS, Tetris/CS ratios); every other row
// runs that workload unfitted.
var prophetCalibrated = map[string]bool{"capacity": true, "drf": true, "tetris-peak": true}

// Each calibrated row's text names the paper's figure it was fitted to;
// no other row carries a note.
func TestProphetCalibratedRows(t *testing.T) {
	want := map[string]string{
		"capacity":    "the paper's 16604 s",
		"drf":         "DRF/CS ratio 1.106",
		"tetris-peak": "Tetris/CS ratio 1.538",
	}
	var rep prophet.ProphetReport
	for _, p := range prophet.ProphetPolicies {
		cal := prophet.ProphetCalibration(p)
		if (cal != "") != prophetCalibrated[p] || !strings.Contains(cal, want[p]) {
			t.Errorf("%s: calibration %q, want calibrated %v naming %q", p, cal, prophetCalibrated[p], want[p])
		}
		rep.Rows = append(rep.Rows, prophet.ProphetRow{Policy: p, Calibrated: cal != "", Calibration: cal, Makespan: 1})
	}
	var out bytes.Buffer
	printProphet(&out, rep)
	rows, marked := 0, 0
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !slices.Contains(prophet.ProphetPolicies, f[0]) {
			if strings.Contains(line, "calibrated") {
				t.Errorf("line %q is no calibrated row but is marked", line)
			}
			continue
		}
		rows++
		row := f[0]
		isMarked := strings.Contains(line, "[calibrated")
		if isMarked != prophetCalibrated[row] || (isMarked && !strings.Contains(line, want[row])) {
			t.Errorf("%s's line %q: marked %v, want %v naming %q", row, line, isMarked, prophetCalibrated[row], want[row])
		}
		if isMarked {
			marked++
		}
	}
	if rows != len(prophet.ProphetPolicies) || marked != len(want) {
		t.Errorf("%d rows, %d marked; want %d and %d:\n%s", rows, marked, len(prophet.ProphetPolicies), len(want), out.String())
	}
}
