package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/allocator/policy/bandit"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/loglevel"
	"github.com/allot-sched/allot/master"
	"github.com/allot-sched/allot/resources"
)

func init() {
	register(command{name: "master", summary: "run a master (scheduler, operator and agent APIs; registry on raft)", run: runMaster})
}

type masterFlags struct {
	reclaim, redirect, stampOffers                              bool
	filterGPUs                                                  bool
	mutexProfileFraction                                        int
	maxCompletedTasks, maxCompletedFws                          int
	registryMaxAgentAge, registryGCInterval                     time.Duration
	registryMaxAgentCount                                       int
	listen, workDir, sorter, selection, mode, weights, logLevel string
	allocInterval, offerTimeout, heartbeat, pingTimeout         time.Duration
	raftAddr, raftBind, peers, advertise                        string
	raftMultiplier                                              int
	snapThreshold, trailingLogs                                 uint64
	reregister                                                  time.Duration
	bandit                                                      banditFlags
	authn                                                       authnFlags
	policySync                                                  time.Duration
	acls                                                        string
	tls                                                         tlsFlags
	limits                                                      limitFlags
}

// banditFlags are the policies' options (--policy-opt policy.key=value),
// of which the co-location bandit's are the only ones today, and the
// deprecated --bandit-* flags that set them.
type banditFlags struct {
	opts policy.Options
	warn io.Writer // where a deprecated flag's warning goes; nil: stderr
}

// deprecatedBanditFlags are the --bandit-KEY flags, kept as aliases of
// --policy-opt bandit.KEY=VALUE so that scripts keep working.
var deprecatedBanditFlags = []string{"step", "window", "baseline", "wait-scale", "chunk"}

func addBanditFlags(fs *flag.FlagSet, f *banditFlags) {
	help := "a policy's option as `policy.key=value`; repeat for more. The co-location bandit's (--sorter bandit):"
	for _, o := range bandit.Options {
		help += "\n  bandit." + o.Key + ": " + o.Help
	}
	fs.Var(&f.opts, "policy-opt", help)
	for _, key := range deprecatedBanditFlags {
		name, key := "bandit-"+key, key
		fs.Func(name, "deprecated: use --policy-opt bandit."+key+"=VALUE", func(v string) error {
			w := f.warn
			if w == nil {
				w = os.Stderr
			}
			fmt.Fprintf(w, "allot: --%s is deprecated; use --policy-opt bandit.%s=%s\n", name, key, v)
			return f.opts.Set("bandit." + key + "=" + v)
		})
	}
}

// config checks the policies' options and returns the bandit's.
func (f *banditFlags) config() (bandit.Config, error) {
	if err := f.opts.CheckPolicies(bandit.Name); err != nil {
		return bandit.Config{}, usagef("--policy-opt: %v", err)
	}
	c, err := bandit.ParseOptions(f.opts.For(bandit.Name))
	if err != nil {
		return c, usagef("--policy-opt: %v", err)
	}
	return c, nil
}

func addMasterFlags(fs *flag.FlagSet, f *masterFlags) {
	fs.StringVar(&f.listen, "listen", ":5050", "`host:port` for the scheduler API (/api/v1/scheduler), operator API (/api/v1), /state, /health and /metrics")
	fs.StringVar(&f.workDir, "work-dir", "", "`dir`ectory for the registry's raft log and snapshots (required; keep it to keep the registry across restarts)")
	fs.StringVar(&f.sorter, "sorter", "drf", "framework selection criterion: drf, tsf, psdsf, rpsdsf, fifo, capacity, tetris, random, prophet, tetris-peak,\nfspy, fsp (size-based, FrameworkInfo sizes not wired yet), bandit (co-location; --mode characterized)")
	fs.StringVar(&f.selection, "agent-selection", "rrr", "agent selection: rrr (randomized round robin), bestfit or joint")
	fs.StringVar(&f.mode, "mode", "oblivious", "oblivious (offer whole agents) or characterized (frameworks declare per-task demands with REQUEST)")
	fs.DurationVar(&f.allocInterval, "allocation-interval", time.Second, "time between batch allocation cycles (events also trigger one)")
	fs.DurationVar(&f.offerTimeout, "offer-timeout", 0, "rescind offers not answered within this `duration` (0: never)")
	fs.DurationVar(&f.heartbeat, "heartbeat-interval", 15*time.Second, "HEARTBEAT events to subscribed schedulers and operators this often")
	fs.DurationVar(&f.pingTimeout, "agent-ping-timeout", 75*time.Second, "an agent whose connection is gone, or that has sent nothing, this long is marked unreachable: partition-aware\nframeworks hear TASK_UNREACHABLE, others TASK_LOST; it may come back under its id (MARK_AGENT_GONE ends it for good)")
	fs.StringVar(&f.weights, "weights", "", "role weights as `role=weight,...` (default 1 each); roles may be hierarchical (eng/ml=2), each\nweighed against its siblings")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&f.raftAddr, "raft-addr", "", "`host:port` for raft traffic between masters (empty: a lone master, no cluster)")
	fs.StringVar(&f.raftBind, "raft-bind", "", "`host:port` raft listens on when peers reach it through another address (NAT, a proxy);\nraft connections to peers are made from its IP (default: --raft-addr)")
	fs.StringVar(&f.peers, "peers", "", "the cluster's masters as `raft-host:port[=http-host:port],...`, this one included, e.g.\n"+
		"a:5049,b:5049,c:5049 (each master's HTTP API is then on its raft host at this master's --listen port),\n"+
		"or 10.0.0.1:5049=10.0.0.1:5050,... when ports differ. Every master gets the same list; a fresh\n"+
		"cluster bootstraps from it. A master not in the list (or with an existing store) does not\n"+
		"bootstrap: add it with `allot operator raft add-voter`")
	fs.StringVar(&f.advertise, "advertise", "", "`host:port` other masters and clients reach this master's HTTP API on, when it is not in --peers\n(default: the --listen address, 127.0.0.1 for an unspecified host)")
	fs.IntVar(&f.raftMultiplier, "raft-multiplier", 1, "scale raft timeouts by this `factor` (1: fastest failover, ~1 s; raise it on slow or loaded networks)")
	fs.Uint64Var(&f.snapThreshold, "raft-snapshot-threshold", 8192, "snapshot the registry after this many new raft log `entries`")
	fs.Uint64Var(&f.trailingLogs, "raft-trailing-logs", 10240, "raft log `entries` kept after a snapshot; a master further behind catches up from the snapshot")
	addBanditFlags(fs, &f.bandit)
	addTLSFlags(fs, &f.tls, "master")
	fs.BoolVar(&f.redirect, "redirect", false, "a follower answers leader-only calls with 307 to the leader (as Mesos does) instead of\nforwarding them to the leader; /redirect answers 307 either way")
	fs.BoolVar(&f.reclaim, "reclaim", false, "send inverse offers (Mesos INVERSE_OFFERS): a framework above its fair share while others starve is\nasked to give resources back on an agent; /pressure shows who starves (off: nothing is asked back)")
	fs.DurationVar(&f.reregister, "agent-reregister-timeout", 0, "after a master is elected (or restarts), agents in the registry have this long to re-register\nbefore they are marked unreachable (0: --agent-ping-timeout)")
	fs.IntVar(&f.maxCompletedTasks, "max-completed-tasks-per-framework", master.DefaultMaxCompletedTasksPerFramework,
		"completed tasks kept per framework for /state and GET_TASKS, the oldest forgotten first; kept in the\nregistry, so a new leader lists them too (Mesos's flag of the same name)")
	fs.IntVar(&f.maxCompletedFws, "max-completed-frameworks", master.DefaultMaxCompletedFrameworks,
		"removed frameworks whose completed tasks are kept (/state's completed_frameworks), the oldest\nforgotten first; kept in the registry (Mesos's flag of the same name)")
	fs.StringVar(&f.acls, "acls", "", "ACL file in (a subset of) Mesos's JSON format: who may register in which roles, run tasks as\nwhich users, tear down, view, update weights and the sorter, manage raft (docs/security-acl.md);\nempty: every caller may do everything")
	addAuthnFlags(fs, &f.authn)
	fs.BoolVar(&f.filterGPUs, "filter-gpu-resources", true, "offer agents that have GPUs only to frameworks with the GPU_RESOURCES capability (Mesos's default); false offers them to every framework")
	fs.BoolVar(&f.stampOffers, "stamp-offers", false, "append each allocation cycle's start to its offer ids (-T<unix ns>), for allot bench cluster's offer latency")
	fs.IntVar(&f.mutexProfileFraction, "mutex-profile-fraction", 0, "sample one in this `many` contended lock waits for /debug/pprof/mutex, which names the holder that\nmade them wait (0: off; allot bench cluster --profile sets 10)")
	fs.DurationVar(&f.policySync, "policy-sync-interval", master.DefaultPolicySyncInterval, "the leader replicates its policy models' state (bandit preferences, Prophet's timelines) at most\nthis often, and only when it changed; a failover loses at most this much learning (negative: never)")
	addLimitFlags(fs, &f.limits)
	fs.DurationVar(&f.registryMaxAgentAge, "registry-max-agent-age", master.DefaultRegistryMaxAgentAge,
		"an agent marked unreachable is forgotten this long after (Mesos's --registry_max_agent_age): it may still\nre-register, and a partition-aware framework reconciling its tasks then hears TASK_UNKNOWN")
	fs.IntVar(&f.registryMaxAgentCount, "registry-max-agent-count", master.DefaultRegistryMaxAgentCount,
		"unreachable agents kept in the registry, the oldest forgotten first (Mesos's --registry_max_agent_count)")
	fs.DurationVar(&f.registryGCInterval, "registry-gc-interval", master.DefaultRegistryGCInterval,
		"how often the leader forgets unreachable agents past --registry-max-agent-age or -count (Mesos's --registry_gc_interval)")
}

// parsePeers reads --peers. An entry without "=http" gets its HTTP address
// from the raft host and listenPort, so the common case (same ports on every
// host) is just the list of raft addresses.
func parsePeers(s, listen string) ([]master.Peer, error) {
	var out []master.Peer
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	_, listenPort, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %v", listen, err)
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		raftAddr, httpAddr, hasHTTP := strings.Cut(part, "=")
		rh, _, err := net.SplitHostPort(raftAddr)
		if err != nil || rh == "" {
			return nil, fmt.Errorf("%q: raft address must be host:port", part)
		}
		if !hasHTTP {
			httpAddr = net.JoinHostPort(rh, listenPort)
		} else if h, _, err := net.SplitHostPort(httpAddr); err != nil || h == "" {
			return nil, fmt.Errorf("%q: HTTP address after = must be host:port", part)
		}
		if seen[raftAddr] || seen[httpAddr] {
			return nil, fmt.Errorf("%q: listed twice", part)
		}
		seen[raftAddr], seen[httpAddr] = true, true
		out = append(out, master.Peer{Raft: raftAddr, HTTP: httpAddr})
	}
	return out, nil
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
		if err := resources.ValidateRole(k); err != nil {
			return nil, fmt.Errorf("%q: %v", part, err)
		}
		out[k] = w
	}
	return out, nil
}

// newLogger is the process's logger at --log-level. The logger itself
// logs every level and zerolog's global level filters it, through the
// returned control: the operator API's SET_LOGGING_LEVEL makes the process
// more verbose for a while through it (internal/loglevel).
func newLogger(w io.Writer, level, component string) (zerolog.Logger, *loglevel.Control, error) {
	lv, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Logger{}, nil, usagef("--log-level: %v", err)
	}
	return zerolog.New(w).With().Timestamp().Str("component", component).Logger(), loglevel.Global(lv), nil
}

func (f *masterFlags) config(fs *flag.FlagSet, log zerolog.Logger) (master.Config, error) {
	w, err := parseWeights(f.weights)
	if err != nil {
		return master.Config{}, usagef("--weights: %v", err)
	}
	peers, err := parsePeers(f.peers, f.listen)
	if err != nil {
		return master.Config{}, usagef("--peers: %v", err)
	}
	if len(peers) > 0 && f.raftAddr == "" {
		return master.Config{}, usagef("--peers needs --raft-addr (this master's entry in the list)")
	}
	if len(peers) > 0 {
		found := false
		for _, p := range peers {
			found = found || p.Raft == f.raftAddr
		}
		if !found {
			// A master missing from its own --peers would wait forever to be
			// added; almost always a typo, so say so.
			return master.Config{}, usagef("--raft-addr %s is not in --peers %s: give every master the same list, each one's --raft-addr spelled as in it (a master joining later is started without --peers)", f.raftAddr, f.peers)
		}
	}
	if f.raftAddr != "" && f.tls.cert != "" && f.tls.ca == "" {
		return master.Config{}, usagef("--raft-addr with --tls-cert needs --tls-ca: raft between masters is mutual TLS, each master verifying the others' certificates against the CA")
	}
	if f.raftMultiplier < 1 || f.raftMultiplier > 10 {
		return master.Config{}, usagef("--raft-multiplier: want 1 to 10, got %d", f.raftMultiplier)
	}
	bandit, err := f.bandit.config()
	if err != nil {
		return master.Config{}, err
	}
	authn, err := f.authn.config()
	if err != nil {
		return master.Config{}, err
	}
	flags := map[string]string{}
	fs.VisitAll(func(fl *flag.Flag) { flags[fl.Name] = fl.Value.String() })
	var authz auth.Authorizer // a nil *auth.ACLs in it would not be nil
	if f.acls != "" {
		acls, err := auth.LoadACLs(f.acls)
		if err != nil {
			return master.Config{}, usagef("--acls: %v", err)
		}
		authz = acls
	}
	cfg := master.Config{Authorizer: authz, Listen: f.listen, WorkDir: f.workDir, Sorter: f.sorter, AgentSelection: f.selection, Mode: f.mode,
		AllocationInterval: f.allocInterval, OfferTimeout: f.offerTimeout, HeartbeatInterval: f.heartbeat,
		AgentPingTimeout: f.pingTimeout, Weights: w, Log: log, Flags: flags,
		RaftAddr: f.raftAddr, RaftBind: f.raftBind, Peers: peers, Advertise: f.advertise, RaftMultiplier: f.raftMultiplier,
		AgentReregisterTimeout: f.reregister, RaftSnapshotThreshold: f.snapThreshold, RaftTrailingLogs: f.trailingLogs,
		Bandit: bandit, Reclaim: f.reclaim, Redirect: f.redirect, PolicySyncInterval: f.policySync,
		TLS: f.tls.files(), Authn: authn, StampOffers: f.stampOffers, NoFilterGPUResources: !f.filterGPUs,
		MaxCompletedTasksPerFramework: f.maxCompletedTasks, MaxCompletedFrameworks: f.maxCompletedFws,
		RegistryMaxAgentAge: f.registryMaxAgentAge, RegistryMaxAgentCount: f.registryMaxAgentCount, RegistryGCInterval: f.registryGCInterval}
	if f.maxCompletedTasks < 1 || f.maxCompletedFws < 1 {
		return master.Config{}, usagef("--max-completed-tasks-per-framework and --max-completed-frameworks must be at least 1 (got %d and %d)",
			f.maxCompletedTasks, f.maxCompletedFws)
	}
	if f.registryMaxAgentAge <= 0 || f.registryMaxAgentCount < 1 || f.registryGCInterval <= 0 {
		return master.Config{}, usagef("--registry-max-agent-age and --registry-gc-interval must be positive and --registry-max-agent-count at least 1 (got %s, %s and %d)",
			f.registryMaxAgentAge, f.registryGCInterval, f.registryMaxAgentCount)
	}
	return cfg, f.limits.apply(&cfg)
}

func runMaster(args []string, stdout, stderr io.Writer) error {
	var f masterFlags
	fs := newFlagSet("master", "[flags]", "Run an allot master: the Mesos v1 scheduler API, operator API, agent protocol and the\nregistry (agents, frameworks, tasks, config) replicated through raft in --work-dir.", stderr)
	addMasterFlags(fs, &f)
	var configPath string
	addConfigFlag(fs, &configPath)
	if err := parseServerFlags(fs, args, &configPath); err != nil {
		return err
	}
	if f.workDir == "" {
		return usagef("--work-dir is required")
	}
	log, logLevel, err := newLogger(stderr, f.logLevel, "master")
	if err != nil {
		return err
	}
	cfg, err := f.config(fs, log)
	if err != nil {
		return err
	}
	cfg.LogLevel = logLevel
	if f.mutexProfileFraction > 0 {
		// Process-wide, so set here rather than by master.New: tests run
		// many masters in one process.
		runtime.SetMutexProfileFraction(f.mutexProfileFraction)
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
