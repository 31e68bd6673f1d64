package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/master"
)

func init() {
	register(command{name: "master", summary: "run a master (scheduler, operator and agent APIs; registry on raft)", run: runMaster})
}

type masterFlags struct {
	listen, workDir, sorter, selection, mode, weights, logLevel string
	allocInterval, offerTimeout, heartbeat, pingTimeout         time.Duration
}

func addMasterFlags(fs *flag.FlagSet, f *masterFlags) {
	fs.StringVar(&f.listen, "listen", ":5050", "`host:port` for the scheduler API (/api/v1/scheduler), operator API (/api/v1), /state, /health and /metrics")
	fs.StringVar(&f.workDir, "work-dir", "", "`dir`ectory for the registry's raft log and snapshots (required; keep it to keep the registry across restarts)")
	fs.StringVar(&f.sorter, "sorter", "drf", "framework selection criterion: drf, tsf, psdsf, rpsdsf, fifo, capacity, tetris, random, ...")
	fs.StringVar(&f.selection, "agent-selection", "rrr", "agent selection: rrr (randomized round robin), bestfit or joint")
	fs.StringVar(&f.mode, "mode", "oblivious", "oblivious (offer whole agents) or characterized (frameworks declare per-task demands with REQUEST)")
	fs.DurationVar(&f.allocInterval, "allocation-interval", time.Second, "time between batch allocation cycles (events also trigger one)")
	fs.DurationVar(&f.offerTimeout, "offer-timeout", 0, "rescind offers not answered within this `duration` (0: never)")
	fs.DurationVar(&f.heartbeat, "heartbeat-interval", 15*time.Second, "HEARTBEAT events to subscribed schedulers and operators this often")
	fs.DurationVar(&f.pingTimeout, "agent-ping-timeout", 75*time.Second, "an agent whose connection is gone this long is removed and its tasks are lost")
	fs.StringVar(&f.weights, "weights", "", "role weights as `role=weight,...` (default 1 each)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
}

func parseWeights(s string) (map[string]float64, error) {
	out := map[string]float64{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want role=weight", part)
		}
		w, err := strconv.ParseFloat(v, 64)
		if err != nil || !(w > 0) {
			return nil, fmt.Errorf("%q: weight must be a positive number", part)
		}
		out[k] = w
	}
	return out, nil
}

func newLogger(w io.Writer, level, component string) (zerolog.Logger, error) {
	lv, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Logger{}, usagef("--log-level: %v", err)
	}
	return zerolog.New(w).Level(lv).With().Timestamp().Str("component", component).Logger(), nil
}

func (f *masterFlags) config(fs *flag.FlagSet, log zerolog.Logger) (master.Config, error) {
	w, err := parseWeights(f.weights)
	if err != nil {
		return master.Config{}, usagef("--weights: %v", err)
	}
	flags := map[string]string{}
	fs.VisitAll(func(fl *flag.Flag) { flags[fl.Name] = fl.Value.String() })
	return master.Config{Listen: f.listen, WorkDir: f.workDir, Sorter: f.sorter, AgentSelection: f.selection, Mode: f.mode,
		AllocationInterval: f.allocInterval, OfferTimeout: f.offerTimeout, HeartbeatInterval: f.heartbeat,
		AgentPingTimeout: f.pingTimeout, Weights: w, Log: log, Flags: flags}, nil
}

func runMaster(args []string, stdout, stderr io.Writer) error {
	var f masterFlags
	fs := newFlagSet("master", "[flags]", "Run an allot master: the Mesos v1 scheduler API, operator API, agent protocol and the\nregistry (agents, frameworks, tasks, config) replicated through raft in --work-dir.", stderr)
	addMasterFlags(fs, &f)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if f.workDir == "" {
		return usagef("--work-dir is required")
	}
	log, err := newLogger(stderr, f.logLevel, "master")
	if err != nil {
		return err
	}
	cfg, err := f.config(fs, log)
	if err != nil {
		return err
	}
	m, err := master.New(cfg)
	if err != nil {
		return err
	}
	if err := m.Start(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "allot master listening on %s\n", m.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return m.Stop(sctx)
}
