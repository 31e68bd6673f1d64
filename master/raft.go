package master

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/internal/tlsconf"
)

// Peer is one voter of the master cluster: its raft address and the HTTP
// address clients use. The HTTP address doubles as the raft server id, so a
// follower can name the leader's HTTP address (for 307 redirects) from raft's
// own leader information, with no extra round trip or registry record.
type Peer struct {
	HTTP string // host:port of the scheduler/operator API; the raft server id
	Raft string // host:port of the raft transport
}

// tcpLayer is raft's TCP stream layer. Unlike raft.NewTCPTransport's it may
// bind one address and advertise another (a master behind NAT or a proxy),
// and it dials peers from the bound IP, so that on a multi-homed host raft
// traffic leaves by the raft interface and peers (and firewalls) see the
// same address in both directions.
type tcpLayer struct {
	net.Listener
	advertise net.Addr
	localIP   net.IP // nil: let the kernel pick
}

func (l *tcpLayer) Addr() net.Addr { return l.advertise }

func (l *tcpLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	if l.localIP != nil {
		d.LocalAddr = &net.TCPAddr{IP: l.localIP}
	}
	return d.Dial("tcp", string(addr))
}

func newTCPLayer(bind, advertise string) (*tcpLayer, error) {
	adv, err := net.ResolveTCPAddr("tcp", advertise)
	if err != nil {
		return nil, err
	}
	if adv.IP == nil || adv.IP.IsUnspecified() {
		return nil, fmt.Errorf("%s is not an address other masters can reach", advertise)
	}
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	l := &tcpLayer{Listener: ln, advertise: adv}
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsUnspecified() {
		l.localIP = ip
	}
	return l, nil
}

// raftOptions configures openRaft.
type raftOptions struct {
	// Self is this master. Self.Raft == "" runs a single voter on an
	// in-memory transport (no cluster; the pre-cluster behaviour).
	Self Peer
	// Peers is the initial voter set used to bootstrap a fresh cluster; a
	// node whose store is empty and which is not in Peers waits to be added
	// with add-voter instead of bootstrapping (bootstrapping a joiner would
	// give it a history of its own).
	Peers []Peer
	// Bind is where raft listens when it differs from Self.Raft (the address
	// peers dial); empty: Self.Raft.
	Bind string
	// SnapshotThreshold and TrailingLogs tune log compaction (0: 8192 and
	// 10240): a snapshot is taken every SnapshotThreshold entries and
	// TrailingLogs entries are kept after it; a follower further behind
	// than that catches up from the snapshot.
	SnapshotThreshold, TrailingLogs uint64
	// Multiplier scales every raft timeout; 1 is the fastest (LAN).
	Multiplier int
	LogLevel   string
	// Notify receives true on gaining and false on losing leadership.
	Notify chan bool
	// TLS, when set, runs raft between masters over mutual TLS
	// (raft_tls.go).
	TLS *tlsconf.Bundle
	// wrapLogs, when a test sets it, wraps the log store (fault injection).
	wrapLogs func(raft.LogStore) raft.LogStore
}

// replicator proposes registry commands through raft: one voter on an
// in-memory transport for a lone master, or a cluster over TCP.
type replicator struct {
	raft  *raft.Raft
	store *raftboltdb.BoltStore
	logs  *watchedLogs
	trans raft.Transport
	self  Peer
	queue chan proposal
	done  chan struct{}
	// mu guards closed: proposals after close (a timer firing during
	// shutdown) are dropped rather than sent on a closed channel.
	mu     sync.RWMutex
	closed bool
	// leaderWait bounds how long a follower holds a request while no live
	// leader is known; staleAfter is how long a leader may be silent before
	// a follower stops redirecting to it (both scale with the multiplier).
	leaderWait, staleAfter time.Duration
	// indexes, when a test sets it, stands in for raft's commit and
	// applied indexes (health.go).
	indexes func() (commit, applied uint64)
	// commitObs observes how long a batch takes to commit and apply.
	commitObs func(time.Duration)
	// beforeApply, when set, is called before each batch is committed: a
	// test holds commits back with it to open the window between a change
	// and its commit.
	beforeApply atomic.Pointer[func()]
}

// proposal is one command waiting to be replicated; done, if not nil,
// receives the outcome.
type proposal struct {
	cmd  *api.Command
	done chan error
}

// loneID is the server id of a master without --raft-addr; kept so that
// registries written before clustering open unchanged.
const loneID = "master-1"

func openRaft(dir string, fsm raft.FSM, o raftOptions) (*replicator, error) {
	st, err := openRaftStores(dir)
	if err != nil {
		return nil, err
	}
	if o.wrapLogs != nil {
		st.watched.LogStore = o.wrapLogs(st.watched.LogStore)
	}
	cfg := raftConfig(o)
	trans, addr, err := raftTransport(cfg, &o)
	if err != nil {
		st.bolt.Close()
		return nil, err
	}
	if err := bootstrapIfNew(cfg, st, trans, addr, o); err != nil {
		st.bolt.Close()
		return nil, err
	}
	r, err := raft.NewRaft(cfg, fsm, st.logs, st.bolt, st.snaps, trans)
	if err != nil {
		st.bolt.Close()
		return nil, err
	}
	d := time.Duration(max(o.Multiplier, 1))
	rep := &replicator{raft: r, store: st.bolt, logs: st.watched, trans: trans, self: o.Self, queue: make(chan proposal, 1<<16), done: make(chan struct{}),
		leaderWait: 4 * time.Second * d, staleAfter: cfg.HeartbeatTimeout}
	go rep.loop()
	return rep, nil
}

// raftStores are raft's log, stable and snapshot stores in one directory.
type raftStores struct {
	bolt    *raftboltdb.BoltStore
	logs    raft.LogStore
	watched *watchedLogs // logs, as /health sees them (raftdisk.go)
	snaps   raft.SnapshotStore
}

func openRaftStores(dir string) (*raftStores, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bolt, err := raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	if err != nil {
		return nil, fmt.Errorf("opening raft log in %s: %w", dir, err)
	}
	// The cache keeps the newest entries in memory so that replication to a
	// follower that is slightly behind does not read bolt.
	logs, err := raft.NewLogCache(512, bolt)
	if err != nil {
		bolt.Close()
		return nil, err
	}
	snaps, err := raft.NewFileSnapshotStore(dir, 2, os.Stderr)
	if err != nil {
		bolt.Close()
		return nil, err
	}
	watched := newWatchedLogs(logs)
	return &raftStores{bolt: bolt, logs: watched, watched: watched, snaps: newTidySnapshots(snaps, dir)}, nil
}

// raftConfig is raft's configuration for o (timeouts, compaction, logging).
func raftConfig(o raftOptions) *raft.Config {
	d := time.Duration(max(o.Multiplier, 1))
	cfg := raft.DefaultConfig()
	// Timeouts: a follower starts an election after 1-2 heartbeat timeouts
	// of silence, so failover takes about 0.5-1 s plus one election round at
	// multiplier 1. The lease is shorter than the heartbeat timeout so a
	// partitioned leader steps down before a new one is elected.
	cfg.HeartbeatTimeout = 500 * time.Millisecond * d
	cfg.ElectionTimeout = 500 * time.Millisecond * d
	cfg.LeaderLeaseTimeout = 250 * time.Millisecond * d
	cfg.CommitTimeout = 5 * time.Millisecond
	cfg.SnapshotThreshold = 8192
	if o.SnapshotThreshold > 0 {
		cfg.SnapshotThreshold = o.SnapshotThreshold
		cfg.SnapshotInterval = time.Second * d
	}
	if o.TrailingLogs > 0 {
		cfg.TrailingLogs = o.TrailingLogs
	}
	cfg.NotifyCh = o.Notify
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.LevelFromString(o.LogLevel), Output: os.Stderr, JSONFormat: true})
	return cfg
}

// raftTransport sets cfg's server id and returns the transport: in memory
// for a lone master (which also fixes o's peers to itself), TCP otherwise.
func raftTransport(cfg *raft.Config, o *raftOptions) (raft.Transport, raft.ServerAddress, error) {
	if o.Self.Raft == "" {
		cfg.LocalID = loneID
		cfg.HeartbeatTimeout = 300 * time.Millisecond
		cfg.ElectionTimeout = 300 * time.Millisecond
		cfg.LeaderLeaseTimeout = 200 * time.Millisecond
		addr, trans := raft.NewInmemTransport(raft.ServerAddress(cfg.LocalID))
		o.Peers = []Peer{{HTTP: loneID}}
		o.Self.HTTP = loneID
		return trans, addr, nil
	}
	cfg.LocalID = raft.ServerID(o.Self.HTTP)
	bind := o.Bind
	if bind == "" {
		bind = o.Self.Raft
	}
	layer, err := newTCPLayer(bind, o.Self.Raft)
	if err != nil {
		return nil, "", fmt.Errorf("raft transport on %s: %w", bind, err)
	}
	d := time.Duration(max(o.Multiplier, 1))
	var stream raft.StreamLayer = layer
	if o.TLS != nil {
		if stream, err = newTLSLayer(layer, o.TLS); err != nil {
			layer.Close()
			return nil, "", err
		}
	}
	return raft.NewNetworkTransport(stream, 4, 5*time.Second*d, os.Stderr), raft.ServerAddress(o.Self.Raft), nil
}

// bootstrapIfNew bootstraps a fresh cluster from o.Peers if this node's
// store is empty and it is one of them.
func bootstrapIfNew(cfg *raft.Config, st *raftStores, trans raft.Transport, addr raft.ServerAddress, o raftOptions) error {
	has, err := raft.HasExistingState(st.logs, st.bolt, st.snaps)
	if err != nil {
		return err
	}
	inPeers := false
	var servers []raft.Server
	for _, p := range o.Peers {
		a := raft.ServerAddress(p.Raft)
		if p.HTTP == o.Self.HTTP {
			inPeers, a = true, addr
		}
		servers = append(servers, raft.Server{ID: raft.ServerID(p.HTTP), Address: a, Suffrage: raft.Voter})
	}
	if !has && inPeers {
		if err := raft.BootstrapCluster(cfg, st.logs, st.bolt, st.snaps, trans, raft.Configuration{Servers: servers}); err != nil {
			return fmt.Errorf("bootstrapping raft: %w", err)
		}
	}
	return nil
}

// leader returns the HTTP address of the current leader ("" while none is
// known) and whether it is this master.
func (r *replicator) leader() (string, bool) {
	_, id := r.raft.LeaderWithID()
	if id == "" {
		return "", false
	}
	return string(id), string(id) == r.self.HTTP
}

// loop is the group-commit pipeline: it takes every queued command, proposes
// them as one BATCH entry and waits for it to commit, while the next batch
// queues up. raft.Apply blocks while the leader writes to disk, so callers
// never call it directly (they would block under the master's lock).
func (r *replicator) loop() {
	defer close(r.done)
	for p := range r.queue {
		batch := []proposal{p}
	drain:
		for len(batch) < 4096 {
			select {
			case q, ok := <-r.queue:
				if !ok {
					break drain
				}
				batch = append(batch, q)
			default:
				break drain
			}
		}
		cmd := batch[0].cmd
		if len(batch) > 1 {
			cmd = &api.Command{Type: api.CommandType_BATCH}
			for _, q := range batch {
				if q.cmd.GetType() == api.CommandType_BATCH {
					cmd.Batch = append(cmd.Batch, q.cmd.Batch...) // BATCH does not nest
				} else {
					cmd.Batch = append(cmd.Batch, q.cmd)
				}
			}
		}
		if hold := r.beforeApply.Load(); hold != nil {
			(*hold)()
		}
		t0 := time.Now()
		err := r.apply(cmd)
		if r.commitObs != nil && err == nil {
			r.commitObs(time.Since(t0))
		}
		for _, q := range batch {
			if q.done != nil {
				q.done <- err
			}
		}
	}
}

func (r *replicator) apply(c *api.Command) error {
	b, err := proto.Marshal(c)
	if err != nil {
		return err
	}
	f := r.raft.Apply(b, 10*time.Second)
	if err := f.Error(); err != nil {
		return err
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return err
	}
	return nil
}

// waitLeader blocks until this node leads and has applied every committed
// entry (so the registry is current), or the timeout passes.
func (r *replicator) waitLeader(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for r.raft.State() != raft.Leader {
		if time.Now().After(deadline) {
			return fmt.Errorf("raft: no leadership after %v", timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return r.raft.Barrier(timeout).Error()
}

// propose queues c for replication without waiting; commands are applied
// in the order they were proposed.
func (r *replicator) propose(c *api.Command) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.closed {
		r.queue <- proposal{cmd: c}
	}
}

// proposeWait queues c and waits until it is committed and applied.
func (r *replicator) proposeWait(c *api.Command) error {
	done := make(chan error, 1)
	r.mu.RLock()
	if r.closed {
		r.mu.RUnlock()
		return raft.ErrRaftShutdown
	}
	r.queue <- proposal{cmd: c, done: done}
	r.mu.RUnlock()
	return <-done
}

// proposeThen queues c and calls then with the outcome once it is
// committed and applied (or failed), on a goroutine of its own, so callers
// holding the master's lock can chain work on durability.
func (r *replicator) proposeThen(c *api.Command, then func(error)) {
	done := make(chan error, 1)
	r.mu.RLock()
	if r.closed {
		r.mu.RUnlock()
		go then(raft.ErrRaftShutdown)
		return
	}
	r.queue <- proposal{cmd: c, done: done}
	r.mu.RUnlock()
	go func() { then(<-done) }()
}

func (r *replicator) close() error {
	r.mu.Lock()
	r.closed = true
	close(r.queue)
	r.mu.Unlock()
	<-r.done
	err := r.raft.Shutdown().Error()
	if c, ok := r.trans.(io.Closer); ok {
		c.Close()
	}
	if e := r.store.Close(); err == nil {
		err = e
	}
	return err
}
