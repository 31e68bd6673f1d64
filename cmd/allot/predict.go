package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/allot-sched/allot/framework/predict/profile"
)

func init() {
	register(command{name: "predict", summary: "Prophet's demand predictor: train on event logs, show a predicted profile", run: runPredict})
}

const predictUsage = `Usage: allot predict train --logs DIR --out MODEL
       allot predict show MODEL APP --cores N --input-bytes B [--executors E] [--mem-mb M] [--json]
       allot predict eval --logs DIR [--disk-from device|file] [--json]

Prophet's demand predictor learns, per recurring application and stage, an
executor's stage start and end offsets from its launch and its peak disk and
network bandwidth (MiB/s), from the event logs the framework library writes
(one JSON-lines file per run; see framework/eventlog). For a new setting
(cores per executor, input size) it regresses by least squares on
[1, input GiB, 1/cores, input GiB/cores, cores] when a stage was seen at 7
or more settings, and otherwise copies the nearest observed setting.

  train   read every *.jsonl log under --logs (failed runs and logs older
          than stage keys are skipped) and write the model (JSON) to --out
  show    print the predicted profile of APP at the given setting: one row
          per stage with start and end (s from launch), disk and net peaks,
          and whether the stage was regressed or copied from a near run
  eval    leave-one-setting-out cross-validation on the logs: each run is
          predicted by a model trained on the application's runs at other
          settings, and every stage's start, end, disk and net peak is
          compared with what the run measured: the median relative error
          per target (denominators at least 0.5 s and 1 MiB/s), and the
          share of errors under 10 % (the paper: "mostly less than 10 %")`

func runPredict(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, predictUsage)
		if len(args) == 0 {
			return usagef("name a verb: train or show")
		}
		return nil
	}
	switch args[0] {
	case "train":
		return predictTrain(args[1:], stdout, stderr)
	case "show":
		return predictShow(args[1:], stdout, stderr)
	case "eval":
		return predictEval(args[1:], stdout, stderr)
	}
	return usagef("unknown verb %q (have: train, show, eval)", args[0])
}

func predictTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("predict train", "--logs DIR --out MODEL", "Train the demand predictor on a directory of event logs.", stderr)
	logs := fs.String("logs", "", "directory of event logs (searched recursively for *.jsonl)")
	out := fs.String("out", "", "model file to write (JSON)")
	diskFrom := fs.String("disk-from", "device", "what a stage's disk_bw is learned from: device (block-device I/O) or file (all file I/O, page cache included: what agents with --throttle-io throttle)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *logs == "" || *out == "" || fs.NArg() > 0 {
		return usagef("train needs --logs DIR and --out MODEL and no other arguments")
	}
	runs, skipped, err := loadRuns(*logs, *diskFrom)
	if err != nil {
		return err
	}
	m := profile.Train(runs)
	b, err := profile.MarshalModel(m)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return err
	}
	for app, a := range m.Apps {
		fit := 0
		for _, s := range a.Stages {
			if !m.Fallback(app, s.Key) {
				fit++
			}
		}
		fmt.Fprintf(stdout, "%s: %d runs, %d stages (%d regressed, %d from the nearest run)\n", app, len(a.Runs), len(a.Stages), fit, len(a.Stages)-fit)
	}
	fmt.Fprintf(stdout, "wrote %s (%d runs, %d logs skipped)\n", *out, len(runs), skipped)
	return nil
}

// loadRuns reads the usable runs under dir, learning disk_bw from
// diskFrom (device or file); none is an error that says why.
func loadRuns(dir, diskFrom string) ([]profile.Run, int, error) {
	if diskFrom != "device" && diskFrom != "file" {
		return nil, 0, usagef("--disk-from: want device or file, not %q", diskFrom)
	}
	runs, skipped, err := profile.LoadDirWith(dir, profile.LoadOptions{DiskFromFile: diskFrom == "file"})
	if err != nil {
		return nil, 0, err
	}
	if len(runs) == 0 {
		return nil, 0, fmt.Errorf("no usable runs under %s (%d logs skipped: failed, unfinished, or written before stage keys)", dir, skipped)
	}
	return runs, skipped, nil
}

func predictEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("predict eval", "--logs DIR [--disk-from device|file] [--json]",
		"Cross-validate the demand predictor on a directory of event logs: each run predicted from the\n"+
			"application's runs at other settings, beside what it measured.", stderr)
	logs := fs.String("logs", "", "directory of event logs (searched recursively for *.jsonl)")
	diskFrom := fs.String("disk-from", "device", "what a stage's disk_bw is learned from: device or file (as train)")
	asJSON := fs.Bool("json", false, "print the per-application figures as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *logs == "" || fs.NArg() > 0 {
		return usagef("eval needs --logs DIR and no other arguments")
	}
	runs, skipped, err := loadRuns(*logs, *diskFrom)
	if err != nil {
		return err
	}
	ev := profile.CrossValidate(runs)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"apps": ev, "skipped_logs": skipped})
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "app\truns\theld out\tstages\tregressed\tstart\tend\tdisk\tnet\tall\tunder 10%")
	for _, e := range ev {
		if e.Held == 0 {
			fmt.Fprintf(tw, "%s\t%d\t0\t-\t-\t-\t-\t-\t-\t-\t- (one setting: nothing to learn a new one from)\n", e.App, e.Runs)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t%.0f%%\n", e.App, e.Runs, e.Held, e.Stages, e.Regressed,
			100*e.Median[0], 100*e.Median[1], 100*e.Median[2], 100*e.Median[3], 100*e.All, 100*e.Under10)
		if e.LongStages > 0 {
			fmt.Fprintf(tw, "  stages >= %gs\t\t\t%d\t\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t\n", profile.LongStage, e.LongStages,
				100*e.LongMedian[0], 100*e.LongMedian[1], 100*e.LongMedian[2], 100*e.LongMedian[3], 100*e.LongAll)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "median relative error per stage and target, each run predicted from the others' settings; the\n"+
		"usage samples are 1 s apart, so peaks of shorter stages are whatever sample overlapped them (%d logs skipped)\n", skipped)
	return nil
}

// interleaved parses flags that may come before, between or after the
// positional arguments (flag stops at the first positional one).
func interleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func predictShow(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("predict show", "MODEL APP --cores N --input-bytes B", "Print APP's predicted per-executor profile at a setting.", stderr)
	cores := fs.Int("cores", 0, "cores per executor (required)")
	input := fs.Int64("input-bytes", 0, "input size in bytes (required)")
	execs := fs.Int("executors", 0, "executors E (default: the nearest run's)")
	mem := fs.Int("mem-mb", 0, "memory per executor, MB (default: the nearest run's)")
	asJSON := fs.Bool("json", false, "print the AppDemand as JSON")
	pos, err := interleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || *cores <= 0 || *input <= 0 {
		return usagef("show needs MODEL APP, --cores N > 0 and --input-bytes B > 0")
	}
	b, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	m, err := profile.UnmarshalModel(b)
	if err != nil {
		return err
	}
	st := profile.Setting{Cores: *cores, InputBytes: *input, Executors: *execs, MemMB: *mem}
	d, err := m.Predict(pos[1], st)
	if err != nil {
		return err
	}
	type row struct {
		Key    string  `json:"key"`
		Start  float64 `json:"start_s"`
		End    float64 `json:"end_s"`
		DiskBW float64 `json:"disk_bw"` // MiB/s
		NetBW  float64 `json:"net_bw"`
		From   string  `json:"from"` // fit or near
	}
	out := struct {
		App       string  `json:"app"`
		Executors int     `json:"executors"`
		Cpus      float64 `json:"cpus"`
		Mem       float64 `json:"mem"`
		Stages    []row   `json:"stages"`
	}{App: pos[1], Executors: d.Executors, Cpus: d.Cpus, Mem: d.Mem}
	keys := m.Keys(pos[1], st)
	for k, s := range d.Profile.Stages {
		from := "fit"
		if m.Fallback(pos[1], keys[k]) {
			from = "near"
		}
		out.Stages = append(out.Stages, row{Key: keys[k], Start: s.Start.Seconds(), End: s.End.Seconds(), DiskBW: s.DiskBW, NetBW: s.NetBW, From: from})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(stdout, "%s: E=%d executors of %g cpus, %g MB\n", out.App, out.Executors, out.Cpus, out.Mem)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tstart_s\tend_s\tdisk_MiB/s\tnet_MiB/s\tfrom\tkey\t")
	for k, r := range out.Stages {
		fmt.Fprintf(tw, "%d\t%.2f\t%.2f\t%.1f\t%.1f\t%s\t%s\t\n", k, r.Start, r.End, r.DiskBW, r.NetBW, r.From, r.Key)
	}
	return tw.Flush()
}
