package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/report"
	"github.com/allot-sched/allot/sim/trace"
	"github.com/allot-sched/allot/sorter"
)

func init() {
	register(command{
		name:    "sim",
		summary: "replay a workload through the real allocator and compare sorters",
		run:     runSim,
	})
}

const simDescription = `Simulates the workload in virtual time with the allocator the master runs,
once per combination of --sorter, --agent-selection and --mode, and prints a
comparison table: makespan, job completion time percentiles, mean wait,
utilisation per resource, Jain's index over dominant shares and the ratio of
makespan to a lower bound no schedule can beat.

Formats: allot (jobs CSV: job_id,submit_s,framework,tasks,duration_s,cpus,mem_mb
[,gpus,disk_bw,net_bw]; rows of one job run in file order as stages), swim
(SWIM's Facebook samples), alibaba2017 (CloudSimPy's jobs.csv).
Clusters: --nodes FILE (node_id,cpus,mem_mb[,gpus,disk_bw,net_bw,count]) or
--cluster SPEC, e.g. "2xcpus=4,mem=14G+2xcpus=8,mem=8G", or a preset.
Sorters: drf, tsf, psdsf, rpsdsf, fifo, capacity, tetris, random, prophet,
tetris-peak (gangs of applications that declared an AppDemand), and the
papers' names bf-drf (drf with best fit) and fair (drf); NAME/SELECTION picks
an agent selection for one sorter.
What-if (any format, applied after loading, shown in the report's header):
--time-scale F compresses (F<1) or stretches arrivals, --duration-scale F
task times, --nodes-sample P keeps a seeded fraction of the nodes and
--cluster-scale K makes K copies of each.`

// simOptions are the parsed flags of `allot sim`.
type simOptions struct {
	jobs, generate             string
	nodes, cluster, format     string
	sorters, selections, modes string
	out                        string
	json                       bool
	seed                       uint64
	interval                   time.Duration
	refuse                     float64
	machineMemGB               float64
	rateNoise                  float64
	maxJobs                    int
	progress                   string
	sizes                      sim.SizeOptions // fsp, fspy
	whatIf                     trace.WhatIf    // --time-scale, --duration-scale, --nodes-sample, --cluster-scale
	rolesFile                  string          // --roles
	roles                      *sim.Roles
}

func runSim(args []string, stdout, stderr io.Writer) error {
	o, err := parseSimFlags(args, stderr)
	if err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	showProgress, err := wantProgress(o.progress, stderr)
	if err != nil {
		return err
	}
	format, err := trace.ParseFormat(o.format)
	if err != nil {
		return usagef("--format: %v", err)
	}
	if o.rateNoise > 0 && (format != trace.FormatSWIM || o.generate != "") {
		return usagef("--rate-noise applies to --format swim only")
	}
	if o.roles, err = readSimRoles(o.rolesFile); err != nil {
		return err
	}
	configs, err := simConfigs(o, stderr)
	if err != nil {
		return err
	}
	w, whatIf, err := loadWorkload(o, format)
	if err != nil {
		return err
	}
	runs, wall, err := runSimConfigs(w, configs, showProgress, stderr)
	if err != nil {
		return err
	}
	return writeSimResults(o, w, whatIf, runs, wall, stdout, stderr)
}

// parseSimFlags reads the flags of `allot sim`.
func parseSimFlags(args []string, stderr io.Writer) (simOptions, error) {
	var o simOptions
	fs := newFlagSet("sim", "--jobs FILE [--nodes FILE | --cluster SPEC] [flags]", simDescription, stderr)
	fs.StringVar(&o.jobs, "jobs", "", "workload `file` (or --generate)")
	fs.StringVar(&o.generate, "generate", "", "instead of --jobs, generate a `workload`: psdsf-online (the paper's Pi and WordCount queues) or synthetic (100 mixed jobs); --seed seeds it")
	fs.StringVar(&o.nodes, "nodes", "", "nodes CSV `file`")
	fs.StringVar(&o.cluster, "cluster", "", "cluster `spec` or preset ("+strings.Join(trace.ClusterPresets(), ", ")+"); default: the format's usual cluster")
	fs.StringVar(&o.format, "format", "allot", "workload `format`: allot, swim or alibaba2017")
	fs.StringVar(&o.sorters, "sorter", "drf", "comma-separated `sorters` to compare")
	fs.StringVar(&o.selections, "agent-selection", "rrr", "comma-separated agent `selections`: rrr, bestfit, joint")
	fs.StringVar(&o.modes, "mode", "characterized", "comma-separated `modes`: oblivious, characterized")
	fs.StringVar(&o.rolesFile, "roles", "", "roles `file` (JSON): weights, quota and static or timed reservations per role, given to the allocator as the master gives them (docs/roles.md, example docs/sim-roles-example.json); adds a table by role")
	fs.StringVar(&o.out, "out", "", "write CSV series, SVG plots and index.html into `dir`")
	fs.BoolVar(&o.json, "json", false, "print one JSON object {\"runs\":[...]} instead of the table")
	fs.Uint64Var(&o.seed, "seed", 1, "random `seed` (agent shuffles, random sorter)")
	fs.DurationVar(&o.interval, "interval", time.Second, "allocation `interval` (virtual time)")
	fs.Float64Var(&o.refuse, "refuse-seconds", allocator.DefaultRefuseSeconds, "filter `seconds` frameworks attach to declines (0: none)")
	fs.Float64Var(&o.machineMemGB, "machine-mem-gb", trace.DefaultMachineMemMB/1024, "alibaba2017: machine memory in `GiB` that normalised memory is scaled by")
	fs.Float64Var(&o.rateNoise, "rate-noise", 0, "swim: `sigma` of a per-job log-normal cost factor on task times, seeded by --seed (0: durations exact in bytes; 0.3 suggested for size prediction)")
	fs.StringVar(&o.sizes.Predictor, "predictor", "oracle", "fspy: job-size `predictor` at the probe: oracle, noisy:SIGMA or regression")
	fs.Float64Var(&o.sizes.ProbeDelay, "probe-delay", sim.DefaultProbeDelay, "fspy: `seconds` from a job's arrival to its size prediction")
	fs.Float64Var(&o.sizes.ProbeNoise, "probe-noise", 0, "fspy, swim: `sigma` of the probe's log-normal sampling error on function times (0: a perfect probe)")
	fs.IntVar(&o.maxJobs, "max-jobs", 0, "keep only the first `n` jobs (0: all)")
	fs.Float64Var(&o.whatIf.TimeScale, "time-scale", 1, "what-if: multiply the time from the first arrival to each job's arrival by `F` (0.5: twice the arrival rate)")
	fs.Float64Var(&o.whatIf.DurationScale, "duration-scale", 1, "what-if: multiply every task's running time by `F`")
	fs.Float64Var(&o.whatIf.NodesSample, "nodes-sample", 1, "what-if: keep a `fraction` of the nodes, drawn with --seed (0.5: half the machines)")
	fs.IntVar(&o.whatIf.ClusterScale, "cluster-scale", 1, "what-if: `K` copies of each node (after --nodes-sample)")
	fs.StringVar(&o.progress, "progress", "auto", "progress bar on stderr: auto (when stderr is a terminal), always, never")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, usagef("unexpected argument %q", fs.Arg(0))
	}
	return o, nil
}

// check validates the flags together, and settles the ones other flags or
// defaults complete.
func (o *simOptions) check() error {
	if (o.jobs == "") == (o.generate == "") {
		return usagef("give --jobs FILE or --generate NAME (one of them)")
	}
	if o.nodes != "" && o.cluster != "" {
		return usagef("give --nodes or --cluster, not both")
	}
	if o.interval <= 0 {
		return usagef("--interval must be positive, got %v", o.interval)
	}
	if o.refuse < 0 {
		return usagef("--refuse-seconds must be >= 0, got %v", o.refuse)
	}
	if o.machineMemGB <= 0 {
		return usagef("--machine-mem-gb must be positive, got %v", o.machineMemGB)
	}
	if o.rateNoise < 0 || o.rateNoise > 2 {
		return usagef("--rate-noise must be between 0 and 2, got %v", o.rateNoise)
	}
	if _, err := sim.ParsePredictor(o.sizes.Predictor, nil, 0); err != nil {
		return usagef("--predictor: %v", err)
	}
	if o.sizes.ProbeDelay < 0 || o.sizes.ProbeNoise < 0 || o.sizes.ProbeNoise > 2 {
		return usagef("--probe-delay must be >= 0 and --probe-noise between 0 and 2")
	}
	if o.sizes.ProbeDelay == 0 {
		o.sizes.ProbeDelay = -1 // at arrival: SizeOptions reads 0 as the default
	}
	if o.whatIf.TimeScale <= 0 || o.whatIf.DurationScale <= 0 || o.whatIf.NodesSample <= 0 || o.whatIf.ClusterScale < 1 {
		return usagef("--time-scale, --duration-scale and --nodes-sample must be positive and --cluster-scale at least 1")
	}
	if err := o.whatIf.Check(); err != nil {
		return usagef("%v", err)
	}
	o.whatIf.Seed = o.seed
	if o.maxJobs < 0 {
		return usagef("--max-jobs must be >= 0, got %d", o.maxJobs)
	}
	return nil
}

// runSimConfigs runs the workload under each configuration, with a
// progress bar per run when asked; it returns the results and each run's
// wall-clock seconds.
func runSimConfigs(w *sim.Workload, configs []sim.Config, showProgress bool, stderr io.Writer) ([]*sim.Result, []float64, error) {
	var runs []*sim.Result
	var wall []float64
	for _, cfg := range configs {
		var bar *progressBar
		if showProgress {
			bar = newProgressBar(stderr, cfg.Policy.Label()+" "+cfg.Mode.String())
			cfg.Progress = bar.update
		}
		start := time.Now()
		r, err := sim.Run(w, cfg)
		bar.done()
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", cfg.Policy.Label(), cfg.Mode, err)
		}
		runs = append(runs, r)
		wall = append(wall, time.Since(start).Seconds())
	}
	return runs, wall, nil
}

// writeSimResults writes --out's files, then the JSON or the table.
func writeSimResults(o simOptions, w *sim.Workload, whatIf *trace.WhatIfReport, runs []*sim.Result, wall []float64, stdout, stderr io.Writer) error {
	if o.out != "" {
		files, err := report.WriteOutputs(o.out, w.Name, runs)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d files to %s (open %s)\n", len(files), o.out, filepath.Join(o.out, "index.html"))
	}
	if o.json {
		return report.WriteReport(stdout, report.Report{WhatIf: whatIf, Runs: runs})
	}
	fmt.Fprintf(stdout, "workload %s: %d nodes\n", w.Name, len(w.Nodes))
	if whatIf != nil {
		fmt.Fprintf(stdout, "what-if: %s\n", whatIf)
	}
	fmt.Fprintln(stdout)
	return report.WriteTable(stdout, runs, wall)
}

// simConfigs is the cross product of the sorters, selections and modes.
// Combinations the allocator rejects (best fit with a per-agent sorter)
// are skipped with a note when others remain, and are an error otherwise.
func simConfigs(o simOptions, stderr io.Writer) ([]sim.Config, error) {
	var sels []sorter.AgentSelection
	for _, s := range splitList(o.selections) {
		sel, err := sorter.ParseAgentSelection(s)
		if err != nil {
			return nil, usagef("--agent-selection: %v", err)
		}
		sels = append(sels, sel)
	}
	var modes []allocator.Mode
	for _, s := range splitList(o.modes) {
		m, err := allocator.ParseMode(s)
		if err != nil {
			return nil, usagef("--mode: %v", err)
		}
		modes = append(modes, m)
	}
	names := splitList(o.sorters)
	if len(names) == 0 || len(sels) == 0 || len(modes) == 0 {
		return nil, usagef("--sorter, --agent-selection and --mode each need at least one value")
	}
	var out []sim.Config
	var skipped []string
	seen := map[string]bool{}
	for _, m := range modes {
		for _, name := range names {
			for _, sel := range sels {
				p, err := sim.ParsePolicy(name, sel)
				if err != nil {
					return nil, usagef("--sorter: %v", err)
				}
				key := p.Label() + "/" + p.Selection.String() + "/" + m.String()
				if seen[key] {
					continue // an alias fixed the selection: one run is enough
				}
				seen[key] = true
				if err := p.Check(m); err != nil {
					skipped = append(skipped, fmt.Sprintf("%s with %s: %v", p.Name, p.Selection, err))
					continue
				}
				out = append(out, sim.Config{Policy: p, Mode: m, Seed: o.seed, Interval: o.interval, RefuseSeconds: refuseFlag(o.refuse), Sizes: o.sizes, Roles: o.roles})
			}
		}
	}
	if len(out) == 0 {
		return nil, usagef("no valid combination: %s", strings.Join(skipped, "; "))
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "allot sim: skipping %s\n", s)
	}
	return out, nil
}

// refuseFlag maps the flag's 0 (no filter) to the simulator's negative.
func refuseFlag(v float64) float64 {
	if v == 0 {
		return -1
	}
	return v
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// loadWorkload reads or generates the workload and its nodes, then
// reshapes it with the what-if knobs (nil report when none is set).
func loadWorkload(o simOptions, format trace.Format) (*sim.Workload, *trace.WhatIfReport, error) {
	w, err := loadNodesAndJobs(o, format)
	if err != nil {
		return nil, nil, err
	}
	var rep *trace.WhatIfReport
	if o.whatIf.Active() {
		var r trace.WhatIfReport
		if w, r, err = o.whatIf.Apply(w); err != nil {
			return nil, nil, usagef("%v", err)
		}
		rep = &r
	}
	return w, rep, w.Validate()
}

func loadNodesAndJobs(o simOptions, format trace.Format) (*sim.Workload, error) {
	var w *sim.Workload
	switch o.generate {
	case "":
		jobs, err := trace.LoadJobs(o.jobs, format, trace.TraceOptions{
			MachineMemMB: o.machineMemGB * 1024, MaxJobs: o.maxJobs, RateNoise: o.rateNoise, NoiseSeed: o.seed})
		if err != nil {
			return nil, err
		}
		w = &sim.Workload{Name: filepath.Base(o.jobs), Jobs: jobs}
	case "psdsf-online":
		w = &sim.Workload{Name: "psdsf-online", Jobs: sim.OnlineJobs(sim.OnlineSpec{Seed: o.seed})}
	case "synthetic":
		w = &sim.Workload{Name: "synthetic", Jobs: sim.SyntheticJobs(sim.SyntheticSpec{Seed: o.seed, Bandwidth: true})}
	default:
		return nil, usagef("--generate: unknown workload %q: choose psdsf-online or synthetic", o.generate)
	}
	if o.generate != "" && o.maxJobs > 0 && len(w.Jobs) > o.maxJobs {
		w.Jobs = w.Jobs[:o.maxJobs]
	}
	var err error
	switch {
	case o.nodes != "":
		w.Nodes, err = trace.LoadNodesCSV(o.nodes)
	case o.cluster != "":
		w.Nodes, err = trace.ParseCluster(o.cluster)
		if err != nil {
			err = usagef("--cluster: %v", err)
		}
	default:
		spec := trace.DefaultCluster(format)
		if o.generate != "" {
			spec = "psdsf-hetero"
		}
		if spec == "" {
			return nil, usagef("give --nodes FILE or --cluster SPEC (presets: %s)", strings.Join(trace.ClusterPresets(), ", "))
		}
		w.Nodes, err = trace.ParseCluster(spec)
	}
	return w, err
}

// wantProgress decides whether to draw the progress bar.
func wantProgress(mode string, stderr io.Writer) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		return isTerminal(stderr), nil
	}
	return false, usagef("--progress: want auto, always or never, got %q", mode)
}

// progressBar draws "label [=====>    ] 42% t=1234s" on one line of
// stderr, at most ten times a second and only once a run has lasted a
// second: short runs print nothing.
type progressBar struct {
	w           io.Writer
	label       string
	start, last time.Time
	drawn       bool
}

func newProgressBar(w io.Writer, label string) *progressBar {
	return &progressBar{w: w, label: label, start: time.Now()}
}

func (b *progressBar) update(p sim.Progress) {
	now := time.Now()
	if now.Sub(b.start) < time.Second || now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last = now
	frac := 0.0
	if p.Total > 0 {
		frac = float64(p.Done) / float64(p.Total)
	}
	const width = 30
	n := int(frac * width)
	bar := strings.Repeat("=", n)
	if n < width {
		bar += ">" + strings.Repeat(" ", width-n-1)
	}
	fmt.Fprintf(b.w, "\r%-28s [%s] %3.0f%% t=%.0fs %s elapsed ", b.label, bar, 100*frac, p.Now, now.Sub(b.start).Round(time.Second))
	b.drawn = true
}

func (b *progressBar) done() {
	if b != nil && b.drawn {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", 90))
	}
}

// readSimRoles reads --roles; nil when not given.
func readSimRoles(path string) (*sim.Roles, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("--roles: %v", err)
	}
	defer f.Close()
	r, err := sim.ReadRoles(f)
	if err != nil {
		return nil, usagef("--roles %s: %v", path, err)
	}
	return r, nil
}
