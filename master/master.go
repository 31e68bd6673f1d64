package master

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
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
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Version is what GET_VERSION and /version report.
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
}

// Master is one running master. Create it with New, then Start.
type Master struct {
	cfg   Config
	log   zerolog.Logger
	id    string
	start time.Time
	reg   *Registry
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

	mu                sync.Mutex
	alloc             *allocator.Allocator
	agents            map[string]*agentState
	frameworks        map[string]*framework
	removedFrameworks map[string]bool
	completed         []*task // terminal, acknowledged tasks (bounded)
	offers            map[string]*offer
	seq               uint64
	opSubs            map[*api.Stream]bool
	usage             map[string]*api.Usage
	weights           map[string]float64

	kick chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup
}

type agentState struct {
	rec       *api.AgentRecord
	total     resources.Resources
	stream    *api.Stream // nil while disconnected
	inAlloc   bool
	lostTimer *time.Timer
	// executors running on the agent with the resources they hold, keyed
	// "framework/executor".
	executors map[string]resources.Resources
}

type framework struct {
	id             string
	info           mesos.FrameworkInfo
	role           string
	multiRole      bool
	stream         *api.Stream
	streamID       string
	offers         map[string]*offer
	tasks          map[string]*task
	registered     time.Time
	disconnectedAt time.Time
	failoverTimer  *time.Timer
	suppressed     bool
}

type task struct {
	id, fw, agent, executor string
	info                    mesos.TaskInfo
	infoBytes               []byte // info in protobuf, for registry records
	res                     resources.Resources
	state                   mesos.TaskState
	status                  *mesos.TaskStatus
}

type offer struct {
	id, fw, agent string
	res           resources.Resources
	timer         *time.Timer
}

// New opens the registry in cfg.WorkDir and builds the master; it does not
// listen yet.
func New(cfg Config) (*Master, error) {
	if cfg.WorkDir == "" {
		return nil, errors.New("master: --work-dir is required")
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
	seed := make([]byte, 8)
	rand.Read(seed)
	if cfg.AgentReregisterTimeout <= 0 {
		cfg.AgentReregisterTimeout = cfg.AgentPingTimeout
	}
	allocCfg := allocator.Config{
		Sorter: crit, AgentSelection: sel, Mode: mode,
		AllocationInterval: cfg.AllocationInterval,
		Seed:               binary.LittleEndian.Uint64(seed),
		Clock:              wallClock{},
	}
	alloc, err := newAllocator(allocCfg, cfg.Weights)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, err
	}
	m := &Master{
		cfg: cfg, log: cfg.Log, start: time.Now(),
		reg:               NewRegistry(),
		alloc:             alloc,
		allocCfg:          allocCfg,
		notify:            make(chan bool, 16),
		agents:            map[string]*agentState{},
		frameworks:        map[string]*framework{},
		removedFrameworks: map[string]bool{},
		offers:            map[string]*offer{},
		opSubs:            map[*api.Stream]bool{},
		usage:             map[string]*api.Usage{},
		weights:           map[string]float64{},
		kick:              make(chan struct{}, 1),
		stop:              make(chan struct{}),
	}
	for k, v := range cfg.Weights {
		m.weights[k] = v
	}
	m.id = loadOrCreateID(filepath.Join(cfg.WorkDir, "master_id"))
	m.m = newMetrics(m)
	m.reg.applyObs = func(d time.Duration) { m.m.applyLatency.Observe(d.Seconds()) }
	return m, nil
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

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

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
	m.ln = ln
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
	rep, err := openRaft(filepath.Join(m.cfg.WorkDir, "raft"), m.reg, raftOptions{
		Self: m.self, Bind: m.cfg.RaftBind, SnapshotThreshold: m.cfg.RaftSnapshotThreshold, TrailingLogs: m.cfg.RaftTrailingLogs, Peers: m.cfg.Peers, Multiplier: m.cfg.RaftMultiplier, LogLevel: "error", Notify: m.notify})
	if err != nil {
		ln.Close()
		return err
	}
	m.rep = rep
	rep.commitObs = func(d time.Duration) { m.m.commitLatency.Observe(d.Seconds()) }
	if m.cfg.RaftAddr == "" {
		if err := rep.waitLeader(30 * time.Second); err != nil {
			rep.close()
			ln.Close()
			return err
		}
		m.becomeLeader()
	}
	m.srv = &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second}
	m.wg.Add(4)
	go func() {
		defer m.wg.Done()
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error().Err(err).Msg("http server stopped")
		}
	}()
	go func() { defer m.wg.Done(); m.allocationLoop() }()
	go func() { defer m.wg.Done(); m.pingLoop() }()
	go func() { defer m.wg.Done(); m.watchLeadership() }()
	m.log.Info().Str("addr", ln.Addr().String()).Str("http", m.self.HTTP).Str("raft", m.self.Raft).Str("master_id", m.id).
		Int("agents", len(m.reg.Agents())).Int("frameworks", len(m.reg.Frameworks())).
		Msg("master started")
	return nil
}

// watchLeadership follows raft's leadership notifications. On gaining
// leadership it first waits on a barrier so the registry holds every entry
// the previous leader committed, then rebuilds live state from it; on losing
// it drops live state so that nothing is allocated or acknowledged by a
// master that can no longer commit.
func (m *Master) watchLeadership() {
	for {
		select {
		case <-m.stop:
			return
		case lead := <-m.notify:
			if !lead {
				m.becomeFollower()
				continue
			}
			if err := m.rep.raft.Barrier(30 * time.Second).Error(); err != nil {
				m.log.Warn().Err(err).Msg("elected, but the registry barrier failed; waiting for the next election")
				continue
			}
			if m.rep.raft.State() == raft.Leader {
				m.becomeLeader()
			}
		}
	}
}

// becomeLeader rebuilds the allocator and live state from the registry.
// Agents get --agent-reregister-timeout to come back; frameworks their
// failover timeout. Offers made by any earlier leader are void: this
// master's offer table starts empty.
func (m *Master) becomeLeader() {
	m.mu.Lock()
	if m.leader.Load() {
		m.mu.Unlock()
		return
	}
	if err := m.resetLiveLocked("leadership changed"); err != nil {
		m.mu.Unlock()
		m.log.Error().Err(err).Msg("rebuilding the allocator")
		return
	}
	m.recoverLocked()
	m.elected = time.Now()
	m.leader.Store(true)
	agents, fws := len(m.agents), len(m.frameworks)
	m.mu.Unlock()
	m.m.leaderChanges.Inc()
	m.log.Info().Int("agents", agents).Int("frameworks", fws).Msg("elected leading master; live state rebuilt from the registry")
	m.triggerAllocation()
}

// becomeFollower stops allocating and closes every stream, so schedulers,
// agents and operator subscribers reconnect and find the new leader.
func (m *Master) becomeFollower() {
	m.mu.Lock()
	was := m.leader.Swap(false)
	m.resetLiveLocked("this master is no longer the leader")
	m.mu.Unlock()
	if was {
		m.log.Warn().Msg("lost leadership; stopped allocating and closed all streams")
	}
}

// resetLiveLocked closes every stream, stops every timer and starts an
// empty allocator. Timers that already fired find different objects in the
// maps and do nothing. Caller holds m.mu.
func (m *Master) resetLiveLocked(why string) error {
	for _, fw := range m.frameworks {
		if fw.failoverTimer != nil {
			fw.failoverTimer.Stop()
		}
		if fw.stream != nil {
			fw.stream.Close(why)
		}
	}
	for _, a := range m.agents {
		if a.lostTimer != nil {
			a.lostTimer.Stop()
		}
		if a.stream != nil {
			a.stream.Close(why)
		}
	}
	for _, o := range m.offers {
		if o.timer != nil {
			o.timer.Stop()
		}
	}
	for s := range m.opSubs {
		s.Close(why)
	}
	alloc, err := newAllocator(m.allocCfg, m.cfg.Weights)
	if err != nil {
		return err
	}
	m.alloc = alloc
	m.agents = map[string]*agentState{}
	m.frameworks = map[string]*framework{}
	m.removedFrameworks = map[string]bool{}
	m.completed = nil
	m.offers = map[string]*offer{}
	m.opSubs = map[*api.Stream]bool{}
	m.usage = map[string]*api.Usage{}
	m.weights = map[string]float64{}
	for k, v := range m.cfg.Weights {
		m.weights[k] = v
	}
	return nil
}

// Addr is the address the master listens on.
func (m *Master) Addr() string { return m.ln.Addr().String() }

// Stop closes every stream, stops serving and closes raft.
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
		Version:  strPtr(Version),
		Address:  &mesos.Address{Hostname: &host, IP: &ipStr, Port: port},
	}
}

func strPtr(s string) *string { return &s }

// recover rebuilds live state from the registry after a (re)start: agents
// wait to re-register, frameworks to re-subscribe within their failover
// timeout, and tasks are known again with their latest status.
func (m *Master) recover() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recoverLocked()
}

func (m *Master) recoverLocked() {
	if cfg := m.reg.Config(); len(cfg.Weights) > 0 {
		if err := m.alloc.SetWeights(cfg.Weights); err == nil {
			for k, v := range cfg.Weights {
				m.weights[k] = v
			}
		}
	}
	for _, rec := range m.reg.Agents() {
		total, err := resources.Parse(rec.Resources)
		if err != nil {
			m.log.Warn().Str("agent_id", rec.Id).Err(err).Msg("registry agent has bad resources; dropped")
			continue
		}
		a := &agentState{rec: rec, total: total, executors: map[string]resources.Resources{}}
		m.agents[rec.Id] = a
		m.startAgentLostTimer(a, m.cfg.AgentReregisterTimeout)
	}
	now := time.Now()
	for _, rec := range m.reg.Frameworks() {
		var info mesos.FrameworkInfo
		if err := info.Unmarshal(rec.Info); err != nil {
			continue
		}
		fw := m.newFramework(rec.Id, info)
		fw.registered = time.Unix(0, rec.RegisteredUnixNano)
		fw.disconnectedAt = now
		m.frameworks[rec.Id] = fw
		m.alloc.AddFramework(fw.id, fw.role)
		m.alloc.DeactivateFramework(fw.id)
		m.startFailoverTimer(fw)
	}
	for _, rec := range m.reg.Tasks() {
		fw := m.frameworks[rec.FrameworkId]
		if fw == nil {
			continue
		}
		t := &task{id: rec.TaskId, fw: rec.FrameworkId, agent: rec.AgentId, executor: rec.ExecutorId, state: mesos.TaskState(rec.State)}
		t.info.Unmarshal(rec.Info)
		t.res, _ = resources.Parse(rec.Resources)
		if len(rec.Status) > 0 {
			var st mesos.TaskStatus
			if st.Unmarshal(rec.Status) == nil {
				t.status = &st
			}
		}
		fw.tasks[t.id] = t
	}
}

func (m *Master) newFramework(id string, info mesos.FrameworkInfo) *framework {
	fw := &framework{id: id, offers: map[string]*offer{}, tasks: map[string]*task{}}
	fw.setInfo(info)
	return fw
}

func (fw *framework) setInfo(info mesos.FrameworkInfo) {
	info.ID = &mesos.FrameworkID{Value: fw.id}
	fw.info = info
	fw.multiRole = false
	for _, c := range info.Capabilities {
		if c.GetType() == mesos.FrameworkInfo_Capability_MULTI_ROLE {
			fw.multiRole = true
		}
	}
	fw.role = info.GetRole()
	if fw.multiRole && len(info.Roles) > 0 {
		fw.role = info.Roles[0]
	}
	if fw.role == "" {
		fw.role = resources.Unreserved
	}
}

// triggerAllocation asks the allocation loop for a cycle soon; calls
// coalesce.
func (m *Master) triggerAllocation() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

func (m *Master) allocationLoop() {
	t := time.NewTicker(m.cfg.AllocationInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		case <-m.kick:
		}
		if m.leader.Load() {
			m.allocate()
		}
	}
}

func (m *Master) allocate() {
	start := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	decisions := m.alloc.Allocate().Offers
	byFw := map[string][]mesos.Offer{}
	for _, d := range decisions {
		fw := m.frameworks[d.Framework]
		a := m.agents[d.Agent]
		if fw == nil || fw.stream == nil || a == nil || a.stream == nil {
			m.alloc.Recover(d.Framework, d.Agent, d.Resources, nil)
			continue
		}
		m.seq++
		o := &offer{id: m.id + "-O" + strconv.FormatUint(m.seq, 10), fw: fw.id, agent: a.rec.Id, res: d.Resources}
		m.offers[o.id] = o
		fw.offers[o.id] = o
		if m.cfg.OfferTimeout > 0 {
			id := o.id
			o.timer = time.AfterFunc(m.cfg.OfferTimeout, func() { m.rescindOffer(id, "offer timed out") })
		}
		byFw[fw.id] = append(byFw[fw.id], m.mesosOffer(fw, a, o))
		m.m.offers.Inc()
		m.log.Debug().Str("framework_id", fw.id).Str("agent_id", a.rec.Id).Str("resources", d.Resources.String()).
			Str("reason", d.Reason.String()).Msg("offer")
	}
	for fwID, offers := range byFw {
		m.sendFramework(m.frameworks[fwID], &schedEvent{Type: evOffers, Offers: &schedOffers{Offers: offers}})
	}
	m.m.allocCycle.Observe(time.Since(start).Seconds())
}

func (m *Master) mesosOffer(fw *framework, a *agentState, o *offer) mesos.Offer {
	allocRole := ""
	if fw.multiRole {
		allocRole = fw.role
	}
	host := a.rec.Hostname
	mo := mesos.Offer{
		ID:          mesos.OfferID{Value: o.id},
		FrameworkID: mesos.FrameworkID{Value: fw.id},
		AgentID:     mesos.AgentID{Value: a.rec.Id},
		Hostname:    host,
		Resources:   resources.ToMesos(o.res, "", allocRole),
	}
	if allocRole != "" {
		mo.AllocationInfo = &mesos.Resource_AllocationInfo{Role: strPtr(allocRole)}
	}
	for k, v := range a.rec.Attributes {
		t := mesos.TEXT
		mo.Attributes = append(mo.Attributes, mesos.Attribute{Name: k, Type: t, Text: &mesos.Value_Text{Value: v}})
	}
	if h, p, err := net.SplitHostPort(a.rec.Address); err == nil {
		port, _ := strconv.Atoi(p)
		mo.URL = &mesos.URL{Scheme: "http", Address: mesos.Address{Hostname: &h, Port: int32(port)}, Path: strPtr("/slave(1)")}
	}
	return mo
}

// rescindOffer withdraws an outstanding offer and returns its resources.
func (m *Master) rescindOffer(id, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.offers[id]
	if o == nil {
		return
	}
	m.removeOffer(o, true, nil)
	if fw := m.frameworks[o.fw]; fw != nil {
		m.sendFramework(fw, &schedEvent{Type: evRescind, Rescind: &schedRescind{OfferID: mesos.OfferID{Value: id}}})
	}
	m.log.Info().Str("offer_id", id).Str("why", why).Msg("offer rescinded")
	m.triggerAllocation()
}

// removeOffer forgets o; with recover its resources go back to the
// allocator (with filter fl).
func (m *Master) removeOffer(o *offer, recoverRes bool, fl *allocator.Filter) {
	if o.timer != nil {
		o.timer.Stop()
	}
	delete(m.offers, o.id)
	if fw := m.frameworks[o.fw]; fw != nil {
		delete(fw.offers, o.id)
	}
	if recoverRes {
		if err := m.alloc.Recover(o.fw, o.agent, o.res, fl); err != nil {
			m.log.Warn().Err(err).Str("offer_id", o.id).Msg("recovering offer")
		}
	}
}

// sendFramework queues an event on the framework's stream, if connected.
func (m *Master) sendFramework(fw *framework, ev *schedEvent) {
	if fw == nil || fw.stream == nil {
		return
	}
	fw.stream.Send(ev)
}

func (m *Master) startFailoverTimer(fw *framework) {
	if fw.failoverTimer != nil {
		fw.failoverTimer.Stop()
	}
	d := time.Duration(fw.info.GetFailoverTimeout() * float64(time.Second))
	id := fw.id
	fw.failoverTimer = time.AfterFunc(d, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		f := m.frameworks[id]
		if f == nil || f != fw || f.stream != nil {
			return
		}
		m.log.Info().Str("framework_id", id).Dur("failover_timeout", d).Msg("framework did not re-subscribe in time; removing it")
		m.removeFramework(f, "failover timeout expired")
	})
}

// removeFramework kills the framework's tasks, returns its resources and
// forgets it. Caller holds m.mu.
func (m *Master) removeFramework(fw *framework, why string) {
	if fw.failoverTimer != nil {
		fw.failoverTimer.Stop()
	}
	for _, o := range fw.offers {
		m.removeOffer(o, true, nil)
	}
	hosts := map[string]bool{}
	for _, t := range fw.tasks {
		hosts[t.agent] = true
	}
	for id := range hosts {
		if a := m.agents[id]; a != nil && a.stream != nil {
			a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_SHUTDOWN_FRAMEWORK, FrameworkId: fw.id})
		}
	}
	for _, a := range m.agents {
		for k := range a.executors {
			if len(k) > len(fw.id) && k[:len(fw.id)+1] == fw.id+"/" {
				delete(a.executors, k)
			}
		}
	}
	m.alloc.RemoveFramework(fw.id)
	delete(m.frameworks, fw.id)
	m.removedFrameworks[fw.id] = true
	if fw.stream != nil {
		fw.stream.Close("framework removed: " + why)
	}
	m.rep.propose(&api.Command{Type: api.CommandType_FRAMEWORK_REMOVE, Id: fw.id})
	m.publishFramework(evFrameworkRemoved, fw)
	m.log.Info().Str("framework_id", fw.id).Str("why", why).Msg("framework removed")
	m.triggerAllocation()
}

func (m *Master) frameworkRecord(fw *framework) *api.FrameworkRecord {
	b, _ := fw.info.Marshal()
	rec := &api.FrameworkRecord{Id: fw.id, Info: b, RegisteredUnixNano: fw.registered.UnixNano(), Suppressed: fw.suppressed}
	if fw.stream == nil && !fw.disconnectedAt.IsZero() {
		rec.DisconnectedUnixNano = fw.disconnectedAt.UnixNano()
	}
	return rec
}

func taskRecord(t *task) *api.TaskRecord {
	if t.infoBytes == nil {
		t.infoBytes, _ = t.info.Marshal()
	}
	info := t.infoBytes
	rec := &api.TaskRecord{FrameworkId: t.fw, TaskId: t.id, AgentId: t.agent, ExecutorId: t.executor,
		Info: info, State: int32(t.state), Resources: t.res.String()}
	if t.status != nil {
		rec.Status, _ = t.status.Marshal()
	}
	return rec
}

func isTerminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR,
		mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR:
		return true
	}
	return false
}

func splitHostPort(addr string) (string, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	return h, n, err
}

// maxCompleted bounds the terminal tasks kept for /state and GET_TASKS, as
// Mesos's --max_completed_tasks_per_framework does (for all frameworks).
const maxCompleted = 1000

// addCompleted remembers a finished task. Caller holds m.mu.
func (m *Master) addCompleted(t *task) {
	m.completed = append(m.completed, t)
	if len(m.completed) > 2*maxCompleted {
		m.completed = append([]*task(nil), m.completed[len(m.completed)-maxCompleted:]...)
	}
}
