package master

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/allocator/policy/bandit"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/limits"
	"github.com/allot-sched/allot/internal/loglevel"
	"github.com/allot-sched/allot/internal/tlsconf"
	"github.com/allot-sched/allot/master/registry"
	"github.com/allot-sched/allot/sorter"
)

// Version is allot's own version; MesosVersion (version.go) is the Mesos
// API version clients read.
const Version = "0.1.0"

// Config is the master's configuration; cmd/allot fills it from flags.
type Config struct {
	Listen             string // host:port; ":0" picks a free port
	WorkDir            string // raft log and snapshots live here
	Sorter             string
	AgentSelection     string
	Mode               string
	AllocationInterval time.Duration
	OfferTimeout       time.Duration // 0: offers never time out
	HeartbeatInterval  time.Duration
	AgentPingTimeout   time.Duration // how long a disconnected agent may stay away
	Weights            map[string]float64
	// NoFilterGPUResources (--filter-gpu-resources=false) offers agents
	// with GPUs to frameworks without GPU_RESOURCES too (gpus.go).
	NoFilterGPUResources bool
	// Bandit holds the co-location bandit's parameters (--sorter bandit).
	Bandit bandit.Config
	// PolicySyncInterval is how often, at most, the leader replicates its
	// policy models' state (policy.go); 0: DefaultPolicySyncInterval,
	// negative: never.
	PolicySyncInterval time.Duration
	// AgentReregisterTimeout is how long a newly elected (or restarted)
	// master waits for each agent in the registry to re-register before
	// declaring it gone and its tasks lost (0: AgentPingTimeout).
	AgentReregisterTimeout time.Duration
	// RaftAddr is this master's raft host:port; empty runs a lone master
	// whose raft is in-process (no cluster).
	RaftAddr string
	// RaftBind is where raft listens if not RaftAddr (NAT, proxies).
	RaftBind string
	// Peers are the cluster's voters for bootstrapping; the entry whose Raft
	// equals RaftAddr is this master and names its HTTP address.
	Peers []Peer
	// Advertise is the HTTP host:port other masters and clients reach this
	// master on, used when it is not in Peers (a master joining later with
	// add-voter). Empty: the listen address, with 127.0.0.1 for an
	// unspecified host.
	Advertise string
	// RaftSnapshotThreshold and RaftTrailingLogs tune log compaction (0:
	// raft's defaults here, 8192 and 10240).
	RaftSnapshotThreshold, RaftTrailingLogs uint64
	// RaftMultiplier scales raft's timeouts; 1 (fastest) when 0.
	RaftMultiplier int
	Log            zerolog.Logger
	// Flags is what GET_FLAGS reports (name -> value as given).
	Flags map[string]string
	// LogLevel is the verbosity GET_LOGGING_LEVEL and SET_LOGGING_LEVEL
	// read and change (internal/loglevel); nil: one that is recorded only,
	// shared by every such master of the process.
	LogLevel *loglevel.Control
	// Clock is the master's and the allocator's time; nil: the wall clock.
	Clock Clock
	// Reclaim turns on inverse offers (allocator.Config.Reclaim and
	// inverse.go); off, nothing is ever asked back.
	Reclaim bool
	// Redirect makes a follower answer leader-only calls with 307 to the
	// leader (allot's behaviour before forwarding, and Mesos's) instead of
	// forwarding them to the leader (forward.go).
	Redirect bool
	// Authorizer decides what each caller may do (--acls; authz.go); nil
	// lets every caller do everything, as Mesos without ACLs.
	Authorizer auth.Authorizer
	// TLS names the certificate, key and CA of --tls-cert, --tls-key and
	// --tls-ca; set, every listener speaks TLS (tls.go).
	TLS tlsconf.Files
	// Authn is authentication: --credentials and the --authenticate-*
	// flags (authn.go). Zero: every endpoint is open.
	Authn Authn
	// StampOffers appends the allocation cycle's start to every offer id
	// ("-T<unix nanoseconds>"), so that a client on the same host can
	// measure allocation-to-OFFERS latency (allot bench cluster). Offer ids
	// are opaque to schedulers; off by default.
	StampOffers bool
	// MaxRequestBytes caps every request body (413 beyond; limits.go):
	// 0 is limits.DefaultMaxRequestBytes, negative no cap but each
	// handler's own.
	MaxRequestBytes int64
	// RateLimits are the per-principal request rates (--rate-limits, Mesos's
	// format; limits.go); nil throttles nothing.
	RateLimits *limits.RateLimits
	// MaxSubscriptionsPerPrincipal caps the scheduler and operator
	// subscription streams one principal holds open (429 beyond); <= 0:
	// no cap.
	MaxSubscriptionsPerPrincipal int
	// MaxSnapshotBytes caps a snapshot restore's body (413 beyond; it is
	// streamed to disk, not held, restore.go); <= 0: DefaultMaxSnapshotBytes.
	MaxSnapshotBytes int64
	// HealthMaxRaftLag is how many committed raft entries the registry may
	// lag before /health answers 503 (0: DefaultHealthMaxRaftLag, negative:
	// not checked; health.go).
	HealthMaxRaftLag int64
	// HTTP bounds the listener: header, body and idle timeouts and
	// connection caps (--http-* flags; limits.Server, conns.go).
	HTTP limits.Server
	// MaxCompletedTasksPerFramework and MaxCompletedFrameworks bound the
	// completed tasks kept, in memory and in the registry, for /state and
	// GET_TASKS (Mesos's flags of the same names; 0: Mesos's defaults,
	// 1000 and 50; history.go).
	MaxCompletedTasksPerFramework, MaxCompletedFrameworks int
	// RegistryMaxAgentAge and RegistryMaxAgentCount bound the unreachable
	// agents kept, checked every RegistryGCInterval (Mesos's
	// --registry_max_agent_age, --registry_max_agent_count,
	// --registry_gc_interval; 0: their defaults; partition.go).
	RegistryMaxAgentAge   time.Duration
	RegistryMaxAgentCount int
	RegistryGCInterval    time.Duration
}

// Master is one running master. Create it with New, then Start.
type Master struct {
	// hookBeforeSubscribed, when a test sets it, runs after a subscribing
	// framework's id is committed and before SUBSCRIBED is sent: the
	// window in which other goroutines may act on the framework.
	hookBeforeSubscribed func()
	// wrapLogs, when a test sets it, wraps raft's log store (a failing
	// disk; raftOptions.wrapLogs).
	wrapLogs func(raft.LogStore) raft.LogStore

	cfg   Config
	clock Clock
	log   zerolog.Logger
	id    string
	start time.Time
	reg   *registry.Registry
	rep   *replicator
	ln    net.Listener
	srv   *http.Server
	info  mesos.MasterInfo
	m     *metrics
	self  Peer // this master's HTTP and raft addresses

	allocCfg allocator.Config
	// leader is true once this master leads and has rebuilt its live state
	// from the registry; handlers serve only then and redirect otherwise.
	leader  atomic.Bool
	notify  chan bool
	elected time.Time // guarded by mu

	mu sync.Mutex
	// batch runs scheduler and agent calls under mu many at a time, so
	// that they do not queue on mu one goroutine each (combine.go).
	batch             lockBatcher
	alloc             *allocator.Allocator
	agents            map[string]*agentState
	frameworks        map[string]*framework
	removedFrameworks map[string]bool
	removedAgents     map[string]bool   // agents removed by this leader (history.go); set on election
	completed         *completedTasks   // terminal, acknowledged tasks (bounded; history.go)
	unplacedShown     map[string]bool   // frameworks whose placement reason stays shown (placement_sticky.go)
	offers            map[uint64]*offer // outstanding, by sequence number (state.go's offer)
	offerSlab         []offer           // where the cycle's offers are carved from (newOfferLocked)
	seq               uint64
	unreachable       map[string]*unreachableAgent // agents marked unreachable (partition.go); set on election
	offerStamp        string                       // "-T<ns>" of the running cycle under StampOffers
	cycleFws          []*framework                 // frameworks offered to in the running cycle, capacity reused (offerLocked)
	cycleRefs         []decisionRef                // the running cycle's decisions' frameworks and agents, capacity reused
	opSubs            map[*api.Stream]auth.Subject // operator subscribers and who each is (views are filtered, authz_view.go)
	gauges            atomic.Pointer[stateGauges]  // the state gauges' last reading, for scrapes that find mu held (metrics.go)
	gaugesWanted      atomic.Bool                  // a scrape found mu held since that reading (metrics.go)
	unreachableSeen   atomic.Int64                 // the unreachable agents at the last reading (partition.go)
	usage             map[string]*api.Usage
	usageRates        map[string]api.UsageRates // from the last two usage reports (signals.go)
	weights           map[string]float64
	inverse           inverseTable // inverse.go
	maint             maintState   // maintenance schedule, machines DOWN, agents deactivated or drained (maintstate.go)
	pol               policySync   // policy.go
	operations        operationLog // opfeedback.go
	samples           sampleRing   // the UI's charts: allocation and usage over the last hour (samples.go)

	fwd forwarder // streams a follower forwards to the leader (forward.go)
	lim *limiter  // body, rate and stream limits (limits.go)
	// restoring is held by the one snapshot restore allowed at a time.
	restoring atomic.Bool
	// quotaMu orders quota updates from validation to the allocator, taken
	// before mu (quota_calls.go).
	quotaMu     sync.Mutex
	quotaGauges quotaGauges // quota_alloc.go; under mu

	tasksOn tasksByAgent // tasks by agent, under mu (tasksbyagent.go)

	authz         authzState        // authz.go
	tls           *tlsconf.Bundle   // nil: plaintext (tls.go)
	peerTransport http.RoundTripper // calls to other masters (forward.go)

	kick chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup
}

// New opens the registry in cfg.WorkDir and builds the master; it does not
// listen yet.
func New(cfg Config) (*Master, error) {
	if cfg.WorkDir == "" {
		return nil, errors.New("master: --work-dir is required")
	}
	if err := cfg.Authn.validate(); err != nil {
		return nil, err
	}
	if cfg.AllocationInterval <= 0 {
		cfg.AllocationInterval = time.Second
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 15 * time.Second
	}
	if cfg.AgentPingTimeout <= 0 {
		cfg.AgentPingTimeout = 75 * time.Second
	}
	crit, err := sorter.Lookup(orDefault(cfg.Sorter, "drf"))
	if err != nil {
		return nil, fmt.Errorf("--sorter: %w", err)
	}
	sel, err := sorter.ParseAgentSelection(orDefault(cfg.AgentSelection, "rrr"))
	if err != nil {
		return nil, fmt.Errorf("--agent-selection: %w", err)
	}
	mode, err := allocator.ParseMode(orDefault(cfg.Mode, "oblivious"))
	if err != nil {
		return nil, fmt.Errorf("--mode: %w", err)
	}
	if cfg.Clock == nil {
		cfg.Clock = wallClock{}
	}
	seed := make([]byte, 8)
	rand.Read(seed)
	if cfg.AgentReregisterTimeout <= 0 {
		cfg.AgentReregisterTimeout = cfg.AgentPingTimeout
	}
	allocCfg := allocator.Config{
		Sorter: crit, AgentSelection: sel, Mode: mode,
		AllocationInterval: cfg.AllocationInterval,
		Seed:               binary.LittleEndian.Uint64(seed),
		Clock:              cfg.Clock,
		Bandit:             cfg.Bandit,
		Reclaim:            cfg.Reclaim,
	}
	alloc, err := newAllocator(allocCfg, cfg.Weights)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, err
	}
	m := &Master{
		cfg: cfg, log: cfg.Log, clock: cfg.Clock, start: cfg.Clock.Now(),
		reg:               registry.NewRegistry(),
		alloc:             alloc,
		allocCfg:          allocCfg,
		notify:            make(chan bool, 16),
		agents:            map[string]*agentState{},
		frameworks:        map[string]*framework{},
		removedFrameworks: map[string]bool{},
		completed:         newCompletedTasks(cfg.MaxCompletedTasksPerFramework, cfg.MaxCompletedFrameworks),
		offers:            map[uint64]*offer{},
		opSubs:            map[*api.Stream]auth.Subject{},
		usage:             map[string]*api.Usage{},
		weights:           map[string]float64{},
		tasksOn:           tasksByAgent{},
		kick:              make(chan struct{}, 1),
		stop:              make(chan struct{}),
	}
	maps.Copy(m.weights, cfg.Weights)
	if err := m.loadTLS(); err != nil {
		return nil, err
	}
	m.id = loadOrCreateID(filepath.Join(cfg.WorkDir, "master_id"))
	m.m = newMetrics(m)
	m.initAuthz()
	m.lim = newLimiter(cfg, cfg.Clock, m.m.reg)
	m.observe()
	return m, nil
}

// observe connects the registry's and the call batcher's observations to
// the metrics and the log.
func (m *Master) observe() {
	m.reg.ObserveApply(func(d time.Duration) { m.m.applyLatency.Observe(d.Seconds()) })
	m.batch.observe = func(n int) { m.m.callBatch.Observe(float64(n)) }
	m.batch.waited = func(d time.Duration) { m.m.callWait.Observe(d.Seconds()) }
	m.batch.panicked = func(p any, stack []byte) {
		m.log.Error().Str("panic", fmt.Sprint(p)).Bytes("stack", stack).Msg("call panicked under the master's lock")
	}
}

// newAllocator builds an empty allocator with the configured weights; a
// newly elected leader starts from one and refills it from the registry.
func newAllocator(cfg allocator.Config, weights map[string]float64) (*allocator.Allocator, error) {
	alloc, err := allocator.New(cfg)
	if err != nil {
		return nil, err
	}
	if len(weights) > 0 {
		if err := alloc.SetWeights(weights); err != nil {
			return nil, fmt.Errorf("--weights: %w", err)
		}
	}
	return alloc, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Clock is the master's time: Now stamps registrations, disconnections and
// lost tasks and is the allocator's clock (filters expire by it); AfterFunc
// runs the offer, failover and agent-lost timeouts. Tests pass a manual one.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc; Stop reports whether it stopped the call.
type Timer interface{ Stop() bool }

// wallClock is the real clock, the default.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func loadOrCreateID(path string) string {
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		return string(b)
	}
	id := newID()
	os.WriteFile(path, []byte(id), 0o644)
	return id
}

// Start listens, opens raft and serves. A lone master (no RaftAddr) waits
// for its own leadership and rebuilds live state before serving; a cluster
// member serves at once (redirecting, or 503 while no leader is known) and
// takes over live state whenever raft elects it.
func (m *Master) Start() error {
	ln, err := net.Listen("tcp", orDefault(m.cfg.Listen, ":5050"))
	if err != nil {
		return err
	}
	m.ln = m.listen(m.limitConns(ln))
	tcp := ln.Addr().(*net.TCPAddr)
	m.self = Peer{HTTP: m.cfg.Advertise, Raft: m.cfg.RaftAddr}
	if m.self.HTTP == "" {
		ip := tcp.IP
		if ip == nil || ip.IsUnspecified() {
			ip = net.IPv4(127, 0, 0, 1)
		}
		m.self.HTTP = net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port))
	}
	for _, p := range m.cfg.Peers {
		if p.Raft == m.cfg.RaftAddr {
			m.self.HTTP = p.HTTP
		}
	}
	if a, err := net.ResolveTCPAddr("tcp", m.self.HTTP); err == nil && m.cfg.RaftAddr != "" {
		tcp = a
	}
	m.info = masterInfo(m.id, tcp)
	if err := m.openReplication(); err != nil {
		m.ln.Close()
		return err
	}
	if m.cfg.RaftAddr == "" {
		if err := m.leadAlone(); err != nil {
			m.rep.close()
			m.ln.Close()
			return err
		}
	}
	m.srv = m.httpServer()
	m.wg.Add(4)
	go func() {
		defer m.wg.Done()
		if err := m.srv.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error().Err(err).Msg("http server stopped")
		}
	}()
	go func() { defer m.wg.Done(); m.allocationLoop() }()
	go func() { defer m.wg.Done(); m.pingLoop() }()
	go func() { defer m.wg.Done(); m.watchLeadership() }()
	m.wg.Add(3)
	go func() { defer m.wg.Done(); m.registryGCLoop() }()
	go func() { defer m.wg.Done(); m.policyLoop() }()
	go func() { defer m.wg.Done(); m.watchForwarding() }()
	m.log.Info().Str("addr", ln.Addr().String()).Str("http", m.self.HTTP).Str("raft", m.self.Raft).Str("master_id", m.id).
		Int("agents", len(m.reg.Agents())).Int("frameworks", len(m.reg.Frameworks())).
		Msg("master started")
	return nil
}

// openReplication opens the registry's raft in the work directory: a
// cluster member over TCP, or a lone master in process (no RaftAddr).
func (m *Master) openReplication() error {
	rep, err := openRaft(filepath.Join(m.cfg.WorkDir, "raft"), m.reg, raftOptions{
		Self: m.self, Bind: m.cfg.RaftBind, SnapshotThreshold: m.cfg.RaftSnapshotThreshold, TrailingLogs: m.cfg.RaftTrailingLogs,
		Peers: m.cfg.Peers, Multiplier: m.cfg.RaftMultiplier, LogLevel: "error", Notify: m.notify, TLS: m.tls, wrapLogs: m.wrapLogs})
	if err != nil {
		return err
	}
	m.rep = rep
	rep.commitObs = func(d time.Duration) { m.m.commitLatency.Observe(d.Seconds()) }
	return nil
}

// leadAlone waits for a lone master's raft to elect it, then rebuilds live
// state from the registry.
func (m *Master) leadAlone() error {
	if err := m.rep.waitLeader(30 * time.Second); err != nil {
		return err
	}
	m.becomeLeader()
	return nil
}

// underLock runs fn with m.mu held, batched with the other scheduler and
// agent calls queued at the same moment (combine.go), and returns its
// error. The caller must not hold m.mu.
func (m *Master) underLock(fn func() error) error { return m.batch.do(&m.mu, fn) }

// Addr is the address the master listens on.
func (m *Master) Addr() string { return m.ln.Addr().String() }

// Stop closes every stream, stops serving and closes raft. Takes m.mu.
func (m *Master) Stop(ctx context.Context) error {
	close(m.stop)
	m.mu.Lock()
	for _, fw := range m.frameworks {
		if fw.stream != nil {
			fw.stream.Close("master shutting down")
		}
		if fw.failoverTimer != nil {
			fw.failoverTimer.Stop()
		}
	}
	for _, a := range m.agents {
		if a.stream != nil {
			a.stream.Close("master shutting down")
		}
		if a.lostTimer != nil {
			a.lostTimer.Stop()
		}
	}
	for s := range m.opSubs {
		s.Close("master shutting down")
	}
	m.mu.Unlock()
	err := m.srv.Shutdown(ctx)
	m.wg.Wait()
	if e := m.rep.close(); err == nil {
		err = e
	}
	return err
}

func masterInfo(id string, addr *net.TCPAddr) mesos.MasterInfo {
	ip := addr.IP.To4()
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1).To4()
	}
	host, _ := os.Hostname()
	ipStr := ip.String()
	port := int32(addr.Port)
	uport := uint32(addr.Port)
	return mesos.MasterInfo{
		ID:       id,
		IP:       binary.LittleEndian.Uint32(ip),
		Port:     &uport,
		Hostname: &host,
		Version:  strPtr(MesosVersion),
		Address:  &mesos.Address{Hostname: &host, IP: &ipStr, Port: port},
	}
}

func strPtr(s string) *string { return &s }

func splitHostPort(addr string) (string, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	return h, n, err
}
