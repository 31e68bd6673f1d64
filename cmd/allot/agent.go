package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/allot-sched/allot/agent"
	"github.com/allot-sched/allot/agent/nslaunch"
	"github.com/allot-sched/allot/master"
)

func init() {
	register(command{name: "agent", summary: "run an agent (executors as real processes, executor API)", run: runAgent})
	register(command{name: "executor", summary: "the built-in command executor (started by agents, not by hand)", run: runExecutor})
	register(command{name: "container-launch", summary: "starts a program in its container (started by agents, not by hand)", run: runContainerLaunch, hidden: true})
}

// flagValues is every flag of fs by name, as given or defaulted: what the
// operator API's GET_FLAGS reports.
func flagValues(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(fl *flag.Flag) { out[fl.Name] = fl.Value.String() })
	return out
}

func parseAttributes(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want name:value", part)
		}
		out[k] = v
	}
	return out, nil
}

func runAgent(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && agentVerbs[args[0]] {
		return runAgentVerb(args, stdout, stderr) // maintenance.go
	}
	fs := newFlagSet("agent", "[flags]", "Run an allot agent: registers with the master, runs executors as child processes in\nsandboxes under --work-dir, and serves the executor API at /api/v1/executor.", stderr)
	masters := fs.String("master", "127.0.0.1:5050", "master `host:port[,host:port...]`")
	listen := fs.String("listen", ":5051", "`host:port` for the executor API, /state, /monitor/*, the sandbox files (/files/*) and /health")
	advertise := fs.String("advertise", "", "`host:port` executors and the master use to reach this agent (default: from --listen, 127.0.0.1 for a wildcard host)")
	workDir := fs.String("work-dir", "", "`dir`ectory for sandboxes and checkpoints (required; reuse it to recover executors)")
	res := fs.String("resources", "", "resources as a Mesos `spec`, e.g. cpus:4;mem:8192;disk:20000;ports:[31000-32000];disk_bw:200;net_bw:1000 (cpus, mem, disk and ports not named are detected); name(role):value reserves statically for role, e.g. cpus(ads):2 (docs/roles.md)")
	attrs := fs.String("attributes", "", "attributes as `name:value;...`")
	grace := fs.Duration("shutdown-grace", 5*time.Second, "time an executor gets after SHUTDOWN (and a task after SIGTERM) before SIGKILL")
	regTimeout := fs.Duration("executor-registration-timeout", time.Minute, "an executor that has not subscribed to the executor API this long after it started is killed and its tasks fail")
	retry := fs.Duration("status-update-retry-interval", 10*time.Second, "resend a status update the framework has not acknowledged after this long (Mesos's agent: 10s)")
	retryMax := fs.Duration("status-update-retry-max", 10*time.Minute, "each further resend of the same update waits twice as long as the one before, up to this (Mesos's agent: 10m)")
	usage := fs.Duration("usage-interval", 10*time.Second, "report usage (CPU, memory, disk and network counters per host and executor) to the master this often")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	throttle := fs.Bool("throttle-io", false, "make the advertised disk_bw and net_bw real: the framework library's executors on this agent share one token bucket per device (for live experiments on one machine)")
	isof := addIsolationFlags(fs)
	netf := addNetworkFlags(fs) // agent_network.go
	imgf := addImageFlags(fs)   // agent_images.go
	switchUser := fs.Bool("switch-user", true, "when the agent runs as root, run each executor as its task's (CommandInfo.user) or framework's (FrameworkInfo.user) user and give it its sandbox")
	var tlsf tlsFlags
	addTLSFlags(fs, &tlsf, "agent")
	var maxBody int64
	addMaxRequestBytesFlag(fs, &maxBody)
	var httpf httpFlags
	addHTTPFlags(fs, &httpf)
	faultBusy := fs.String("fault-disk-busy-file", "", "testing: while this `file` exists, report the disks fully busy (drives Prophet's task backoff without a real collision)")
	credFile := fs.String("credential", "", "`file` with this agent's credential for a master with --authenticate-agents: Mesos's JSON\n{\"principal\":\"p\",\"secret\":\"s\"} or one \"principal secret\" line")
	execAuthn := fs.Bool("authenticate-http-executors", false, "give each executor a token in MESOS_EXECUTOR_AUTHENTICATION_TOKEN and require it as\n\"Authorization: Bearer\" on the executor API (an executor cannot call for another)")
	var authf agentHTTPFlags
	addAgentHTTPFlags(fs, &authf)
	var configPath string
	addConfigFlag(fs, &configPath)
	if err := parseServerFlags(fs, args, &configPath); err != nil {
		return err
	}
	cred, err := agentCredential(*credFile)
	if err != nil {
		return err
	}
	httpAuthn, authz, err := authf.config()
	if err != nil {
		return err
	}
	if *workDir == "" {
		return usagef("--work-dir is required")
	}
	at, err := parseAttributes(*attrs)
	if err != nil {
		return usagef("--attributes: %v", err)
	}
	log, logLevel, err := newLogger(stderr, *level, "agent")
	if err != nil {
		return err
	}
	cfg := agent.Config{Masters: splitMasters(*masters), Listen: *listen, Advertise: *advertise, WorkDir: *workDir,
		Resources: *res, Attributes: at, ShutdownGrace: *grace, UsageInterval: *usage, RegistrationTimeout: *regTimeout, Log: log,
		StatusUpdateRetry: *retry, StatusUpdateRetryMax: *retryMax,
		FaultDiskBusyFile: *faultBusy, ThrottleIO: *throttle, NoSwitchUser: !*switchUser, Isolation: isof.isolation,
		CgroupsEnableCFS: isof.cfs, CgroupsRoot: isof.cgRoot, GPUDeviceRoot: isof.gpuRoot, NvidiaSMI: isof.smi,
		DiskWatchInterval: isof.diskWatch, DiskQuotaWarnOnly: !isof.enforceDisk,
		NetworkCNIConfigDir: netf.configDir, NetworkCNIPluginsDir: netf.pluginsDir,
		TLS: tlsf.files(), Credential: cred, AuthenticateExecutors: *execAuthn, MaxRequestBytes: maxBody,
		HTTPAuthn: httpAuthn, Authorizer: authz, Pprof: authf.pprof, HTTP: httpf.server(),
		Flags: flagValues(fs), Version: master.Version, LogLevel: logLevel}
	imgf.apply(&cfg)
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	return serveAgent(a, stdout)
}

// serveAgent starts a and runs it until SIGINT or SIGTERM, then stops it.
func serveAgent(a *agent.Agent, stdout io.Writer) error {
	if err := a.Start(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "allot agent listening on %s\n", a.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return a.Stop(sctx)
}

func runExecutor(args []string, stdout, stderr io.Writer) error {
	log, _, _ := newLogger(stderr, "info", "executor")
	return agent.RunCommandExecutor(log)
}

func runContainerLaunch(args []string, stdout, stderr io.Writer) error {
	return nslaunch.Main(args, stderr) // returns only on failure
}
