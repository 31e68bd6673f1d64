package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/allot-sched/allot/lab/prophet"
)

// `allot experiment prophet` runs the Prophet paper's evaluation (Xu, Xu,
// Jiang, Section IV) in the simulator's executor-application model
// (sim/apps.go): 16 servers, 90 applications, Capacity, DRF, Tetris (the
// paper's variant, tetris-peak) and Prophet, beside the paper's Table III.

func init() {
	registerExperiment(experiment{
		name:    "prophet",
		summary: "the Prophet paper's 90 applications on 16 servers: capacity, drf, tetris-peak, prophet with and without task backoff (+4 variants beyond the paper)",
		run:     runProphetExperiment,
	})
}

func runProphetExperiment(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("experiment prophet", "[--seeds 3] [--pred-error 0.1] [--beta 0.3] [--json] [--out DIR]",
		"The Prophet paper's setup (16 servers of 24 cores, 32 GB, 330 MB/s disk, 1 Gbps;\n"+
			"90 applications from 10 archetypes x 3 input sizes x cores {1,3,5}, arriving\n"+
			"uniformly in [0, 1200] s) in the simulator's executor model, per policy averaged\n"+
			"over seeds 1..--seeds. prophet runs task backoff (sim/backoff.go: trigger 0.9,\n"+
			"a quarter of the task slots, 20 rounds); prophet-nobackoff is the paper's \"w/o backoff\".",
		stderr)
	seeds := fs.Int("seeds", 3, "seeds to average over (1..100)")
	predErr := fs.Float64("pred-error", 0.1, "relative error of the predicted profiles, in [0, 0.9]")
	beta := fs.Float64("beta", prophet.DefaultBeta, "beta of the degradation law c/(1+beta(D/c-1)); 0 = work conserving")
	asJSON := fs.Bool("json", false, `print {"rows":[...],"paper":{...}}`)
	out := fs.String("out", "", "also write prophet.json into DIR")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (prophet takes only flags)", fs.Arg(0))
	}
	if *seeds < 1 || *seeds > 100 {
		return usagef("--seeds must be between 1 and 100, got %d", *seeds)
	}
	if !(*predErr >= 0 && *predErr <= 0.9) {
		return usagef("--pred-error must be in [0, 0.9], got %v", *predErr)
	}
	if !(*beta >= 0 && *beta <= 100) {
		return usagef("--beta must be in [0, 100], got %v", *beta)
	}
	rep, err := prophet.ProphetExperiment(prophet.ProphetOptions{Seeds: *seeds, PredError: *predErr, Beta: *beta})
	if err != nil {
		return err
	}
	doc := struct {
		prophet.ProphetReport
		Paper        map[string]float64   `json:"paper"`
		PaperBackoff prophet.BackoffShare `json:"paper_backoff_share"`
	}{rep, prophet.ProphetPaper, prophet.ProphetPaperBackoffShare}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(doc, "", "  ")
		if err := os.WriteFile(filepath.Join(*out, "prophet.json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(doc)
	}
	printProphet(stdout, rep)
	return nil
}

// printProphet is the text table: one row per policy with the paper's
// makespan beside it (and a calibrated row's note), then Prophet's
// reductions and task backoff's share beside the paper's.
func printProphet(w io.Writer, rep prophet.ProphetReport) {
	fmt.Fprintf(w, "%-17s %11s %8s %9s %9s %9s %8s %14s\n", "policy", "makespan_s", "sd", "exec_p50", "jct_p50", "overalloc", "bw_util", "paper_makespan")
	for _, r := range rep.Rows {
		paper := "-"
		if v, ok := prophet.ProphetPaper[r.Policy]; ok {
			paper = fmt.Sprintf("%.0f", v)
		}
		fmt.Fprintf(w, "%-17s %11.0f %8.0f %9.0f %9.0f %9.3f %8.3f %14s%s\n", r.Policy, r.Makespan, r.MakespanSD, r.ExecP50, r.JCTP50, r.OverallocFrac, r.BWUtil, paper, calibrationNote(r.Calibration))
	}
	base := map[string]float64{}
	for _, r := range rep.Rows {
		base[r.Policy] = r.Makespan
	}
	if p := base["prophet"]; p > 0 {
		fmt.Fprintf(w, "\nprophet's makespan reduction: vs capacity %.0f%%, vs drf %.0f%%, vs tetris-peak %.0f%% (paper: -32%%, -39%%, -56%%)\n",
			100*(p/base["capacity"]-1), 100*(p/base["drf"]-1), 100*(p/base["tetris-peak"]-1))
	}
	fmt.Fprintf(w, "task backoff's share (Fig. 11, prophet over prophet-nobackoff, paired per application): median exec reduction %.0f%%, median jct reduction %.0f%% (paper: %.0f%%, %.0f%%); %.0f backoff episodes per run (an executor flagged afresh)\n",
		100*rep.Backoff.Exec, 100*rep.Backoff.JCT, 100*prophet.ProphetPaperBackoffShare.Exec, 100*prophet.ProphetPaperBackoffShare.JCT, rep.Backoffs)
}
