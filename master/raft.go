package master

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
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
	queue chan proposal
	done  chan struct{}
	// mu guards closed: proposals after close (a timer firing during
	// shutdown) are dropped rather than sent on a closed channel.
	mu     sync.RWMutex
	closed bool
}

// proposal is one command waiting to be replicated; done, if not nil,
// receives the outcome.
type proposal struct {
	cmd  *api.Command
	done chan error
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
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.LevelFromString(logLevel), Output: os.Stderr, JSONFormat: true})
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
	rep := &replicator{raft: r, store: store, queue: make(chan proposal, 1<<16), done: make(chan struct{})}
	go rep.loop()
	return rep, nil
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
		err := r.apply(cmd)
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

func (r *replicator) close() error {
	r.mu.Lock()
	r.closed = true
	close(r.queue)
	r.mu.Unlock()
	<-r.done
	err := r.raft.Shutdown().Error()
	if e := r.store.Close(); err == nil {
		err = e
	}
	return err
}
