package master

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
)

// tmpDirs lists the snapshot store's temporary directories.
func tmpDirs(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "snapshots", "*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFailedSnapshotsLeaveNoTemporaryDirectory(t *testing.T) {
	dir := t.TempDir()
	// One left by an earlier run that died mid-snapshot.
	if err := os.MkdirAll(filepath.Join(dir, "snapshots", "1-2-3.tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := openRaftStores(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.bolt.Close()
	if l := tmpDirs(t, dir); len(l) != 0 {
		t.Fatalf("opening the store kept %v", l)
	}
	_, trans := raft.NewInmemTransport("a")
	create := func(index uint64) raft.SnapshotSink {
		t.Helper()
		sink, err := st.snaps.Create(raft.SnapshotVersionMax, index, 1, raft.Configuration{}, 1, trans)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(sink, "state")
		return sink
	}
	tests := []struct {
		name string
		fail func(raft.SnapshotSink) error
	}{
		{"cancelled", func(s raft.SnapshotSink) error { return s.Cancel() }},
		// The final rename fails (its target is taken): the file store
		// returns the error and leaves <id>.tmp behind.
		{"close fails", func(s raft.SnapshotSink) error {
			os.MkdirAll(filepath.Join(dir, "snapshots", s.ID(), "taken"), 0o755)
			defer os.RemoveAll(filepath.Join(dir, "snapshots", s.ID()))
			if err := s.Close(); err == nil {
				t.Fatal("Close into a taken directory succeeded")
			}
			return nil
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open := create(uint64(10 + i))   // another snapshot, still being written
			failed := create(uint64(20 + i)) // the one that fails
			tt.fail(failed)
			l := tmpDirs(t, dir)
			if len(l) != 1 || filepath.Base(l[0]) != open.ID()+".tmp" {
				t.Fatalf("temporary directories %v, want only the open one's", l)
			}
			open.Cancel()
		})
	}
	// A good snapshot is kept.
	good := create(30)
	if err := good.Close(); err != nil {
		t.Fatal(err)
	}
	if list, _ := st.snaps.List(); len(list) != 1 || len(tmpDirs(t, dir)) != 0 {
		t.Fatalf("after a good snapshot: %d listed, %v temporary", len(list), tmpDirs(t, dir))
	}
}
