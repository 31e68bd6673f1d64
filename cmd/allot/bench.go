package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/allot-sched/allot/lab/scalebench"
)

func init() {
	register(command{name: "bench", summary: "scale harness: `bench cluster` runs real masters under thousands of simulated agents", run: runBench})
}

func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "cluster" {
		return usagef("usage: allot bench cluster --agents N --frameworks F [--masters 1|3] [--duration D] [--failover] [--json]")
	}
	fs := newFlagSet("bench cluster", "[flags]", "Start real masters on loopback (this binary), --agents simulated agents in this process speaking the\n"+
		"agent protocol over HTTP (tasks \"run\" for a drawn time and report TASK_FINISHED) and --frameworks\n"+
		"framework/sched clients launching small tasks; measure, print the figures, stop everything.", stderr)
	var cfg scalebench.Config
	fs.IntVar(&cfg.Agents, "agents", 1000, "simulated agents")
	fs.IntVar(&cfg.Frameworks, "frameworks", 100, "frameworks")
	fs.IntVar(&cfg.Masters, "masters", 1, "masters: 1 (lone) or 3 (raft)")
	fs.DurationVar(&cfg.Duration, "duration", 30*time.Second, "the measured window, after every agent registered and every framework subscribed")
	fs.BoolVar(&cfg.Failover, "failover", false, "after the window, kill -9 the leader and time the recovery (needs --masters 3)")
	fs.DurationVar(&cfg.AllocationInterval, "allocation-interval", time.Second, "the masters' --allocation-interval")
	fs.IntVar(&cfg.TasksPerFramework, "tasks-per-framework", 10, "tasks each framework keeps in flight")
	fs.DurationVar(&cfg.TaskMin, "task-min", time.Second, "shortest simulated task")
	fs.DurationVar(&cfg.TaskMax, "task-max", 5*time.Second, "longest simulated task")
	fs.StringVar(&cfg.AgentResources, "agent-resources", "cpus:8;mem:16384;disk:100000;ports:[31000-32000]", "each simulated agent's resources")
	fs.StringVar(&cfg.Dir, "work-dir", "", "masters' work dirs and logs (default: a temporary directory, removed)")
	fs.IntVar(&cfg.RaftMultiplier, "raft-multiplier", 1, "the masters' --raft-multiplier (--masters 3): raft's timeouts times this; raise it on a loaded host")
	fs.StringVar(&cfg.ProfilePath, "profile", "", "save the leader's CPU profile over the window to this `file`, and its mutex profile to FILE.mutex (go tool pprof)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if cfg.Agents < 1 || cfg.Frameworks < 1 || (cfg.Masters != 1 && cfg.Masters != 3) || cfg.TaskMax < cfg.TaskMin {
		return usagef("want --agents and --frameworks >= 1, --masters 1 or 3, --task-max >= --task-min")
	}
	if cfg.Failover && cfg.Masters != 3 {
		return usagef("--failover needs --masters 3")
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	cfg.Bin = bin
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := scalebench.Run(ctx, cfg, stderr)
	if rep != nil {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			enc.Encode(rep)
		} else {
			writeBenchReport(stdout, rep)
		}
	}
	return err
}

func writeBenchReport(w io.Writer, r *scalebench.Report) {
	fmt.Fprintf(w, "allot bench cluster: %d agents, %d frameworks, %d master(s) (raft multiplier %d), allocation interval %.1fs, window %.1fs\n",
		r.Agents, r.Frameworks, r.Masters, max(r.RaftMultiplier, 1), r.AllocationInterval, r.Window)
	fmt.Fprintf(w, "load average      %s (start)  %s (end)\n", r.LoadAvgStart, r.LoadAvgEnd)
	fmt.Fprintf(w, "registration      %d/%d agents in %.2fs\n", r.Registered, r.Agents, r.RegisterAll)
	fmt.Fprintf(w, "offer latency     p50 %.1f ms  p99 %.1f ms  max %.1f ms  (%d offers timed; %s)\n",
		r.OfferLatency.P50, r.OfferLatency.P99, r.OfferLatency.Max, r.OfferLatency.N, r.OfferLatencyFrom)
	fmt.Fprintf(w, "launch throughput %.1f tasks/s (TASK_RUNNING seen by frameworks in the window); %d started, %d finished in all\n",
		r.LaunchRate, r.TasksRunning, r.TasksFinished)
	fmt.Fprintf(w, "status updates    p50 %.1f ms  p99 %.1f ms  (%d timed: agent's POST to the framework's UPDATE)\n",
		r.StatusLatency.P50, r.StatusLatency.P99, r.StatusLatency.N)
	fmt.Fprintf(w, "leader            %.1f CPU s in the window (%.1f since start), peak RSS %.0f MiB, %.1f s runnable but waiting for a CPU;\n                  the harness used %.1f CPU s\n",
		r.MasterCPU, r.MasterCPUTotal, r.MasterRSSMiB, r.MasterRunQueue, r.HarnessCPU)
	fmt.Fprintf(w, "raft commit       p50 %.2f ms  p99 %.2f ms  (%.0f commits, allot_master_registry_commit_seconds)\n", r.RaftCommitP50, r.RaftCommitP99, r.RaftCommits)
	if r.AllocCycles >= 0 {
		fmt.Fprintf(w, "allocation        %.0f cycles in the window (the interval's own and those calls triggered)\n", r.AllocCycles)
	}
	if r.CallLockP99 > 0 {
		fmt.Fprintf(w, "calls' lock wait  p50 %.2f ms  p99 %.2f ms  (scheduler and agent calls, queued to answered, allot_master_call_lock_seconds)\n", r.CallLockP50, r.CallLockP99)
	}
	if f := r.Failover; f != nil {
		fmt.Fprintf(w, "failover          leader elected %.2fs, %d agents re-registered (all by %.2fs), offers flow %.2fs after kill -9\n",
			f.Elected, f.Agents, f.Reregistered, f.OffersFlow)
	}
}
