package exampleutil

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/allot-sched/allot/framework"
	"github.com/allot-sched/allot/framework/elastic"
)

// ElasticFlags choose the elastic executor policy: dynamic
// allocation as today, or iSpark (DF) and its CPU-only variant (CF), with
// the paper's parameters, and the test hooks that make a scale-down
// deterministic.
type ElasticFlags struct {
	Elastic           string
	Gamma, H, Theta   float64
	MonitorEpoch      time.Duration
	OthersWaitingFile string
	ForceUtilisation  float64
	HandoffPause      time.Duration
	AwaitScaleDown    time.Duration
	GateAfterJobs     int
	GateFile          string
}

// Register adds the elastic flags to fs.
func (f *ElasticFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Elastic, "elastic", "", "elastic executor policy: dynamic (as --dynamic), ispark (iSpark, dominant factor) or cf (iSpark, CPU only); default: --dynamic decides")
	fs.Float64Var(&f.Gamma, "ispark-gamma", elastic.DefaultGamma, "iSpark: an executor at or below this utilisation may give back while others wait")
	fs.Float64Var(&f.H, "ispark-h", elastic.DefaultH, "iSpark: ask for one more executor when one runs above h x min(theta, U_max)")
	fs.Float64Var(&f.Theta, "ispark-theta", elastic.DefaultTheta, "iSpark: the utilisation an executor may be packed to (capped by its U_max)")
	fs.DurationVar(&f.MonitorEpoch, "monitor-epoch", 0, "utilisation monitoring epoch, logged as executor_utilisation (default 5s with --elastic ispark|cf, else off)")
	fs.StringVar(&f.OthersWaitingFile, "ispark-others-waiting-file", "", "test hook: others are taken to wait while this `file` exists (instead of inverse offers)")
	fs.Float64Var(&f.ForceUtilisation, "ispark-force-util", 0, "test hook: iSpark sees this utilisation for every measured executor")
	fs.DurationVar(&f.HandoffPause, "ispark-handoff-pause", 0, "test hook: pause this long after each partition a handoff moves, or until the giver is lost")
	fs.IntVar(&f.GateAfterJobs, "test-gate-after-jobs", 0, "test hook: with --test-gate-file, hold every job after this many until the file exists")
	fs.StringVar(&f.GateFile, "test-gate-file", "", "test hook: the `file` whose existence lets jobs past --test-gate-after-jobs run")
	fs.DurationVar(&f.AwaitScaleDown, "ispark-await-scale-down", 0, "test hook: once a partition is cached, hold each job up to this long until the first scale-down is carried out")
}

// apply sets cfg's scaling from the flags.
func (f *ElasticFlags) apply(cfg *framework.Config) error {
	cfg.MonitorEpoch, cfg.ForceUtilisation, cfg.HandoffPause, cfg.AwaitScaleDown = f.MonitorEpoch, f.ForceUtilisation, f.HandoffPause, f.AwaitScaleDown
	if path, after := f.GateFile, f.GateAfterJobs; path != "" {
		cfg.JobGate = func(done int) bool { return done < after || exists(path) }
	}
	if path := f.OthersWaitingFile; path != "" {
		cfg.OthersWaiting = func() bool { return exists(path) }
	}
	switch f.Elastic {
	case "":
		return nil
	case "dynamic":
		cfg.Dynamic = true
		return nil
	case "ispark", "cf":
	default:
		return fmt.Errorf("--elastic %q: want dynamic, ispark or cf", f.Elastic)
	}
	cfg.Dynamic, cfg.DemandFollowsTarget = true, true
	if cfg.MonitorEpoch == 0 {
		cfg.MonitorEpoch = 5 * time.Second
	}
	// The backlog rule underneath (Scale) takes the dynamic-allocation
	// settings, filled in by the framework's defaults.
	cfg.Scaling = elastic.ISpark{Gamma: f.Gamma, H: f.H, Theta: f.Theta, CPUOnly: f.Elastic == "cf"}
	return nil
}

// exists says whether a test hook's file is there.
func exists(path string) bool { _, err := os.Stat(path); return err == nil }
