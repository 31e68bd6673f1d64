package master

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/hashicorp/raft"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/internal/limits"
	"github.com/allot-sched/allot/master/registry"
)

// DefaultMaxSnapshotBytes is --max-snapshot-bytes's default: a registry of
// a large cluster (every agent, framework and retained task) is tens of
// MiB; this leaves room to grow without letting one POST fill a disk.
const DefaultMaxSnapshotBytes = 256 << 20

// snapshotReadTimeout is how long a restore's body may take to arrive: it
// replaces --http-body-timeout for this route, whose bodies are large by
// nature. Only one restore runs at a time, so a slow one holds one slot.
const snapshotReadTimeout = 10 * time.Minute

// maxSnapshotBytes is the restore cap in force.
func (m *Master) maxSnapshotBytes() int64 {
	if m.cfg.MaxSnapshotBytes > 0 {
		return m.cfg.MaxSnapshotBytes
	}
	return DefaultMaxSnapshotBytes
}

// stageFile is the restore's temporary file; it remembers a failed write,
// which is the master's trouble (503), not the snapshot's (400).
type stageFile struct {
	*os.File
	n   int64
	err error
}

func (f *stageFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.n += int64(n)
	if err != nil && f.err == nil {
		f.err = err
	}
	return n, err
}

// stageSnapshot streams r's body to a temporary file in the work directory
// while validating it record by record, so that the master holds one record
// of it in memory at a time, whatever its size. The file is removed on any
// failure; on success the caller removes it after raft has copied it.
func (m *Master) stageSnapshot(w http.ResponseWriter, r *http.Request) (*stageFile, error) {
	limit := m.maxSnapshotBytes()
	if r.ContentLength > limit {
		w.Header().Set("Connection", "close") // do not read the rest
		return nil, api.Errorf(http.StatusRequestEntityTooLarge, "snapshot restore: the body (%d bytes) exceeds --max-snapshot-bytes (%d)", r.ContentLength, limit)
	}
	// An error means no connection to set it on (a test's recorder).
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(snapshotReadTimeout))
	f, err := os.CreateTemp(m.cfg.WorkDir, "restore-*.tmp")
	if err != nil {
		return nil, api.Errorf(http.StatusServiceUnavailable, "snapshot restore: cannot stage the snapshot in the work directory: %v", err)
	}
	sf := &stageFile{File: f}
	fail := func(err error) (*stageFile, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	records, err := registry.ValidateSnapshot(io.TeeReader(http.MaxBytesReader(w, r.Body, limit), sf))
	var mbe *http.MaxBytesError
	switch {
	case sf.err != nil:
		return fail(api.Errorf(http.StatusServiceUnavailable, "snapshot restore: staging the snapshot in the work directory: %v", sf.err))
	case errors.As(err, &mbe):
		return fail(api.Errorf(http.StatusRequestEntityTooLarge, "snapshot restore: the body exceeds --max-snapshot-bytes (%d)", limit))
	case err != nil && limits.IsTimeout(err):
		return fail(api.Errorf(http.StatusRequestTimeout, "snapshot restore: the body did not arrive within %v", snapshotReadTimeout))
	case err != nil:
		return fail(api.Errorf(http.StatusBadRequest, "snapshot restore: not a registry snapshot: %v", err))
	case records == 0:
		return fail(api.Errorf(http.StatusBadRequest, "snapshot restore: the body holds no records (a registry snapshot has at least its config record)"))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(api.Errorf(http.StatusServiceUnavailable, "snapshot restore: rereading the staged snapshot: %v", err))
	}
	return sf, nil
}

// restoreSnapshot is handleRestore's work: one restore at a time (409 to
// another), the body staged and validated on disk (stageSnapshot), then
// handed to raft, which copies it into its own snapshot store.
func (m *Master) restoreSnapshot(w http.ResponseWriter, r *http.Request) {
	if !m.restoring.CompareAndSwap(false, true) {
		w.Header().Set("Retry-After", "5")
		api.WriteError(w, api.Errorf(http.StatusConflict, "snapshot restore: another restore is in progress on this master; retry when it has finished"))
		return
	}
	defer m.restoring.Store(false)
	sf, err := m.stageSnapshot(w, r)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	defer func() {
		sf.Close()
		os.Remove(sf.Name())
	}()
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Size: sf.n}
	if err := m.rep.raft.Restore(meta, sf.File, time.Minute); err != nil {
		api.WriteError(w, api.Errorf(http.StatusServiceUnavailable, "snapshot restore: %v", err))
		return
	}
	m.mu.Lock()
	m.leader.Store(false)
	m.mu.Unlock()
	m.becomeLeader()
	m.log.Info().Int("records", m.reg.Size()).Int64("bytes", sf.n).Msg("registry restored from an operator snapshot")
	fmt.Fprintf(w, "restored %d records\n", m.reg.Size())
}
