package main

import (
	"context"
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
	"github.com/allot-sched/allot/internal/tlsconf"
	"github.com/allot-sched/allot/master"
)

func init() {
	register(command{name: "dev", summary: "a local cluster: a master and N agents on loopback (Ctrl-C stops it)", run: runDev})
}

func runDev(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dev", "[flags]", "Run a master and --agents agents in this process on loopback, with temporary work dirs.\nCtrl-C stops everything (executors included) and removes the work dirs unless --keep.", stderr)
	var mf masterFlags
	addMasterFlags(fs, &mf)
	n := fs.Int("agents", 2, "number of agents")
	res := fs.String("resources", "cpus:4;mem:4096;disk:20000;ports:[31000-32000]", "resources of each agent, Mesos form")
	keep := fs.Bool("keep", false, "keep the work dirs after stopping")
	isolation := fs.String("isolation", "", "agents' isolation: auto (cgroups when writable, else posix), cgroups/cpu,cgroups/mem or posix/cpu,posix/mem; add disk/du for sandbox disk quotas (see allot agent --help)")
	throttle := fs.Bool("throttle-io", false, "agents make their advertised disk_bw and net_bw real for the framework library's executors (a token bucket per agent and device)")
	usageEvery := fs.Duration("usage-interval", 10*time.Second, "each agent reports usage to the master this often (the co-location bandit learns from it)")
	withTLS := fs.Bool("tls", false, "serve TLS everywhere with a throwaway CA and certificate made in the work dir (prints how clients use it)")
	authOn := fs.Bool("auth", false, "switch authentication on: write a throwaway credentials file, start the master with every\n--authenticate-* flag and the agents with --credential and --authenticate-http-executors, and print the\nprincipal and secret to use")
	fs.Set("listen", "127.0.0.1:5050")
	fs.Set("log-level", "warn")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *n < 0 || *n > 64 {
		return usagef("--agents must be between 0 and 64")
	}
	lv, err := zerolog.ParseLevel(mf.logLevel)
	if err != nil {
		return usagef("--log-level: %v", err)
	}
	base := zerolog.New(zerolog.ConsoleWriter{Out: stderr, TimeFormat: "15:04:05.000", NoColor: !isTerminal(stderr)}).Level(lv).With().Timestamp().Logger()
	dir := mf.workDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "allot-dev-"); err != nil {
			return err
		}
		mf.workDir = filepath.Join(dir, "master")
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	if *withTLS {
		f, err := devTLS(dir)
		if err != nil {
			return err
		}
		mf.tls = tlsFlags{cert: f.Cert, key: f.Key, ca: f.CA}
	}
	var agentCred *auth.Credential
	var opCred auth.Credential
	var agentHTTP agent.HTTPAuthn
	if *authOn {
		file, op, ag, err := devCredentials(filepath.Join(dir, "auth"))
		if err != nil {
			return err
		}
		mf.authn = authnFlags{credentials: file, frameworks: true, agents: true, httpReadWrite: true, httpReadOnly: true}
		agentCred, opCred = &ag, op
		// The agents accept the master's principals: the master's sandbox
		// proxy forwards the caller's credential to them.
		if agentHTTP, _, err = (agentHTTPFlags{credentials: file, readOnly: true, readWrite: true}).config(); err != nil {
			return err
		}
	}
	cfg, err := mf.config(fs, base.With().Str("component", "master").Logger())
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
	var agents []*agent.Agent
	stopAll := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, a := range agents {
			a.Stop(ctx)
		}
		m.Stop(ctx)
	}
	host, _, _ := net.SplitHostPort(m.Addr())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	for i := 0; i < *n; i++ {
		a, err := agent.New(agent.Config{Masters: []string{m.Addr()}, Listen: net.JoinHostPort(host, "0"),
			WorkDir: filepath.Join(dir, fmt.Sprintf("agent%d", i)), Resources: *res, KillExecutorsOnStop: true, ThrottleIO: *throttle,
			UsageInterval: *usageEvery, Isolation: *isolation, TLS: mf.tls.files(), Credential: agentCred, AuthenticateExecutors: *authOn,
			HTTPAuthn: agentHTTP, Log: base.With().Str("component", fmt.Sprintf("agent%d", i)).Logger()})
		if err == nil {
			err = a.Start()
		}
		if err != nil {
			stopAll()
			return fmt.Errorf("agent %d: %w", i, err)
		}
		agents = append(agents, a)
	}
	addr := m.Addr()
	scheme := tlsconf.Scheme(cfg.TLS.Enabled())
	fmt.Fprintf(stdout, `allot dev: master on %s://%s with %d agents (%s each); work dirs in %s

Open %s://%s in a browser: the cluster, agents, frameworks, tasks with their logs, the allocator.

Try:
  allot run --master %s -- echo hello from allot     # a one-off task; exits with its exit code
  allot status --master %s                           # the operator CLI: also agents, tasks, logs TASK -f
  curl -s %s://%s/state                             # Mesos-shaped state
  curl -s %s://%s/metrics | grep '^allot_'          # Prometheus metrics
  go run github.com/mesos/mesos-go/api/v1/cmd/msh -master %s -- echo hi   # from this checkout
Any mesos-go v0.0.11 framework can use %s://%s/api/v1/scheduler.
Ctrl-C stops everything.
`, scheme, addr, *n, *res, dir, scheme, addr, addr, addr, scheme, addr, scheme, addr, addr, scheme, addr)
	if *withTLS {
		printDevTLS(stdout, cfg.TLS, addr)
	}
	if *authOn {
		curlCA := ""
		if *withTLS {
			curlCA = "--cacert " + cfg.TLS.CA + " "
		}
		fmt.Fprintf(stdout, `
Authentication is on (every --authenticate-* flag of the master, and the agents' --authenticate-http-*
with the same credentials, in %s).
Log in to the UI, and authenticate the CLI and frameworks, as principal %q with secret %q:
  export ALLOT_PRINCIPAL=%s ALLOT_SECRET_FILE=%s   # allot status, allot run, allot logs ...
  curl -s %s-u %s:%s %s://%s/state
`, filepath.Join(dir, "auth", "credentials.json"), opCred.Principal, opCred.Secret, opCred.Principal, filepath.Join(dir, "auth", "secret"),
			curlCA, opCred.Principal, opCred.Secret, scheme, addr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fmt.Fprintln(stdout, "allot dev: stopping")
	stopAll()
	return nil
}
