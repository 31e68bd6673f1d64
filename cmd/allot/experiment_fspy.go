package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/allot-sched/allot/lab/fspy"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sorter"
)

func init() {
	registerExperiment(experiment{
		name:    "fspy",
		summary: "the FSPY paper's response-time experiment (FSP with size prediction) on SWIM windows",
		run:     runFSPYExperiment,
	})
}

const fspyDescription = `Runs section IV.C of Liu, Zeng, Piao (FSPY) in the simulator: the SWIM trace is
cut into windows of 200 consecutive jobs overlapping by 50; each window runs
alone on 8 servers of 8 vcores / 8 GB under fair (drf), capacity, fspy
(regression-predicted sizes after a probe), fsp (true sizes) and fifo.
Every job runs a YARN application master (--am-mem MB, held to the job's
end; AMs capped at half the memory, as YARN's maxAMShare), and fspy's probes
are jobs in a probing queue of --probe-share of the cluster.
Windows are grouped by the octave of their offered load (memory-time asked
per second of arrivals over the cluster's memory, the argument of the
paper's RCP). Prints mean response time per group and policy, the fair and
common slowdowns and the prediction R^2 beside the paper's figures.
--out writes report.json, windows.csv and two SVG plots.`

// fspyTraces are the traces --trace names.
var fspyTraces = map[string]string{
	"fb-2009": "FB-2009_samples_24_times_1hr_0.tsv",
	"fb-2010": "FB-2010_samples_24_times_1hr_0.tsv",
}

func runFSPYExperiment(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("experiment fspy", "[--trace FB-2009|FB-2010] [--seeds N] [--json] [--out DIR]", fspyDescription, stderr)
	var (
		o                 fspy.FSPYOptions
		trace, dir, out   string
		asJSON            bool
		progMod, policies string
	)
	fs.StringVar(&trace, "trace", "FB-2009", "SWIM `trace`: FB-2009 or FB-2010")
	fs.StringVar(&dir, "trace-dir", "/work/shared/data/traces/swim", "`dir` holding the SWIM files")
	fs.IntVar(&o.Seeds, "seeds", 1, "seeds (rate noise and simulation), from --seed")
	fs.Uint64Var(&o.Seed, "seed", 1, "first `seed`")
	fs.IntVar(&o.Windows, "windows", 0, "run at most `n` windows, evenly spread over the trace (0: all)")
	fs.Float64Var(&o.RateNoise, "rate-noise", 0.3, "`sigma` of the per-job log-normal cost factor (0: durations exact in bytes)")
	fs.Float64Var(&o.Scale, "scale", 0, "`factor` on the trace's bytes, as SWIM's replay tool scales to a smaller cluster (0: none; the tool's for 8 machines: 0.01333 on FB-2009, 0.002667 on FB-2010)")
	fs.Float64Var(&o.AMMemMB, "am-mem", sim.YARNAMMemMB, "`MB` of every job's application master container (-1: none)")
	fs.Float64Var(&o.ProbeShare, "probe-share", sorter.DefaultProbeShare, "fspy's probing queue's `share` of the cluster: probes are jobs run FIFO within it, lent idle capacity beyond it (0: probes are a delay and take nothing)")
	fs.StringVar(&o.Sizes.Predictor, "predictor", "regression", "fspy's size `predictor`: regression, oracle or noisy:SIGMA")
	fs.Float64Var(&o.Sizes.ProbeDelay, "probe-delay", sim.DefaultProbeDelay, "`seconds` from a job's arrival to its prediction")
	fs.Float64Var(&o.Sizes.ProbeNoise, "probe-noise", 0.1, "`sigma` of the probe's sampling error on function times")
	fs.IntVar(&o.History, "history", 1000, "trace jobs before a window the regression learns from first")
	fs.StringVar(&policies, "policies", "fair,capacity,fspy,fsp,fifo", "comma-separated `policies`")
	fs.StringVar(&out, "out", "", "write report.json, windows.csv and SVG plots into `dir`")
	fs.BoolVar(&asJSON, "json", false, "print the report as one JSON object in the issue's shape (windows, groups, fair_slowdown, r2) and whether the model was calibrated (calibrated, calibration)")
	fs.StringVar(&progMod, "progress", "auto", "progress on stderr: auto, always, never")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	file, err := checkFSPYFlags(&o, trace)
	if err != nil {
		return err
	}
	o.Trace, o.Path, o.Policies = strings.ToUpper(trace), filepath.Join(dir, file), splitList(policies)
	show, err := wantProgress(progMod, stderr)
	if err != nil {
		return err
	}
	if show {
		bar := newProgressBar(stderr, "fspy")
		o.Progress = func(done, total int) { bar.update(sim.Progress{Done: int64(done), Total: int64(total)}) }
		defer bar.done()
	}
	rep, err := fspy.RunFSPY(o)
	if err != nil {
		return err
	}
	if out != "" {
		files, err := fspy.WriteFSPYOutputs(out, rep, o.Policies)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d files to %s\n", len(files), out)
	}
	if asJSON {
		// the issue's shape and the calibration; report.json under --out has it all
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep.IssueJSON())
	}
	return fspy.WriteFSPYTable(stdout, rep, o.Policies)
}

// checkFSPYFlags validates the flags and maps their zeros (none) to the
// negatives FSPYOptions reads as none; it returns the trace's file name.
func checkFSPYFlags(o *fspy.FSPYOptions, trace string) (string, error) {
	file, ok := fspyTraces[strings.ToLower(trace)]
	switch {
	case !ok:
		return "", usagef("--trace must be FB-2009 or FB-2010, got %q", trace)
	case o.Seeds < 1 || o.Seeds > 100:
		return "", usagef("--seeds must be 1..100, got %d", o.Seeds)
	case o.Windows < 0:
		return "", usagef("--windows must be >= 0, got %d", o.Windows)
	case o.RateNoise < 0 || o.RateNoise > 2 || o.Sizes.ProbeNoise < 0 || o.Sizes.ProbeNoise > 2:
		return "", usagef("--rate-noise and --probe-noise must be between 0 and 2")
	case o.ProbeShare < 0 || o.ProbeShare > 1:
		return "", usagef("--probe-share must be between 0 and 1, got %v", o.ProbeShare)
	case o.Scale < 0:
		return "", usagef("--scale must be >= 0, got %v", o.Scale)
	case o.Sizes.ProbeDelay < 0 || o.History < 0:
		return "", usagef("--probe-delay and --history must be >= 0")
	}
	if _, err := sim.ParsePredictor(o.Sizes.Predictor, nil, 0); err != nil {
		return "", usagef("--predictor: %v", err)
	}
	if o.RateNoise == 0 {
		o.RateNoise = -1 // FSPYOptions reads 0 as its default
	}
	if o.ProbeShare == 0 {
		o.ProbeShare = -1
	}
	if o.Sizes.ProbeNoise == 0 {
		o.Sizes.ProbeNoise = -1
	}
	if o.Sizes.ProbeDelay == 0 {
		o.Sizes.ProbeDelay = -1
	}
	if o.History == 0 {
		o.History = -1
	}
	return file, nil
}
