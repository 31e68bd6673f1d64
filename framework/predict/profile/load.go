package profile

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/allot-sched/allot/framework/eventlog"
)

// mib converts the log's B/s to the profile's MiB/s.
const mib = 1 << 20

// FromEvents turns one run's event log into a Run. ok is false for a run
// the predictor must not learn from: no application_start, a failed or
// unfinished run (its stages stop early), or a log older than stage keys.
func FromEvents(evs []eventlog.Event) (r Run, ok bool) { return FromEventsWith(evs, LoadOptions{}) }

// LoadOptions choose what a run's disk demand is.
type LoadOptions struct {
	// DiskFromFile learns a stage's disk_bw from the executors' file I/O
	// (the log's file_bw_peak: input reads, spills, saved output, page
	// cache hits included) rather than their block-device I/O
	// (disk_bw_peak). On agents that throttle file I/O to their advertised
	// disk_bw (--throttle-io), file I/O is what binds, while cached inputs
	// show no device I/O at all.
	DiskFromFile bool
}

// FromEventsWith is FromEvents with options.
func FromEventsWith(evs []eventlog.Event, opt LoadOptions) (r Run, ok bool) {
	type acc struct {
		start, end, disk, net float64
		n                     int // executor windows
	}
	stages := map[string]*acc{}
	var started, succeeded bool
	var readBytes int64
	for _, ev := range evs {
		switch e := ev.(type) {
		case *eventlog.ApplicationStart:
			started = true
			r.App = e.App
			r.Setting = Setting{Cores: e.Settings.Cores, InputBytes: e.InputBytes, Executors: e.Settings.Executors, MemMB: e.Settings.MemMB}
		case *eventlog.ApplicationEnd:
			succeeded, readBytes = e.Success, e.InputBytes
		case *eventlog.ExecutorStage:
			if e.StageKey == "" {
				continue
			}
			a := stages[e.StageKey]
			if a == nil {
				a = &acc{}
				stages[e.StageKey] = a
			}
			// the mean is over executor windows: a stage run again on an
			// executor (lost outputs) counts as another window, a small
			// distortion for rare retries
			a.n++
			a.start += e.StartOffsetS
			a.end += e.EndOffsetS
			disk := e.DiskBWPeak
			if opt.DiskFromFile {
				disk = e.FileBWPeak
			}
			a.disk = math.Max(a.disk, disk/mib)
			a.net = math.Max(a.net, e.NetBWPeak/mib)
		}
	}
	if !started || !succeeded || len(stages) == 0 {
		return Run{}, false
	}
	if r.Setting.InputBytes == 0 {
		// undeclared at start: what it read is the best measure of its input
		r.Setting.InputBytes = readBytes
	}
	for key, a := range stages {
		n := a.n
		r.Stages = append(r.Stages, StageObs{Key: key, Start: a.start / float64(n), End: a.end / float64(n), DiskBW: a.disk, NetBW: a.net})
	}
	sort.Slice(r.Stages, func(i, j int) bool { return r.Stages[i].Start < r.Stages[j].Start })
	return r, true
}

// LoadDir reads every *.jsonl event log under dir (recursively) and
// returns the runs the predictor can learn from, and how many logs it
// skipped (failed, unfinished, or older than stage keys).
func LoadDir(dir string) (runs []Run, skipped int, err error) { return LoadDirWith(dir, LoadOptions{}) }

// LoadDirWith is LoadDir with options.
func LoadDirWith(dir string, opt LoadOptions) (runs []Run, skipped int, err error) {
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".jsonl" {
			return err
		}
		evs, err := eventlog.ReadFile(path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if r, ok := FromEventsWith(evs, opt); ok {
			runs = append(runs, r)
		} else {
			skipped++
		}
		return nil
	})
	return runs, skipped, err
}
