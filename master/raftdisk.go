package master

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// What a master's /health knows of its raft disk: whether the raft log can
// be written, and the snapshot store's temporary directories kept tidy.
//
// A master whose disk is full still answers HTTP, still forwards, and may
// even be elected for a moment (it steps down when it cannot store its
// first entry), so only the log writes themselves tell that it cannot do
// its job. raft does not report a follower's failed writes anywhere but its
// log; watchedLogs sees every write, the leader's and a follower's alike.

// watchedLogs is the raft log store, remembering whether its last write
// failed (and since when), until a write succeeds again.
type watchedLogs struct {
	raft.LogStore
	clock func() time.Time

	mu       sync.Mutex
	err      error     // the last write's error; nil after a success
	since    time.Time // when writes started failing
	failures int
}

func newWatchedLogs(s raft.LogStore) *watchedLogs {
	return &watchedLogs{LogStore: s, clock: time.Now}
}

func (w *watchedLogs) StoreLog(l *raft.Log) error { return w.note(w.LogStore.StoreLog(l)) }

func (w *watchedLogs) StoreLogs(ls []*raft.Log) error { return w.note(w.LogStore.StoreLogs(ls)) }

// IsMonotonic passes on the wrapped store's answer (raft.MonotonicLogStore).
func (w *watchedLogs) IsMonotonic() bool {
	m, ok := w.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

func (w *watchedLogs) note(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		w.err, w.failures = nil, 0
		return nil
	}
	if w.err == nil {
		w.since = w.clock()
	}
	w.err = err
	w.failures++
	return err
}

// writeError is why the raft log cannot be written now, or nil.
func (w *watchedLogs) writeError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		return nil
	}
	return fmt.Errorf("the raft log cannot be written: %d writes failed since %s, the last with: %v",
		w.failures, w.since.UTC().Format(time.RFC3339), w.err)
}

// tidySnapshots is raft's file snapshot store, removing the temporary
// directory (snapshots/<id>.tmp) of every snapshot that fails. The file
// store leaves it when creating the snapshot fails, when Cancel cannot
// flush (a full disk), and when Close cannot write the metadata or move
// the directory into place; raft never looks at it again.
type tidySnapshots struct {
	raft.SnapshotStore
	dir string // the store's snapshots directory

	mu   sync.Mutex
	open map[string]bool // ids of the sinks being written
}

// newTidySnapshots wraps the file store kept in parent/snapshots and
// removes the temporary directories earlier runs left.
func newTidySnapshots(s raft.SnapshotStore, parent string) *tidySnapshots {
	t := &tidySnapshots{SnapshotStore: s, dir: filepath.Join(parent, "snapshots"), open: map[string]bool{}}
	t.removeStale()
	return t
}

func (t *tidySnapshots) Create(version raft.SnapshotVersion, index, term uint64, c raft.Configuration, ci uint64, tr raft.Transport) (raft.SnapshotSink, error) {
	sink, err := t.SnapshotStore.Create(version, index, term, c, ci, tr)
	if err != nil {
		t.removeStale()
		return nil, err
	}
	t.mu.Lock()
	t.open[sink.ID()] = true
	t.mu.Unlock()
	return &tidySink{SnapshotSink: sink, store: t}, nil
}

// removeStale removes every temporary directory no open sink writes.
func (t *tidySnapshots) removeStale() {
	entries, err := os.ReadDir(t.dir)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range entries {
		id, tmp := strings.CutSuffix(e.Name(), ".tmp")
		if tmp && e.IsDir() && !t.open[id] {
			os.RemoveAll(filepath.Join(t.dir, e.Name()))
		}
	}
}

// tidySink removes its temporary directory when it fails.
type tidySink struct {
	raft.SnapshotSink
	store *tidySnapshots
}

func (s *tidySink) Close() error {
	err := s.SnapshotSink.Close()
	s.done(err != nil)
	return err
}

func (s *tidySink) Cancel() error {
	err := s.SnapshotSink.Cancel()
	s.done(true)
	return err
}

func (s *tidySink) done(failed bool) {
	id := s.ID()
	s.store.mu.Lock()
	delete(s.store.open, id)
	s.store.mu.Unlock()
	if failed {
		os.RemoveAll(filepath.Join(s.store.dir, id+".tmp"))
	}
}
