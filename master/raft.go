package master

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// replicator proposes registry commands through raft. For now the master is
// a single voter on an in-memory transport; the replicated-master work swaps
// in a network transport and more voters without touching callers.
type replicator struct {
	raft  *raft.Raft
	store *raftboltdb.BoltStore
}

func openRaft(dir string, fsm raft.FSM, logLevel string) (*replicator, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	store, err := raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	if err != nil {
		return nil, fmt.Errorf("opening raft log in %s: %w", dir, err)
	}
	snaps, err := raft.NewFileSnapshotStore(dir, 2, os.Stderr)
	if err != nil {
		store.Close()
		return nil, err
	}
	cfg := raft.DefaultConfig()
	cfg.LocalID = "master-1"
	cfg.HeartbeatTimeout = 300 * time.Millisecond
	cfg.ElectionTimeout = 300 * time.Millisecond
	cfg.LeaderLeaseTimeout = 200 * time.Millisecond
	cfg.CommitTimeout = 5 * time.Millisecond
	cfg.SnapshotThreshold = 8192
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.LevelFromString(logLevel), Output: os.Stderr})
	addr, trans := raft.NewInmemTransport(raft.ServerAddress(cfg.LocalID))
	has, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		store.Close()
		return nil, err
	}
	if !has {
		conf := raft.Configuration{Servers: []raft.Server{{ID: cfg.LocalID, Address: addr}}}
		if err := raft.BootstrapCluster(cfg, store, store, snaps, trans, conf); err != nil {
			store.Close()
			return nil, fmt.Errorf("bootstrapping raft: %w", err)
		}
	}
	r, err := raft.NewRaft(cfg, fsm, store, store, snaps, trans)
	if err != nil {
		store.Close()
		return nil, err
	}
	return &replicator{raft: r, store: store}, nil
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

// propose submits c and returns the future; callers that need durability
// before answering wait on it, others let raft batch it.
func (r *replicator) propose(c *api.Command) raft.ApplyFuture {
	b, err := proto.Marshal(c)
	if err != nil {
		return errFuture{err}
	}
	return r.raft.Apply(b, 5*time.Second)
}

func (r *replicator) close() error {
	err := r.raft.Shutdown().Error()
	if e := r.store.Close(); err == nil {
		err = e
	}
	return err
}

type errFuture struct{ err error }

func (f errFuture) Error() error  { return f.err }
func (f errFuture) Index() uint64 { return 0 }
func (f errFuture) Response() any { return nil }

var _ raft.ApplyFuture = errFuture{}
