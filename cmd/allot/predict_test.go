package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/allot-sched/allot/framework/eventlog"
)

// writeRun writes one successful run's log with two stages on two
// executors whose offsets and peaks are linear in the setting.
func writeRun(t *testing.T, dir string, cores int, gib int64) {
	w, err := eventlog.Create(dir, "wc")
	if err != nil {
		t.Fatal(err)
	}
	g := float64(gib)
	w.Write(&eventlog.ApplicationStart{App: "wc", InputBytes: gib << 30, Settings: eventlog.Settings{Cores: cores, Executors: 2, MemMB: 1024}})
	for _, ex := range []string{"e1", "e2"} {
		end0 := 1 + 10*g/float64(cores)
		w.Write(&eventlog.ExecutorStage{Executor: ex, Stage: 1, StageKey: "map", StartOffsetS: 1, EndOffsetS: end0, DiskBWPeak: (20 + 5*float64(cores)) * (1 << 20)})
		w.Write(&eventlog.ExecutorStage{Executor: ex, Stage: 2, StageKey: "reduce", StartOffsetS: end0 + 0.5, EndOffsetS: end0 + 2 + g, NetBWPeak: (8 + g) * (1 << 20)})
	}
	w.Write(&eventlog.ApplicationEnd{Success: true})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestPredictTrainShow(t *testing.T) {
	logs, model := t.TempDir(), filepath.Join(t.TempDir(), "model.json")
	for _, c := range []int{1, 2, 4} {
		for _, g := range []int64{1, 2, 4} {
			writeRun(t, logs, c, g)
		}
	}
	os.WriteFile(filepath.Join(logs, "old.jsonl"), []byte(`{"app":"wc","event":"application_start","event_log":"","settings":{"block_mem_mb":0,"cores":1,"dynamic":false,"executors":1,"local":true,"master":"","max_executors":0,"mem_mb":0,"min_executors":0},"time":1}`+"\n"), 0o644)
	var out, errb bytes.Buffer
	if code := run([]string{"predict", "train", "--logs", logs, "--out", model}, &out, &errb); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "wc: 9 runs, 2 stages (2 regressed") || !strings.Contains(out.String(), "1 logs skipped") {
		t.Errorf("train said:\n%s", out.String())
	}
	out.Reset()
	if code := run([]string{"predict", "show", model, "wc", "--cores", "3", "--input-bytes", "3221225472"}, &out, &errb); code != 0 {
		t.Fatalf("show: exit %d: %s", code, errb.String())
	}
	t.Logf("\n%s", out.String())
	if !strings.Contains(out.String(), "E=2 executors of 3 cpus, 1024 MB") || !strings.Contains(out.String(), "  11.00  ") {
		t.Errorf("show table:\n%s", out.String()) // map ends at 1 + 10*3/3 = 11 s
	}
	out.Reset()
	if code := run([]string{"predict", "show", "--json", model, "wc", "--cores=3", "--input-bytes=3221225472"}, &out, &errb); code != 0 {
		t.Fatalf("show --json: exit %d: %s", code, errb.String())
	}
	var got struct {
		Executors int
		Stages    []struct {
			Key    string
			End    float64 `json:"end_s"`
			DiskBW float64 `json:"disk_bw"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Stages) != 2 || got.Stages[0].Key != "map" {
		t.Fatalf("json %v: %s", err, out.String())
	}
	for _, bad := range [][]string{{"predict"}, {"predict", "train", "--logs", logs}, {"predict", "show", model}, {"predict", "frob"}} {
		if code := run(bad, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if code := run([]string{"predict", "show", model, "nope", "--cores", "1", "--input-bytes", "1"}, &out, &errb); code != 1 {
		t.Errorf("unknown app: exit %d, want 1", code)
	}
}

// TestPredictEval cross-validates on nine logs of a family the features
// span exactly: every run is predicted by regression from the other eight,
// without error.
func TestPredictEval(t *testing.T) {
	logs := t.TempDir()
	for _, c := range []int{1, 2, 4} {
		for _, g := range []int64{1, 2, 4} {
			writeRun(t, logs, c, g)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"predict", "eval", "--logs", logs}, &out, &errb); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errb.String())
	}
	t.Logf("\n%s", out.String())
	f := strings.Fields(strings.Split(out.String(), "\n")[1])
	if len(f) < 11 || f[0] != "wc" || f[1] != "9" || f[2] != "9" || f[3] != "18" || f[4] != "18" || f[9] != "0.0%" || f[10] != "100%" {
		t.Errorf("eval row %q: want wc, 9 runs, 9 held out, 18 stages all regressed, 0.0%% error, 100%% under 10%%", f)
	}
	out.Reset()
	if code := run([]string{"predict", "eval", "--json", "--logs", logs}, &out, &errb); code != 0 {
		t.Fatalf("eval --json: exit %d: %s", code, errb.String())
	}
	var doc struct {
		Apps []struct {
			App  string  `json:"app"`
			Held int     `json:"held_out"`
			All  float64 `json:"median_error_all"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Apps) != 1 || doc.Apps[0].Held != 9 || doc.Apps[0].All > 1e-6 {
		t.Errorf("eval --json %v: %s", err, out.String())
	}
	for _, bad := range [][]string{{"predict", "eval"}, {"predict", "eval", "--logs", logs, "--disk-from", "tape"}, {"predict", "eval", "--logs", logs, "extra"}} {
		if code := run(bad, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if code := run([]string{"predict", "eval", "--logs", t.TempDir()}, &out, &errb); code != 1 {
		t.Errorf("no logs: exit %d, want 1", code)
	}
}
