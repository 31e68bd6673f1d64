package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fspyTraceDir holds the first 400 jobs of FB-2009 under the name
// --trace FB-2009 reads, so that the experiment runs in a second.
func fspyTraceDir(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "sim", "trace", "testdata", "fb2009_head400.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, fspyTraces["fb-2009"]), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The application master model was added after fair's common slowdown
// missed the paper's, so a run under it says so in its JSON and beside
// that figure in its text; a run without it (--am-mem -1) says nothing.
func TestFSPYExperimentMarksCalibration(t *testing.T) {
	dir := fspyTraceDir(t)
	for _, c := range []struct {
		name       string
		args       []string
		calibrated bool
	}{
		{"default, with application masters", nil, true},
		{"without application masters", []string{"--am-mem", "-1"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"experiment", "fspy", "--trace-dir", dir, "--policies", "fair,fspy", "--progress", "never"}, c.args...)
			var js, errb bytes.Buffer
			if code := run(append(args, "--json"), &js, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var doc struct {
				Calibrated  *bool  `json:"calibrated"`
				Calibration string `json:"calibration"`
			}
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Calibrated == nil || *doc.Calibrated != c.calibrated {
				t.Errorf("calibrated %v, want %v", doc.Calibrated, c.calibrated)
			}
			if mentions := strings.Contains(doc.Calibration, "fair's common slowdown"); mentions != c.calibrated {
				t.Errorf("calibration %q: mentions fair's common slowdown %v, want %v", doc.Calibration, mentions, c.calibrated)
			}
			var out bytes.Buffer
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			// marked: the calibration's own line and fair's common slowdown
			marked, wantMarked := 0, 0
			if c.calibrated {
				wantMarked = 2
			}
			for _, line := range strings.Split(out.String(), "\n") {
				isMarked := strings.Contains(line, "calibrated")
				want := c.calibrated && (strings.Contains(line, "common slowdown, heaviest group, fair:") || strings.Contains(line, "application master model (2048 MB"))
				if isMarked != want {
					t.Errorf("line %q: marked %v, want %v", line, isMarked, want)
				}
				if isMarked {
					marked++
				}
			}
			if marked != wantMarked {
				t.Errorf("%d lines marked, want %d:\n%s", marked, wantMarked, out.String())
			}
		})
	}
}
