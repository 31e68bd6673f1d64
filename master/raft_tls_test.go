package master

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/allot-sched/allot/internal/tlsconf"
)

// countFSM counts applied entries; enough to see replication happen.
type countFSM struct {
	mu sync.Mutex
	n  int
}

func (f *countFSM) Apply(*raft.Log) any { f.mu.Lock(); f.n++; f.mu.Unlock(); return nil }
func (f *countFSM) applied() int        { f.mu.Lock(); defer f.mu.Unlock(); return f.n }
func (f *countFSM) Snapshot() (raft.FSMSnapshot, error) {
	return nil, raft.ErrNothingNewToSnapshot
}
func (f *countFSM) Restore(io.ReadCloser) error { return nil }

// tlsTransport is a raft transport over tlsLayer on a free loopback port.
func tlsTransport(t *testing.T, b *tlsconf.Bundle) (*raft.NetworkTransport, *tlsLayer) {
	t.Helper()
	tcp, err := newTCPLayer("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcp.advertise = tcp.Listener.Addr() // the port the kernel picked
	l, err := newTLSLayer(tcp, b)
	if err != nil {
		t.Fatal(err)
	}
	tr := raft.NewNetworkTransport(l, 2, 2*time.Second, io.Discard)
	t.Cleanup(func() { tr.Close() })
	return tr, l
}

func devBundle(t *testing.T, dir string) (*tlsconf.Bundle, tlsconf.Files) {
	t.Helper()
	f, err := tlsconf.DevFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tlsconf.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return b, f
}

// tlsRaftPair starts two raft nodes whose only transport is the TLS
// stream layer, bootstrapped as one cluster.
func tlsRaftPair(t *testing.T, b *tlsconf.Bundle) ([]*raft.Raft, []*countFSM, []*raft.NetworkTransport) {
	t.Helper()
	trans := make([]*raft.NetworkTransport, 2)
	servers := raft.Configuration{}
	for i := range trans {
		trans[i], _ = tlsTransport(t, b)
		servers.Servers = append(servers.Servers, raft.Server{ID: raft.ServerID(string(rune('a' + i))), Address: trans[i].LocalAddr(), Suffrage: raft.Voter})
	}
	fsms := make([]*countFSM, 2)
	nodes := make([]*raft.Raft, 2)
	for i, tr := range trans {
		cfg := raft.DefaultConfig()
		cfg.LocalID = servers.Servers[i].ID
		cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = 200*time.Millisecond, 200*time.Millisecond, 100*time.Millisecond
		cfg.LogOutput = io.Discard
		store := raft.NewInmemStore()
		snaps := raft.NewInmemSnapshotStore()
		if err := raft.BootstrapCluster(cfg, store, store, snaps, tr, servers); err != nil {
			t.Fatal(err)
		}
		fsms[i] = &countFSM{}
		r, err := raft.NewRaft(cfg, fsms[i], store, store, snaps, tr)
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = r
		t.Cleanup(func() { r.Shutdown().Error() })
	}
	return nodes, fsms, trans
}

// TestRaftOverMutualTLS elects a leader between two raft nodes over the
// TLS stream layer and replicates an entry, then checks that peers without
// a certificate from the cluster's CA are refused.
func TestRaftOverMutualTLS(t *testing.T) {
	dir := t.TempDir()
	b, f := devBundle(t, filepath.Join(dir, "pki"))
	nodes, fsms, trans := tlsRaftPair(t, b)
	// The entry is applied through whichever node leads; a loaded host can
	// make leadership change hands (200 ms timeouts) between finding the
	// leader and committing, which says nothing about TLS, so the apply is
	// retried on the new leader until the deadline.
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no entry committed over mutual TLS within 30s (last: %v)", err)
		}
		var leader *raft.Raft
		for _, r := range nodes {
			if r.State() == raft.Leader {
				leader = r
			}
		}
		if leader == nil {
			continue
		}
		if err = leader.Apply([]byte("x"), 5*time.Second).Error(); err == nil {
			break
		} else if err != raft.ErrLeadershipLost && err != raft.ErrNotLeader && err != raft.ErrLeadershipTransferInProgress {
			t.Fatalf("apply: %v", err)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); fsms[0].applied() < 1 || fsms[1].applied() < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("entry not replicated to both: %d, %d", fsms[0].applied(), fsms[1].applied())
		}
	}

	target := trans[0].LocalAddr()
	vote := func(tr *raft.NetworkTransport) error {
		var resp raft.RequestVoteResponse
		return tr.RequestVote("a", target, &raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{ID: []byte("intruder"), Addr: []byte(tr.LocalAddr())}, Term: 1 << 40}, &resp)
	}
	t.Run("peer without a client certificate", func(t *testing.T) {
		tr, l := tlsTransport(t, b)
		verifyOnly, err := tlsconf.ClientFor(f.CA)
		if err != nil {
			t.Fatal(err)
		}
		l.client = verifyOnly // trusts the CA, presents nothing
		if err := vote(tr); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("RequestVote without a client certificate: %v, want refused", err)
		}
	})
	t.Run("peer of another CA", func(t *testing.T) {
		other, _ := devBundle(t, filepath.Join(dir, "other"))
		tr, _ := tlsTransport(t, other)
		if err := vote(tr); err == nil {
			t.Fatal("RequestVote with a certificate of another CA succeeded")
		}
	})
	t.Run("plaintext peer", func(t *testing.T) {
		tcp, err := newTCPLayer("127.0.0.1:0", "127.0.0.1:1")
		if err != nil {
			t.Fatal(err)
		}
		tr := raft.NewNetworkTransport(tcp, 1, 2*time.Second, io.Discard)
		defer tr.Close()
		if err := vote(tr); err == nil {
			t.Fatal("RequestVote in plaintext succeeded")
		}
	})
	// A vote request that got through would have raised the term to the
	// intruder's 1<<40 (and made the leader step down); leadership may
	// still change hands on a loaded host, which says nothing about TLS.
	for _, r := range nodes {
		if term := r.Stats()["term"]; len(term) > 10 {
			t.Fatalf("the refused peers disturbed the cluster: term now %s", term)
		}
	}
}

func TestRaftTLSNeedsCA(t *testing.T) {
	dir := t.TempDir()
	f, err := tlsconf.DevFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(f.CA)
	b, err := tlsconf.Load(tlsconf.Files{Cert: f.Cert, Key: f.Key})
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := newTCPLayer("127.0.0.1:0", "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	if _, err := newTLSLayer(tcp, b); err == nil || !strings.Contains(err.Error(), "--tls-ca") {
		t.Fatalf("newTLSLayer without a CA: %v", err)
	}
}
