package master

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/api"
)

// failingLogs is a raft log store whose writes fail while full is set: a
// disk that has filled up.
type failingLogs struct {
	raft.LogStore
	full *atomic.Bool
}

var errDiskFull = errors.New("write raft.db: no space left on device")

func (f *failingLogs) StoreLog(l *raft.Log) error {
	if f.full.Load() {
		return errDiskFull
	}
	return f.LogStore.StoreLog(l)
}

func (f *failingLogs) StoreLogs(ls []*raft.Log) error {
	if f.full.Load() {
		return errDiskFull
	}
	return f.LogStore.StoreLogs(ls)
}

// diskHarness is a lone master whose raft log store fails on demand.
func diskHarness(t *testing.T, full *atomic.Bool) *Master {
	t.Helper()
	m, err := New(Config{WorkDir: t.TempDir(), Clock: newManualClock(), Log: zerolog.Nop(), AllocationInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m.info = masterInfo(m.id, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5050})
	m.wrapLogs = func(s raft.LogStore) raft.LogStore { return &failingLogs{LogStore: s, full: full} }
	if err := m.openReplication(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.mu.Lock()
		m.resetLiveLocked("test over")
		m.mu.Unlock()
		m.rep.close()
	})
	if err := m.leadAlone(); err != nil {
		t.Fatal(err)
	}
	return m
}

func health(m *Master) (int, string) {
	rec := serve(m.Handler(), context.Background(), http.MethodGet, "/health", "", nil)
	return rec.Code, rec.Body.String()
}

func TestHealthReportsAnUnwritableRaftLog(t *testing.T) {
	var full atomic.Bool
	m := diskHarness(t, &full)
	if code, body := health(m); code != http.StatusOK {
		t.Fatalf("healthy master: %d %q", code, body)
	}
	full.Store(true)
	if err := m.rep.proposeWait(&api.Command{Type: api.CommandType_BATCH}); err == nil {
		t.Fatal("a write to a full disk succeeded")
	}
	code, body := health(m)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "raft log cannot be written") || !strings.Contains(body, "no space left") {
		t.Fatalf("master with a full disk: %d %q, want 503 naming the failed write", code, body)
	}
	// The disk has room again: raft's next write (its election no-op, or
	// a command) succeeds and the master is healthy again.
	full.Store(false)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		m.rep.proposeWait(&api.Command{Type: api.CommandType_BATCH})
		if code, _ := health(m); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still unhealthy after the disk recovered: %q", body)
		}
	}
}

func TestHealthReportsRegistryLag(t *testing.T) {
	tests := []struct {
		name            string
		max             int64
		commit, applied uint64
		want            int
	}{
		{"caught up", 0, 500, 500, 200},
		{"at the default", 0, DefaultHealthMaxRaftLag + 1, 1, 200},
		{"past the default", 0, DefaultHealthMaxRaftLag + 2, 1, 503},
		{"past a set lag", 10, 20, 9, 503},
		{"check off", -1, 1 << 40, 0, 200},
	}
	h := newHarness(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.m.cfg.HealthMaxRaftLag = tt.max
			h.m.rep.indexes = func() (uint64, uint64) { return tt.commit, tt.applied }
			code, body := health(h.m)
			if code != tt.want || (code == 503 && !strings.Contains(body, "the registry lags raft")) {
				t.Fatalf("%d %q, want %d", code, body, tt.want)
			}
		})
	}
}
