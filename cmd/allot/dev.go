package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/agent"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/loglevel"
	"github.com/allot-sched/allot/master"
)

func init() {
	register(command{name: "dev", summary: "a local cluster: a master and N agents on loopback (Ctrl-C stops it)", run: runDev})
}

// devFlags are allot dev's flags: the master's own plus the local agents'.
type devFlags struct {
	mf         masterFlags
	agents     int
	resources  string
	keep       bool
	isolation  string
	gpuRoot    string // --gpu-device-root and --nvidia-smi, as allot agent's
	smi        string
	throttle   bool
	usageEvery time.Duration
	tls        bool
	auth       bool
}

func parseDevFlags(args []string, stderr io.Writer) (*devFlags, *flag.FlagSet, error) {
	var f devFlags
	fs := newFlagSet("dev", "[flags]", "Run a master and --agents agents in this process on loopback, with temporary work dirs.\nCtrl-C stops everything (executors included) and removes the work dirs unless --keep.", stderr)
	addMasterFlags(fs, &f.mf)
	fs.IntVar(&f.agents, "agents", 2, "number of agents")
	fs.StringVar(&f.resources, "resources", "cpus:4;mem:4096;disk:20000;ports:[31000-32000]", "resources of each agent, Mesos form")
	fs.BoolVar(&f.keep, "keep", false, "keep the work dirs after stopping")
	fs.StringVar(&f.isolation, "isolation", "", "agents' isolation: auto (cgroups when writable, else posix), cgroups/cpu,cgroups/mem or posix/cpu,posix/mem; add disk/du for sandbox disk quotas, gpu/nvidia to give each task only its GPUs (see allot agent --help)")
	fs.StringVar(&f.gpuRoot, "gpu-device-root", "/", "agents' `dir` holding dev/nvidia* and proc/driver/nvidia (see allot agent --help; tools/gpu-check.sh --fake gives a fake tree)")
	fs.StringVar(&f.smi, "nvidia-smi", "nvidia-smi", "`path` of the nvidia-smi the agents ask to detect GPUs")
	fs.BoolVar(&f.throttle, "throttle-io", false, "agents make their advertised disk_bw and net_bw real for the framework library's executors (a token bucket per agent and device)")
	fs.DurationVar(&f.usageEvery, "usage-interval", 10*time.Second, "each agent reports usage to the master this often (the co-location bandit learns from it)")
	fs.BoolVar(&f.tls, "tls", false, "serve TLS everywhere with a throwaway CA and certificate made in the work dir (prints how clients use it)")
	fs.BoolVar(&f.auth, "auth", false, "switch authentication on: write a throwaway credentials file, start the master with every\n--authenticate-* flag and the agents with --credential and --authenticate-http-executors, and print the\nprincipal and secret to use")
	fs.Set("listen", "127.0.0.1:5050")
	fs.Set("log-level", "warn")
	// A local cluster's clients (allot run) notice a silent master after
	// three missed heartbeats: seconds here, not Mesos's 45.
	fs.Set("heartbeat-interval", "2s")
	if err := parseFlags(fs, args); err != nil {
		return nil, nil, err
	}
	if err := absDirFlags(fs); err != nil {
		return nil, nil, err
	}
	if f.agents < 0 || f.agents > 64 {
		return nil, nil, usagef("--agents must be between 0 and 64")
	}
	return &f, fs, nil
}

// devAuth is what --auth hands the agents and prints for the operator.
type devAuth struct {
	agentCred *auth.Credential
	opCred    auth.Credential
	agentHTTP agent.HTTPAuthn
}

// devSecure makes the throwaway TLS files and credentials --tls and --auth
// ask for under dir, and points the master's flags at them.
func devSecure(f *devFlags, dir string) (devAuth, error) {
	var da devAuth
	if f.tls {
		files, err := devTLS(dir)
		if err != nil {
			return da, err
		}
		f.mf.tls = tlsFlags{cert: files.Cert, key: files.Key, ca: files.CA}
	}
	if f.auth {
		file, op, ag, err := devCredentials(filepath.Join(dir, "auth"))
		if err != nil {
			return da, err
		}
		f.mf.authn = authnFlags{credentials: file, frameworks: true, agents: true, httpReadWrite: true, httpReadOnly: true}
		da.agentCred, da.opCred = &ag, op
		// The agents accept the master's principals: the master's sandbox
		// proxy forwards the caller's credential to them.
		if da.agentHTTP, _, err = (agentHTTPFlags{credentials: file, readOnly: true, readWrite: true}).config(); err != nil {
			return da, err
		}
	}
	return da, nil
}

func runDev(args []string, stdout, stderr io.Writer) error {
	f, fs, err := parseDevFlags(args, stderr)
	if err != nil {
		return err
	}
	lv, err := zerolog.ParseLevel(f.mf.logLevel)
	if err != nil {
		return usagef("--log-level: %v", err)
	}
	// Caught from the start: a SIGTERM while the cluster starts (a
	// supervisor stopping it early) must still stop it and remove the
	// work dirs, as Ctrl-C does, instead of killing the process midway.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	followGoRun()
	// One process, one level: the master's and the agents' operator APIs
	// share the control (internal/loglevel).
	logLevel := loglevel.Global(lv)
	base := zerolog.New(zerolog.ConsoleWriter{Out: stderr, TimeFormat: "15:04:05.000", NoColor: !isTerminal(stderr)}).With().Timestamp().Logger()
	dir := f.mf.workDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "allot-dev-"); err != nil {
			return err
		}
		f.mf.workDir = filepath.Join(dir, "master")
	}
	if !f.keep {
		defer os.RemoveAll(dir)
	}
	da, err := devSecure(f, dir)
	if err != nil {
		return err
	}
	cfg, err := f.mf.config(fs, base.With().Str("component", "master").Logger())
	if err != nil {
		return err
	}
	cfg.LogLevel = logLevel
	m, err := master.New(cfg)
	if err != nil {
		return err
	}
	if err := m.Start(); err != nil {
		return err
	}
	agents, err := startDevAgents(f, da, m, dir, base, logLevel)
	stopAll := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, a := range agents {
			a.Stop(ctx)
		}
		m.Stop(ctx)
	}
	if err != nil {
		stopAll()
		return err
	}
	printDevBanner(stdout, f, da, cfg, m.Addr(), dir)
	<-ctx.Done()
	fmt.Fprintln(stdout, "allot dev: stopping")
	stopAll()
	return nil
}

// startDevAgents starts --agents agents on the master's loopback host. On
// an error it returns the agents started so far, for the caller to stop.
func startDevAgents(f *devFlags, da devAuth, m *master.Master, dir string, base zerolog.Logger, logLevel *loglevel.Control) ([]*agent.Agent, error) {
	var agents []*agent.Agent
	host, _, _ := net.SplitHostPort(m.Addr())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	for i := 0; i < f.agents; i++ {
		a, err := agent.New(agent.Config{Masters: []string{m.Addr()}, Listen: net.JoinHostPort(host, "0"),
			WorkDir: filepath.Join(dir, fmt.Sprintf("agent%d", i)), Resources: f.resources, KillExecutorsOnStop: true, ThrottleIO: f.throttle,
			UsageInterval: f.usageEvery, Isolation: f.isolation, GPUDeviceRoot: f.gpuRoot, NvidiaSMI: f.smi, TLS: f.mf.tls.files(), Credential: da.agentCred, AuthenticateExecutors: f.auth,
			HTTPAuthn: da.agentHTTP, LogLevel: logLevel, Version: master.Version,
			Log: base.With().Str("component", fmt.Sprintf("agent%d", i)).Logger()})
		if err == nil {
			err = a.Start()
		}
		if err != nil {
			return agents, fmt.Errorf("agent %d: %w", i, err)
		}
		agents = append(agents, a)
	}
	return agents, nil
}
