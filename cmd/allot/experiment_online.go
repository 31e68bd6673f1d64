package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/allot-sched/allot/lab/psdsf"
	"github.com/allot-sched/allot/sim"
)

func init() {
	registerExperiment(experiment{
		name:    "psdsf-online",
		summary: "the PS-DSF paper's Mesos experiment (Pi and WordCount queues) in simulation",
		run:     runPSDSFOnline,
	})
}

const onlineDescription = `Runs section 3 of Shan et al. in the simulator: five Pi queues (executors of
2 cpus / 2 GiB) and five WordCount queues (1 cpu / 3.5 GiB) of sequential
Spark jobs, on six heterogeneous agents (two each of 4 cpus/14 GiB,
8 cpus/8 GiB, 6 cpus/11 GiB) and on six homogeneous 6 cpus/11 GiB agents, in
oblivious and characterized modes, under DRF, PS-DSF, TSF, rPS-DSF (RRR) and
BF-DRF. Prints the mean makespan and utilisation per configuration and, for
each of the paper's findings, whether the simulation shows it. --out writes
the paper's figures 3-8 redrawn (SVG), CSV and an index.html.`

func runPSDSFOnline(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("experiment psdsf-online", "[flags]", onlineDescription, stderr)
	var (
		spec    sim.OnlineSpec
		trials  int
		seed    uint64
		out     string
		asJSON  bool
		jitter  float64
		progMod string
	)
	fs.IntVar(&trials, "trials", 5, "trials per configuration (seeds seed, seed+1, ...)")
	fs.Uint64Var(&seed, "seed", 1, "first trial's `seed`")
	fs.IntVar(&spec.Queues, "queues", 5, "queues per group")
	fs.IntVar(&spec.JobsPerQueue, "jobs", 50, "jobs per queue")
	fs.IntVar(&spec.TasksPerJob, "tasks", 8, "executor-sized tasks per Spark job")
	fs.Float64Var(&spec.TaskSeconds, "task-seconds", 30, "mean task duration in `seconds`")
	fs.Float64Var(&jitter, "jitter", 0.2, "relative spread of a job's task duration (0: none)")
	fs.StringVar(&out, "out", "", "write figures (SVG), CSV and index.html into `dir`")
	fs.BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	fs.StringVar(&progMod, "progress", "auto", "progress on stderr: auto, always, never")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case trials < 1 || trials > 1000:
		return usagef("--trials must be 1..1000, got %d", trials)
	case spec.Queues < 1 || spec.JobsPerQueue < 1 || spec.TasksPerJob < 1:
		return usagef("--queues, --jobs and --tasks must be at least 1")
	case !(spec.TaskSeconds > 0):
		return usagef("--task-seconds must be positive, got %v", spec.TaskSeconds)
	case jitter < 0 || jitter >= 1:
		return usagef("--jitter must be in [0, 1), got %v", jitter)
	}
	spec.Jitter = jitter
	if jitter == 0 {
		spec.Jitter = -1 // OnlineSpec reads 0 as "default"
	}
	show, err := wantProgress(progMod, stderr)
	if err != nil {
		return err
	}
	opt := psdsf.OnlineOptions{Spec: spec, Trials: trials, Seed: seed}
	if show {
		bar := newProgressBar(stderr, "psdsf-online")
		opt.Progress = func(done, total int) {
			bar.update(sim.Progress{Done: int64(done), Total: int64(total)})
		}
		defer bar.done()
	}
	rep, err := psdsf.RunOnline(opt)
	if err != nil {
		return err
	}
	if out != "" {
		files, err := psdsf.WriteOnlineOutputs(out, rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d files to %s (open %s)\n", len(files), out, filepath.Join(out, "index.html"))
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return psdsf.WriteOnlineTable(stdout, rep)
}
