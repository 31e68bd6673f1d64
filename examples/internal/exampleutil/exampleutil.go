// Package exampleutil holds the flags every example shares: where to run
// (--master or --local) and how big the executors are.
package exampleutil

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/allot-sched/allot/framework"
)

// Flags are the runtime flags of an example.
type Flags struct {
	Master, ExecutorBinary, EventLogDir string
	Local, Dynamic, Quiet               bool
	Executors, Cores, MemMB             int
	// Dynamic allocation bounds and timeouts (0: the framework's defaults).
	MinExecutors, MaxExecutors  int
	IdleTimeout, BacklogTimeout time.Duration
	// Prophet's demand predictor: a model from `allot predict train` and
	// the input size to predict for (0: undeclared).
	DemandModel string
	InputBytes  int64
	// Placement picks agents among held offers: first (default) or prophet.
	Placement string
	// Backoff turns on Prophet's task backoff.
	Backoff bool
	// The elastic policy (--elastic and iSpark's parameters).
	Elastic ElasticFlags
	auth    authFlags
}

// Register adds the shared flags to fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Master, "master", "", "Mesos master `host:port` (allot dev: 127.0.0.1:5050)")
	fs.BoolVar(&f.Local, "local", false, "run executors in this process instead of on a cluster")
	fs.IntVar(&f.Executors, "executors", 2, "executors to run")
	fs.IntVar(&f.Cores, "cores", 1, "cores per executor (tasks it runs at once)")
	fs.IntVar(&f.MemMB, "mem", 512, "memory per executor, MB")
	fs.BoolVar(&f.Dynamic, "dynamic", false, "dynamic allocation: scale executors with the task backlog")
	fs.IntVar(&f.MinExecutors, "min-executors", 0, "with --dynamic: never fewer executors (default 1)")
	fs.IntVar(&f.MaxExecutors, "max-executors", 0, "with --dynamic: never more executors (default twice --executors)")
	fs.DurationVar(&f.IdleTimeout, "idle-timeout", 0, "with --dynamic: release an executor idle this long that holds no cached data (default 10s)")
	fs.DurationVar(&f.BacklogTimeout, "backlog-timeout", 0, "with --dynamic: ask for more executors after tasks wait this long (default 1s)")
	fs.StringVar(&f.ExecutorBinary, "executor-binary", "", "path of this binary as agents see it (default: this process's executable)")
	fs.StringVar(&f.EventLogDir, "event-log-dir", "", "directory for the JSON-lines event log (default $TMPDIR/allot-events)")
	fs.BoolVar(&f.Quiet, "quiet", false, "no driver log on stderr")
	fs.StringVar(&f.DemandModel, "demand-model", "", "with --master: declare the profile this `model` (allot predict train) predicts, for Prophet's sorter")
	fs.Int64Var(&f.InputBytes, "input-bytes", 0, "the input size to declare at start (logged for the predictor, and what --demand-model predicts for)")
	fs.BoolVar(&f.Backoff, "backoff", false, "with --master: Prophet's task backoff: dispatch fewer tasks to executors predicted to overuse an agent's disk or network while it delivers far below capacity yet stays busy (reads the master's /state usage rates)")
	fs.StringVar(&f.Placement, "placement", "first", "with --master: choose agents among held offers by offer order (first) or by Prophet's score against the master's /timelines and the declared profile (prophet)")
	f.Elastic.Register(fs)
	f.auth.register(fs)
}

// Context starts a driver for app from the flags.
func (f *Flags) Context(app string) (*framework.Context, error) {
	if f.Master == "" && !f.Local {
		return nil, fmt.Errorf("give --master host:port (a running `allot dev` listens on 127.0.0.1:5050) or --local")
	}
	cfg := framework.Config{App: app, Master: f.Master, Local: f.Local, Executors: f.Executors, Cores: f.Cores, MemMB: f.MemMB,
		Dynamic: f.Dynamic, MinExecutors: f.MinExecutors, MaxExecutors: f.MaxExecutors, IdleTimeout: f.IdleTimeout, BacklogTimeout: f.BacklogTimeout,
		ExecutorBinary: f.ExecutorBinary, EventLogDir: f.EventLogDir, DemandModel: f.DemandModel, InputBytes: f.InputBytes}
	cfg.Placement, cfg.Backoff = f.Placement, f.Backoff
	cred, err := f.auth.credential()
	if err != nil {
		return nil, err
	}
	cfg.Credential, cfg.TLSCA = cred, f.auth.tlsCA
	if f.Quiet {
		cfg.Logf = func(string, ...any) {}
	}
	if err := f.Elastic.apply(&cfg); err != nil {
		return nil, err
	}
	return framework.NewContext(cfg)
}

// Exit prints err (if any) and exits non-zero; after ctx.Close.
func Exit(ctx *framework.Context, err error) {
	if ctx != nil {
		if cerr := ctx.Close(err); err == nil && cerr != nil {
			err = cerr
		}
		fmt.Fprintf(os.Stderr, "event log: %s\n", ctx.EventLog())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
