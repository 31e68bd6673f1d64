package main

import (
	"encoding/json"
	"fmt"
	"github.com/allot-sched/allot/allocator/policy/bandit"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/allot-sched/allot/lab/colocation"
)

// `allot experiment colocation` runs the co-location paper's queue
// experiment (Thamsen et al., section 6) in the simulator with its
// interference model on: FIFO, RA, RA* and random-in-window, paired by
// seed, beside the paper's Tables 5-6.

func init() {
	registerExperiment(experiment{
		name:    "colocation",
		summary: "the co-location bandit's queues A and B: FIFO, RA, RA*, random-in-window (simulated)",
		run:     runColocation,
	})
}

// paperColocation is the paper's change of makespan against FIFO (Tables
// 5-6).
var paperColocation = map[string]map[string]float64{
	"A": {"RA": -0.07, "RA*": -0.08},
	"B": {"RA": 0, "RA*": 0},
}

func runColocation(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("experiment colocation", "[--queue A,B|SPEC] [--seeds 10] [--json] [--out DIR]",
		"The paper's 16 nodes and queues of 48 jobs (A: m=4, n=3; B: m=3, n=4) or a SPEC such as\n"+
			"\"KM*4,CC*4,Q10*4,Q3*4 x3\", through the real allocator with the simulator's interference\n"+
			"model: FIFO, RA (bandit from zero), RA* (warm start from RA's preferences of the same seed)\n"+
			"and random-in-window (step 0). Medians over --seeds runs, changes paired by seed.",
		stderr)
	queues := fs.String("queue", "A,B", "comma-separated queues: A, B, or one SPEC (blocks TYPE*COUNT, then xN)")
	seeds := fs.Int("seeds", 10, "runs per queue and policy (seeds 1..N)")
	asJSON := fs.Bool("json", false, `print {"rows":[...],"prefs":{...},"calibration":[...]}`)
	out := fs.String("out", "", "also write colocation.json into this `dir`ectory")
	placement := fs.String("placement", "triplets", "triplets (the paper's section 6.1, every policy alike; FIFO is the queue order) or spread (one task per agent visit)")
	oracles := fs.Bool("oracles", false, "add rows oracle-G and oracle-progress: frozen preferences from the measured mean goodness per pair, and from the pairs' slowdowns")
	beyond := fs.Bool("beyond", false, "add the rows beyond the paper: RA-set (a preference row per set of residents), RA-progress\n(reward: co-located progress rate over solo), RA-progress-set")
	progressStep := fs.Float64("progress-step", 1, "--beyond: step size of the progress-rewarded bandit (its reward lies in [0, 1])")
	diagnose := fs.Bool("diagnose", false, "instead, measure why learning does or does not beat random-in-window: goodness G by node\ncomposition, RA's updates and draws beside a resident per seed, oracle makespans")
	var bf banditFlags
	addBanditFlags(fs, &bf)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *seeds < 1 || *seeds > 1000 {
		return usagef("--seeds must be between 1 and 1000, got %d", *seeds)
	}
	bc, err := bf.config()
	if err != nil {
		return err
	}
	qs := []string{*queues}
	if strings.EqualFold(*queues, "A,B") || strings.EqualFold(*queues, "B,A") || !strings.Contains(*queues, "*") {
		qs = splitList(*queues)
	}
	if *placement != "triplets" && *placement != "spread" {
		return usagef("--placement: want triplets or spread, got %q", *placement)
	}
	if *diagnose {
		if *placement == "triplets" && bc.Chunk == 0 {
			bc.Chunk = 3
		}
		return runColocationDiagnose(qs, *seeds, bc, *asJSON, stdout)
	}
	rep, err := colocation.ColocationExperiment(colocation.ColocationOptions{Queues: qs, Seeds: *seeds, Bandit: bc,
		Spread: *placement == "spread", Oracles: *oracles, Beyond: *beyond, ProgressStep: *progressStep})
	if err != nil {
		return err
	}
	if *out != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(filepath.Join(*out, "colocation.json"), b, 0o644); err != nil {
			return err
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	return printColocation(stdout, rep)
}

func printColocation(w io.Writer, rep *colocation.ColocationReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "queue\tpolicy\tmakespan (min)\tsd\tvs FIFO\tpaper\tp99 wait (min)")
	for _, r := range rep.Rows {
		paper := "-"
		if p, ok := paperColocation[r.Queue][r.Policy]; ok {
			paper = fmt.Sprintf("%+.0f %%", 100*p)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%+.1f %%\t%s\t%.1f\n", r.Queue, r.Policy, r.Makespan/60, r.SD/60,
			100*r.Change, paper, r.P99Wait/60)
	}
	fmt.Fprintln(tw, "\ncalibration\tjob\tsim\tpaper")
	for _, c := range rep.Calibration {
		fmt.Fprintf(tw, "%s\t%s\t%+.1f %%\t%+.1f %%\n", c.Pair, c.Job, 100*c.Ratio, 100*c.Paper)
	}
	return tw.Flush()
}

func runColocationDiagnose(qs []string, seeds int, bc bandit.Config, asJSON bool, stdout io.Writer) error {
	var all []*colocation.ColocationDiagnosis
	for _, q := range qs {
		d, err := colocation.ColocationDiagnose(q, seeds, bc)
		if err != nil {
			return err
		}
		all = append(all, d)
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(all)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, d := range all {
		fmt.Fprintf(tw, "queue %s: goodness G by node composition (RA's samples)\ntypes\tsamples\tmean G\tsd G\n", d.Queue)
		for _, r := range d.Rewards {
			fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\n", r.Types, r.N, r.Mean, r.SD)
		}
		fmt.Fprintln(tw, "seed\tFIFO\trandom\tRA\tRA*\toracle-G\toracle-progress\tRA updates\tRA draws beside\tRA mean G")
		for _, s := range d.Seeds {
			m := s.Makespan
			fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%d\t%d\t%.2f\n", s.Seed, m["FIFO"], m["random-in-window"],
				m["RA"], m["RA*"], m["oracle"], m["progress-oracle"], s.Updates, s.DrawsBeside, s.BaselineFinal)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
