package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/allot-sched/allot/lab/ispark"
)

func TestISparkExperimentCLI(t *testing.T) {
	for _, c := range []struct {
		args    []string
		code    int
		errWant string
	}{
		{[]string{"--seeds", "0"}, 2, "--seeds must be between 1 and 20"},
		{[]string{"--apps", "5"}, 2, "--apps must be between 10 and 1000"},
		{[]string{"stray"}, 2, `unexpected argument "stray"`},
	} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"experiment", "ispark"}, c.args...), &out, &errb); code != c.code || !strings.Contains(errb.String(), c.errWant) {
			t.Errorf("%v: code %d, stderr %q; want %d and %q", c.args, code, errb.String(), c.code, c.errWant)
		}
	}
	if testing.Short() {
		t.Skip("the run takes 22 simulations")
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run([]string{"experiment", "ispark", "--apps", "10", "--json", "--out", dir}, &out, &errb); code != 0 {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	checkISparkRows(t, out.Bytes())
	checkISparkEviction(t, out.Bytes())
	if _, err := os.Stat(filepath.Join(dir, "ispark.json")); err != nil {
		t.Error(err)
	}
}

// checkISparkRows checks the JSON's policy table, in the paper's order,
// and its sensitivity sweeps.
func checkISparkRows(t *testing.T, js []byte) {
	t.Helper()
	var doc struct {
		Rows []struct {
			Policy      string   `json:"policy"`
			Calibrated  *bool    `json:"calibrated"`
			Calibration string   `json:"calibration"`
			CPUUtil     float64  `json:"cpu_util"`
			Reduction   *float64 `json:"makespan_p50_reduction"`
			JCT         float64  `json:"jct_p50_s"`
			Recomputed  *float64 `json:"recomputed_partitions"`
			Moved       *float64 `json:"moved_bytes"`
			Failures    *float64 `json:"task_failures"`
		} `json:"rows"`
		Sensitivity struct {
			Gamma []struct{ Value float64 } `json:"gamma"`
			H     []struct{ Value float64 } `json:"h"`
		} `json:"sensitivity"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, js)
	}
	if len(doc.Rows) != 6 || doc.Rows[0].Policy != "static" || doc.Rows[2].Policy != "ispark" || doc.Rows[3].Policy != "ispark-cf" {
		t.Fatalf("rows %+v", doc.Rows)
	}
	for _, r := range doc.Rows {
		// dynamic allocation's cpu_util is the one figure fitted to the paper
		if want := r.Policy == "dynamic"; r.Calibrated == nil || *r.Calibrated != want || (r.Calibration != "") != want {
			t.Errorf("row %s: calibrated %v, calibration %q; want calibrated %v", r.Policy, r.Calibrated, r.Calibration, want)
		}
		if r.CPUUtil <= 0 || r.CPUUtil > 1 || r.JCT <= 0 || r.Reduction == nil || r.Recomputed == nil || r.Moved == nil || r.Failures == nil {
			t.Errorf("row %+v: a field is missing or out of range", r)
		}
	}
	if len(doc.Sensitivity.Gamma) != 5 || len(doc.Sensitivity.H) != 4 || doc.Sensitivity.H[3].Value != 1.2 {
		t.Errorf("sensitivity %+v", doc.Sensitivity)
	}
}

// checkISparkEviction checks the JSON's Fig. 12: the three executor
// memories, hit ratios and JCTs of both cache policies (field names as
// the JSON spells them).
func checkISparkEviction(t *testing.T, js []byte) {
	t.Helper()
	var ev struct {
		Eviction []map[string]float64 `json:"eviction"`
	}
	_ = json.Unmarshal(js, &ev)
	if len(ev.Eviction) != 3 || ev.Eviction[0]["mem_mb"] != 2048 || ev.Eviction[2]["mem_mb"] != 6144 {
		t.Errorf("eviction %+v: want 2048, 4096, 6144 MB", ev.Eviction)
	}
	for _, e := range ev.Eviction {
		for _, k := range []string{"dag_aware_hit_ratio", "plain_hit_ratio"} {
			if !(e[k] > 0 && e[k] <= 1) {
				t.Errorf("eviction %v: %s out of (0, 1]", e, k)
			}
		}
		for _, k := range []string{"dag_aware_jct_p50_s", "plain_jct_p50_s"} {
			if !(e[k] > 0) {
				t.Errorf("eviction %v: %s missing", e, k)
			}
		}
	}
}

// --fig12-only runs Fig. 12's eviction runs alone and prints them seed by
// seed; --warm-givers marks the beyond-the-paper variant.
func TestISparkFig12OnlyCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("six runs of 10 SVM applications")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"experiment", "ispark", "--apps", "10", "--fig12-only", "--warm-givers"}, &out, &errb); code != 0 {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"Fig. 12 only", "2048 MB executors", "6144 MB executors", "seed 1:", "no young givers"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "cpu_util") || strings.Contains(s, "gamma") {
		t.Errorf("--fig12-only printed the policy table or sweeps:\n%s", s)
	}
}

// Only dynamic allocation's row is calibrated (IterLengthScale was fitted
// on its cluster CPU alone); its text row and the Fig. 8a line say so, in
// the paper's figure, and no other row says anything.
func TestISparkCalibratedRows(t *testing.T) {
	var rep ispark.ISparkReport
	for _, c := range []struct {
		policy     string
		calibrated bool
	}{
		{ispark.IterStatic, false},
		{ispark.IterDynamic, true},
		{ispark.IterISpark, false},
		{ispark.IterISparkCF, false},
		{ispark.IterNoCache, false},
		{ispark.IterWeigh, false},
	} {
		cal := ispark.ISparkCalibration(c.policy)
		if got := cal != ""; got != c.calibrated {
			t.Errorf("%s: calibration %q, want calibrated %v", c.policy, cal, c.calibrated)
		}
		rep.Rows = append(rep.Rows, ispark.ISparkRow{Policy: c.policy, Calibrated: cal != "", Calibration: cal, CPUUtil: 0.3, JCTP50: 1})
	}
	if len(rep.Rows) != len(ispark.IterPolicies) {
		t.Fatalf("the table covers %d policies, ispark.IterPolicies has %d", len(rep.Rows), len(ispark.IterPolicies))
	}
	var out bytes.Buffer
	printISpark(&out, rep)
	marked := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.Contains(line, "calibrated") {
			continue
		}
		marked++
		if !strings.HasPrefix(line, "dynamic ") && !strings.Contains(line, "cluster cpu (Fig. 8a)") {
			t.Errorf("marked line is not dynamic's: %q", line)
		}
		if !strings.Contains(line, "calibrated to the paper's 32.1") {
			t.Errorf("line %q does not name the paper's figure", line)
		}
	}
	if marked != 2 {
		t.Errorf("%d lines marked, want dynamic's row and the Fig. 8a line:\n%s", marked, out.String())
	}
}
