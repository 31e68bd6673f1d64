package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	simJobs  = "../../sim/trace/testdata/small_jobs.csv"
	simNodes = "../../sim/trace/testdata/small_nodes.csv"
)

func runSimCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"sim"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestSimExitCodes(t *testing.T) {
	dir := t.TempDir()
	badJobs := filepath.Join(dir, "bad.csv")
	os.WriteFile(badJobs, []byte("job_id,submit_s,framework,tasks,duration_s,cpus,mem_mb\na,0,f,1,10,2,1024\nb,0,f,x,10,2,1024\n"), 0o644)
	swimJobs := filepath.Join(dir, "fb.tsv")
	os.WriteFile(swimJobs, []byte("job0\t0\t0\t740773\t2339561\t627471\njob1\t60\t60\t200000000\t0\t0\n"), 0o644)
	bigJobs := filepath.Join(dir, "big.csv")
	os.WriteFile(bigJobs, []byte("job_id,submit_s,framework,tasks,duration_s,cpus,mem_mb\na,0,f,1,10,2,1024\nhuge,0,f,1,10,64,1024\n"), 0o644)
	tests := []struct {
		name    string
		args    []string
		code    int
		errWant string
	}{
		{"ok", []string{"--jobs", simJobs, "--nodes", simNodes}, 0, ""},
		{"no jobs", []string{"--nodes", simNodes}, 2, "give --jobs FILE or --generate NAME"},
		{"jobs and generate", []string{"--jobs", simJobs, "--generate", "synthetic"}, 2, "one of them"},
		{"bad generator", []string{"--generate", "tpc-h"}, 2, `unknown workload "tpc-h"`},
		{"generated", []string{"--generate", "synthetic", "--sorter", "drf,tetris", "--mode", "oblivious,characterized"}, 0, ""},
		{"generated online", []string{"--generate", "psdsf-online", "--max-jobs", "40", "--cluster", "psdsf-homo"}, 0, ""},
		{"no cluster", []string{"--jobs", simJobs}, 2, "--nodes FILE or --cluster SPEC"},
		{"both clusters", []string{"--jobs", simJobs, "--nodes", simNodes, "--cluster", "psdsf-homo"}, 2, "not both"},
		{"bad sorter", []string{"--jobs", simJobs, "--nodes", simNodes, "--sorter", "drf,best"}, 2, `unknown sorter "best"`},
		{"bad mode", []string{"--jobs", simJobs, "--nodes", simNodes, "--mode", "eager"}, 2, "unknown mode"},
		{"bad format", []string{"--jobs", simJobs, "--nodes", simNodes, "--format", "parquet"}, 2, "unknown format"},
		{"bad cluster", []string{"--jobs", simJobs, "--cluster", "3xcpus=lots"}, 2, "not a number"},
		{"only invalid combos", []string{"--jobs", simJobs, "--nodes", simNodes, "--sorter", "psdsf", "--agent-selection", "bestfit"}, 2, "no valid combination"},
		{"malformed row", []string{"--jobs", badJobs, "--nodes", simNodes}, 1, `bad.csv:3: column "tasks": value "x"`},
		{"impossible job", []string{"--jobs", bigJobs, "--nodes", simNodes}, 1, `line 3: job "huge" can never run`},
		{"missing file", []string{"--jobs", filepath.Join(dir, "none.csv"), "--nodes", simNodes}, 1, "no such file"},
		{"help", []string{"--help"}, 0, "Usage: allot sim"},
		{"rate noise on swim", []string{"--jobs", swimJobs, "--format", "swim", "--cluster", "fspy", "--rate-noise", "0.3"}, 0, ""},
		{"rate noise on csv", []string{"--jobs", simJobs, "--nodes", simNodes, "--rate-noise", "0.3"}, 2, "--format swim only"},
		{"negative rate noise", []string{"--jobs", swimJobs, "--format", "swim", "--rate-noise", "-1"}, 2, "between 0 and 2"},
		{"what-if on csv", []string{"--jobs", simJobs, "--nodes", simNodes, "--time-scale", "0.5", "--duration-scale", "2", "--cluster-scale", "2"}, 0, ""},
		{"what-if on swim", []string{"--jobs", swimJobs, "--format", "swim", "--cluster", "fspy", "--nodes-sample", "0.5"}, 0, ""},
		{"zero time scale", []string{"--jobs", simJobs, "--nodes", simNodes, "--time-scale", "0"}, 2, "must be positive"},
		{"nodes sample over 1", []string{"--jobs", simJobs, "--nodes", simNodes, "--nodes-sample", "1.5"}, 2, "fraction in (0, 1]"},
		{"cluster scale 0", []string{"--jobs", simJobs, "--nodes", simNodes, "--cluster-scale", "0"}, 2, "at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runSimCmd(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.errWant) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.errWant)
			}
		})
	}
}

func TestSimJSONIsOneObjectAndDeterministic(t *testing.T) {
	args := []string{"--jobs", simJobs, "--cluster", "psdsf-hetero", "--sorter", "drf,psdsf,bf-drf", "--agent-selection", "rrr,bestfit", "--mode", "oblivious,characterized", "--json", "--seed", "9"}
	code, out, stderr := runSimCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// psdsf with bestfit is skipped, and said so
	if !strings.Contains(stderr, "skipping psdsf with bestfit") {
		t.Errorf("stderr %q does not explain the skipped combination", stderr)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var doc struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Errorf("more than one JSON value on stdout")
	}
	// 2 modes x (drf rrr, drf bestfit, psdsf rrr, bf-drf) = 8 runs
	if len(doc.Runs) != 8 {
		t.Fatalf("%d runs, want 8", len(doc.Runs))
	}
	for _, r := range doc.Runs {
		for _, k := range []string{"sorter", "agent_selection", "mode", "makespan_s", "jct_p50_s", "jct_p90_s", "jct_p99_s", "utilization", "jain", "lower_bound_ratio"} {
			if _, ok := r[k]; !ok {
				t.Errorf("run %v lacks %q", r, k)
			}
		}
		u := r["utilization"].(map[string]any)
		if _, ok := u["cpus"]; !ok {
			t.Errorf("utilization %v lacks cpus", u)
		}
	}
	_, again, _ := runSimCmd(t, args...)
	if again != out {
		t.Errorf("same seed, different JSON")
	}
}

func TestSimOutWritesFilesAPersonCanOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, out, stderr := runSimCmd(t, "--jobs", simJobs, "--nodes", simNodes, "--sorter", "drf,psdsf", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "makespan_s") || !strings.Contains(out, "psdsf") {
		t.Errorf("table missing:\n%s", out)
	}
	for _, f := range []string{"summary.csv", "series.csv", "jobs.csv", "util_cpus.svg", "util_mem.svg", "jct_cdf.svg", "index.html"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if strings.HasSuffix(f, ".svg") {
			// well-formed XML with one polyline per run
			d := xml.NewDecoder(bytes.NewReader(b))
			for {
				if _, err := d.Token(); err == io.EOF {
					break
				} else if err != nil {
					t.Errorf("%s is not well-formed: %v", f, err)
					break
				}
			}
			if n := strings.Count(string(b), "<polyline"); n != 2 {
				t.Errorf("%s has %d lines, want 2", f, n)
			}
		}
	}
	// no progress bar when stderr is not a terminal
	if strings.Contains(stderr, "[") {
		t.Errorf("stderr has a progress bar: %q", stderr)
	}
}

// The what-if knobs are shown in the report's header, text and JSON, and
// not at all when none is set.
func TestSimWhatIfHeader(t *testing.T) {
	args := []string{"--generate", "synthetic", "--progress", "never"}
	knobs := []string{"--time-scale", "0.5", "--nodes-sample", "0.5", "--cluster-scale", "2"}
	_, plain, _ := runSimCmd(t, args...)
	if strings.Contains(plain, "what-if") {
		t.Errorf("no knobs, yet a what-if header:\n%s", plain)
	}
	code, text, stderr := runSimCmd(t, append(args, knobs...)...)
	if code != 0 || !strings.Contains(text, "what-if: time-scale 0.5 (arrival span") || !strings.Contains(text, "nodes-sample 0.5 (seed 1), cluster-scale 2, nodes 6 -> 6") {
		t.Errorf("exit %d, text header:\n%s\n%s", code, text, stderr)
	}
	code, out, stderr := runSimCmd(t, append(append(args, knobs...), "--json")...)
	var rep struct {
		WhatIf *struct {
			TimeScale  float64 `json:"time_scale"`
			Before     int     `json:"nodes_before"`
			After      int     `json:"nodes_after"`
			SpanBefore float64 `json:"arrival_span_before_s"`
			SpanAfter  float64 `json:"arrival_span_after_s"`
		} `json:"what_if"`
		Runs []json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s\n%s", code, err, out, stderr)
	}
	if w := rep.WhatIf; w == nil || w.TimeScale != 0.5 || w.Before != 6 || w.After != 6 || w.SpanAfter*2 < w.SpanBefore-0.2 || w.SpanAfter*2 > w.SpanBefore+0.2 || len(rep.Runs) != 1 {
		t.Errorf("JSON what_if = %+v (%d runs)", rep.WhatIf, len(rep.Runs))
	}
}

// The roles file docs/roles.md shows runs as it is, and the report says
// what each role got.
func TestSimRolesFileExample(t *testing.T) {
	args := []string{"--jobs", simJobs, "--nodes", simNodes, "--roles", "../../docs/sim-roles-example.json"}
	code, out, stderr := runSimCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"by role", "share_cpus", "analytics", "eng/search"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	code, out, stderr = runSimCmd(t, append(args, "--json")...)
	var doc struct {
		Runs []struct {
			Roles []struct {
				Role  string             `json:"role"`
				Jobs  int                `json:"jobs"`
				Share map[string]float64 `json:"share"`
			} `json:"roles"`
		} `json:"runs"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Runs) != 1 || len(doc.Runs[0].Roles) != 2 {
		t.Fatalf("--json: exit %d, %s %s; want one run with two roles", code, out, stderr)
	}
	if r := doc.Runs[0].Roles[1]; r.Role != "eng/search" || r.Jobs != 2 || r.Share["cpus"] <= 0 {
		t.Errorf("--json: role %+v, want eng/search with 2 jobs and a cpus share", r)
	}
	bad := filepath.Join(t.TempDir(), "roles.json")
	os.WriteFile(bad, []byte(`{"reservations": [{"agent": "type9-*", "role": "eng", "resources": {"cpus": 1}}]}`), 0o644)
	if code, _, stderr := runSimCmd(t, "--jobs", simJobs, "--nodes", simNodes, "--roles", bad); code != 1 || !strings.Contains(stderr, `agent "type9-*" matches no node of the cluster`) {
		t.Errorf("a reservation on no node: exit %d, %q", code, stderr)
	}
}
