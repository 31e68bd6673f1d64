package agent

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/agent/cni"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	reqlimits "github.com/allot-sched/allot/internal/limits"
	"github.com/allot-sched/allot/internal/loglevel"
	"github.com/allot-sched/allot/internal/tlsconf"
	"github.com/allot-sched/allot/resources"
)

// Config is the agent's configuration; cmd/allot fills it from flags.
type Config struct {
	Masters    []string // host:port of each master
	Listen     string   // host:port; ":0" picks a free port
	Advertise  string   // host:port others use to reach this agent; default from Listen
	WorkDir    string
	Resources  string // Mesos text form; empty: detected
	Attributes map[string]string
	Hostname   string
	// ExecutorCommand runs the built-in command executor (argv); default
	// this binary with the argument "executor".
	ExecutorCommand []string
	// LauncherCommand runs `allot container-launch` (argv), which starts
	// a container's program in its namespaces and rootfs (nslaunch);
	// default ExecutorCommand's binary with "container-launch".
	LauncherCommand []string
	// ShutdownGrace is how long an executor has after SHUTDOWN (and a task
	// after SIGTERM) before SIGKILL.
	ShutdownGrace time.Duration
	// RegistrationTimeout is how long a new executor has to SUBSCRIBE before
	// it is killed and its tasks fail (Mesos's executor_registration_timeout;
	// default 1m).
	RegistrationTimeout time.Duration
	// UsageInterval is how often usage is reported to the master (10s).
	UsageInterval time.Duration
	// StatusUpdateRetry is how long an unacknowledged status update waits
	// before it is sent again (Mesos's 10s); each further resend of the
	// same update waits twice as long, up to StatusUpdateRetryMax (Mesos's
	// 10m).
	StatusUpdateRetry, StatusUpdateRetryMax time.Duration
	// KillExecutorsOnStop makes Stop kill every executor, checkpointing or
	// not (allot dev, which removes its work dirs afterwards).
	KillExecutorsOnStop bool
	// FaultDiskBusyFile is for tests and demonstrations: while this file
	// exists, usage reports count the disks fully busy (fault.go), so that
	// Prophet's task backoff can be driven without a real collision.
	FaultDiskBusyFile string
	// ThrottleIO makes the advertised disk_bw and net_bw real for the
	// framework library's executors: they are told (throttle.go) to share
	// one token bucket per device among this agent's executors.
	ThrottleIO bool
	// Isolation is --isolation: "" or "auto" (cgroups when writable, else
	// posix), "cgroups/cpu,cgroups/mem" or "posix/cpu,posix/mem".
	Isolation string
	// GPUDeviceRoot is where /dev/nvidia* and /proc/driver/nvidia are
	// looked for ("" is /); NvidiaSMI is the nvidia-smi to ask first
	// ("" is nvidia-smi on PATH). Tests point both at fakes (gpu.go).
	GPUDeviceRoot, NvidiaSMI string
	// NetworkCNIConfigDir and NetworkCNIPluginsDir are Mesos's
	// --network_cni_config_dir and --network_cni_plugins_dir: the CNI
	// networks containers may name (container_network.go); both empty,
	// none.
	NetworkCNIConfigDir, NetworkCNIPluginsDir string
	// DockerConfig (--docker-config) is a docker config file, or its
	// JSON, whose "auths" give registry credentials; DockerRegistry
	// (--docker-registry) serves image names without a registry ("" is
	// Docker Hub); ImageStoreMaxBytes caps the image layer store (0: no
	// cap); ImageBackend is --image-provisioner-backend ("", overlay,
	// copy). See container_image.go.
	DockerConfig, DockerRegistry string
	ImageStoreMaxBytes           int64
	ImageBackend                 string
	// CgroupsRoot is where the cgroup hierarchies are mounted
	// (/sys/fs/cgroup).
	CgroupsRoot string
	// CgroupsEnableCFS caps each container's CPU time at its cpus with a
	// CFS quota, besides weighting it by shares.
	CgroupsEnableCFS bool
	// DiskWatchInterval is how often disk/du measures the sandboxes
	// (Mesos's --container_disk_watch_interval; default 15s).
	DiskWatchInterval time.Duration
	// DiskQuotaWarnOnly (--enforce-container-disk-quota=false) makes disk/du
	// log and count an executor over its disk instead of killing it.
	DiskQuotaWarnOnly bool
	// NoSwitchUser (--switch-user=false) runs every executor as the agent's
	// user; by default an agent running as root runs each executor as its
	// task's (CommandInfo.user) or framework's (FrameworkInfo.user) user.
	NoSwitchUser bool
	// Credential is presented to the master as HTTP Basic on the agent
	// protocol (--credential); nil presents none (authn.go).
	Credential *auth.Credential
	// AuthenticateExecutors (--authenticate-http-executors) gives each
	// executor a token and requires it on the executor API (authn.go).
	AuthenticateExecutors bool
	// TLS names the certificate, key and CA of --tls-cert, --tls-key and
	// --tls-ca; set, the agent serves TLS and verifies the master (tls.go).
	TLS tlsconf.Files
	// HTTPAuthn authenticates the agent's HTTP endpoints (httpauth.go);
	// Authorizer (--acls) applies access_sandboxes to sandbox reads (nil:
	// any caller that passes authentication may read every sandbox).
	HTTPAuthn  HTTPAuthn
	Authorizer auth.Authorizer
	// Pprof (--pprof) serves the Go profiler at /debug/pprof, a read-write
	// endpoint; off, it is not served at all.
	Pprof bool
	// MaxRequestBytes caps request bodies (413 beyond; limits.go): 0 is
	// limits.DefaultMaxRequestBytes, negative only api.ReadRequest's cap.
	MaxRequestBytes int64
	// Clock is the agent's time (clock.go); nil: the wall clock.
	Clock Clock
	// HTTP bounds the listener: header, body and idle timeouts, connection
	// caps and the body bytes read at once (--http-* flags; limits.go).
	HTTP reqlimits.Server
	// Flags is what the operator API's GET_FLAGS reports (name -> value as
	// given); Version is what GET_VERSION reports.
	Flags   map[string]string
	Version string
	// LogLevel is the verbosity GET_LOGGING_LEVEL and SET_LOGGING_LEVEL
	// read and change (internal/loglevel); nil: one that is recorded only.
	LogLevel *loglevel.Control
	Log      zerolog.Logger
}

// Agent is one running agent.
type Agent struct {
	cfg   Config
	log   zerolog.Logger
	total resources.Resources
	ln    net.Listener
	srv   *http.Server
	addr  string
	hc    *http.Client
	mc    *http.Client    // calls to the master (tls.go)
	tls   *tlsconf.Bundle // nil: plaintext

	// static is --resources in the text form with its static
	// reservations ("cpus:2;cpus(ads):4"), as REGISTER sends it.
	static string

	mu         sync.Mutex
	id         string
	connected  bool
	master     string // address of the master we are registered with
	frameworks map[string]*mesos.FrameworkInfo
	executors  map[string]*executor // key fw/executor
	sendq      chan *api.AgentCall
	// checkpointed is what the master last gave in CHECKPOINT_RESOURCES:
	// dynamic reservations and persistent volumes (volumes.go). Under mu.
	checkpointed mesos.Resources
	lastSent     atomic.Int64 // unix nanoseconds of the last call the master took (pong.go)

	stop chan struct{}
	wg   sync.WaitGroup

	// fault is FaultDiskBusyFile's state; only usageLoop touches it.
	fault diskBusyFault

	iso    isolator
	isoWhy string // why this isolator (logged at start, shown in /state)
	// diskDu: disk/du is on; diskQuotaExceeded counts executors found over
	// their disk in warn-only mode, diskChecks the passes over every
	// sandbox that ended (both shown in /state).
	diskDu            bool
	diskQuotaExceeded int
	diskChecks        int
	gpu               agentGPUs    // what was detected, and gpu/nvidia's pool (gpu.go)
	cni               *cni.Manager // CNI networks (container_network.go)

	images imageProvisioner // container images (container_image.go)

	execTokens *auth.ExecutorSigner // nil: executor authentication off (authn.go)

	started time.Time            // for slave/uptime_secs (mesosmetrics.go)
	ended   taskEndCounts        // slave/tasks_finished, ... (taskcounters.go)
	metrics *prometheus.Registry // /metrics (mesosmetrics.go)
}

// New builds the agent; Start runs it.
func New(cfg Config) (*Agent, error) {
	if len(cfg.Masters) == 0 {
		return nil, errors.New("agent: --master is required")
	}
	if cfg.WorkDir == "" {
		return nil, errors.New("agent: --work-dir is required")
	}
	if err := cfg.HTTPAuthn.validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	if len(cfg.ExecutorCommand) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cfg.ExecutorCommand = []string{self, "executor"}
	}
	want, err := parseIsolation(cfg.Isolation)
	if err != nil {
		return nil, err
	}
	total, static, gpu, err := agentResources(cfg, want.gpu) // gpu.go
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(cfg.WorkDir, "meta"), 0o755); err != nil {
		return nil, err
	}
	iso, why, err := newIsolator(want, orDefault(cfg.CgroupsRoot, "/sys/fs/cgroup"), cfg.WorkDir, cfg.CgroupsEnableCFS)
	if err != nil {
		return nil, err
	}
	signer, err := openExecutorSigner(cfg)
	if err != nil {
		return nil, err
	}
	nets, err := newCNI(cfg) // container_network.go
	if err != nil {
		return nil, err
	}
	a := &Agent{cni: nets, cfg: cfg, log: cfg.Log, total: total, static: static,
		hc:         &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second}},
		frameworks: map[string]*mesos.FrameworkInfo{},
		executors:  map[string]*executor{},
		sendq:      make(chan *api.AgentCall, 65536),
		stop:       make(chan struct{}),
		iso:        iso,
		isoWhy:     why,
		diskDu:     want.disk,
		execTokens: signer,
		gpu:        gpu,
	}
	a.started = a.clock().Now()
	if a.cfg.LogLevel == nil {
		a.cfg.LogLevel = loglevel.Recorded()
	}
	a.metrics = a.newMetricsRegistry()
	if cfg.DiskWatchInterval <= 0 {
		a.cfg.DiskWatchInterval = 15 * time.Second
	}
	if err := a.loadTLS(); err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(filepath.Join(cfg.WorkDir, "meta", "agent_id")); err == nil {
		a.id = strings.TrimSpace(string(b))
	}
	a.loadCheckpointedResources()
	return a, nil
}

// setDefaults fills the intervals, clock and host name cfg leaves unset.
func (cfg *Config) setDefaults() {
	if cfg.RegistrationTimeout <= 0 {
		cfg.RegistrationTimeout = time.Minute
	}
	if cfg.UsageInterval <= 0 {
		cfg.UsageInterval = 10 * time.Second
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 5 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = wallClock{}
	}
	if cfg.Hostname == "" {
		cfg.Hostname, _ = os.Hostname()
	}
}

// detectResources parses spec (static reservations "cpus(role):4"
// included), filling cpus, mem and disk that it does not name, reserved or
// not, from the machine (Mesos's defaults: all cpus, memory less 1 GiB or
// half, disk of the work dir less 5 GiB or half) and ports 31000-32000, as
// unreserved resources. It returns the total and the text form REGISTER
// sends.
func detectResources(spec, workDir string) (resources.Resources, string, error) {
	byRole, err := resources.ParseByRole(spec)
	if err != nil {
		return resources.Resources{}, "", err
	}
	total := resources.Total(byRole)
	r := unreservedDefaults(total, byRole[resources.Unreserved], workDir)
	byRole[resources.Unreserved] = r
	return resources.Total(byRole), resources.FormatByRole(byRole), nil
}

// unreservedDefaults fills r, the unreserved part of total, with the
// machine's cpus, mem, disk and ports where total names none.
func unreservedDefaults(total, r resources.Resources, workDir string) resources.Resources {
	if total.Scalar("cpus") == 0 {
		r = r.WithScalar("cpus", resources.Quantity(runtime.NumCPU())*resources.Scale)
	}
	if total.Scalar("mem") == 0 {
		mb := memTotalMB()
		if mb > 2048 {
			mb -= 1024
		} else {
			mb /= 2
		}
		r = r.WithScalar("mem", resources.Quantity(mb)*resources.Scale)
	}
	if total.Scalar("disk") == 0 {
		var st syscall.Statfs_t
		mb := int64(10240)
		if os.MkdirAll(workDir, 0o755) == nil && syscall.Statfs(workDir, &st) == nil {
			mb = int64(st.Bavail) * int64(st.Bsize) >> 20
			if mb > 10240 {
				mb -= 5120
			} else {
				mb /= 2
			}
		}
		r = r.WithScalar("disk", resources.Quantity(mb)*resources.Scale)
	}
	if len(total.Ports) == 0 {
		r.Ports = resources.Ranges{{Begin: 31000, End: 32000}}
	}
	return r
}

func memTotalMB() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 4096
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && fs[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(fs[1], 10, 64)
			return kb >> 10
		}
	}
	return 4096
}

// Start listens, recovers checkpointed executors and connects to the master.
func (a *Agent) Start() error {
	ln, err := net.Listen("tcp", orDefault(a.cfg.Listen, ":5051"))
	if err != nil {
		return err
	}
	a.ln = a.listen(a.limitConns(ln))
	a.addr = a.cfg.Advertise
	if a.addr == "" {
		host, port, _ := net.SplitHostPort(ln.Addr().String())
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			host = "127.0.0.1"
		}
		a.addr = net.JoinHostPort(host, port)
	}
	a.srv = a.httpServer(a.httpHandler())
	if err := a.initImages(); err != nil { // container_image.go
		return err
	}
	a.recover()
	a.recoverContainers()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := a.srv.Serve(a.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error().Err(err).Msg("http server stopped")
		}
	}()
	for i := 0; i < 4; i++ {
		a.wg.Add(1)
		go func() { defer a.wg.Done(); a.sender() }()
	}
	a.wg.Add(4)
	go func() { defer a.wg.Done(); a.limitLoop() }()
	go func() { defer a.wg.Done(); a.usageLoop(a.cfg.UsageInterval) }()
	go func() { defer a.wg.Done(); a.masterLoop() }()
	go func() { defer a.wg.Done(); a.retryLoop() }()
	if a.diskDu {
		a.wg.Add(1)
		go func() { defer a.wg.Done(); a.diskLoop(a.cfg.DiskWatchInterval) }()
		a.log.Info().Dur("interval", a.cfg.DiskWatchInterval).Bool("enforce", !a.cfg.DiskQuotaWarnOnly).Msg("disk/du: sandbox disk quotas on")
	}
	a.logUserSwitching()
	a.logGPUs()
	a.log.Info().Str("addr", a.addr).Str("resources", a.total.String()).Str("agent_id", a.id).
		Str("isolation", a.iso.kind()).Str("isolation_reason", a.isoWhy).Msg("agent started")
	return nil
}

// Addr is the address the agent serves on.
func (a *Agent) Addr() string { return a.addr }

// ID is the agent id the master assigned ("" before registration).
func (a *Agent) ID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.id
}

// Stop stops the agent. Executors of checkpointing frameworks keep running
// (a restarted agent recovers them); the others are killed.
func (a *Agent) Stop(ctx context.Context) error {
	close(a.stop)
	a.mu.Lock()
	var killed []*executor
	for _, ex := range a.executors {
		if ex.stream != nil {
			ex.stream.Close("agent shutting down")
		}
		if (!ex.checkpoint || a.cfg.KillExecutorsOnStop) && ex.pid > 0 && !ex.exited {
			a.iso.kill(ex.containerID, ex.pid, syscall.SIGKILL)
			killed = append(killed, ex)
		}
	}
	a.mu.Unlock()
	// Their containers go with them: no one would remove them later. In
	// parallel: a slow one must not hold up the others.
	var wg sync.WaitGroup
	for _, ex := range killed {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.destroyContainer(ex.containerID, ex.pid)
		}()
	}
	wg.Wait()
	if cg, ok := a.iso.(*cgroupsIsolator); ok {
		cg.removeParent()
	}
	err := a.srv.Shutdown(ctx)
	a.wg.Wait()
	return err
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func newUUID() []byte {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return b
}

func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
