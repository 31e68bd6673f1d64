package master

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// leftovers lists the restore's temporary files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "restore-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSnapshotRestore(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxSnapshotBytes = 4096 })
	var good bytes.Buffer
	if err := h.m.reg.WriteSnapshot(&good); err != nil {
		t.Fatal(err)
	}
	if good.Len() > 4096 {
		t.Fatalf("the test's snapshot is %d bytes, over its cap", good.Len())
	}
	// Damage after a valid first record: found while streaming.
	damaged := good.String() + "12\nnot a record"
	tests := []struct {
		name, body string
		chunked    bool
		want       int
		says       string
	}{
		{"valid", good.String(), false, 200, "restored "},
		{"valid chunked", good.String(), true, 200, "restored "},
		{"junk", "junk", false, 400, "not a registry snapshot"},
		{"damaged after good records", damaged, true, 400, "not a registry snapshot"},
		{"empty", "", true, 400, "no records"},
		{"over the cap, announced", strings.Repeat("x", 4097), false, 413, "--max-snapshot-bytes (4096)"},
		{"over the cap, chunked", good.String() + strings.Repeat(good.String(), 4096/good.Len()+1), true, 413, "--max-snapshot-bytes (4096)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{"Content-Type": "application/octet-stream"}
			if tt.chunked {
				hdr["chunked"] = "1"
			}
			rec := serve(h.m.Handler(), context.Background(), http.MethodPost, SnapshotPath, tt.body, hdr)
			if rec.Code != tt.want || !strings.Contains(rec.Body.String(), tt.says) {
				t.Fatalf("%d %q, want %d saying %q", rec.Code, rec.Body, tt.want, tt.says)
			}
			if l := leftovers(t, h.m.cfg.WorkDir); len(l) > 0 {
				t.Fatalf("temporary files left behind: %v", l)
			}
			if tt.want != 200 && !h.m.leader.Load() {
				t.Fatal("a refused restore disturbed the leader")
			}
		})
	}
}

func TestSnapshotRestoreOneAtATime(t *testing.T) {
	h := newHarness(t, nil)
	h.m.restoring.Store(true) // a restore in progress
	rec := serve(h.m.Handler(), context.Background(), http.MethodPost, SnapshotPath, "junk", nil)
	if rec.Code != http.StatusConflict || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("a second restore: %d %q, want 409 with Retry-After", rec.Code, rec.Body)
	}
	h.m.restoring.Store(false)
	rec = serve(h.m.Handler(), context.Background(), http.MethodPost, SnapshotPath, "junk", nil)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("after the first ended: %d %q, want 400 (validated)", rec.Code, rec.Body)
	}
}

func TestSnapshotRestoreDiskTrouble(t *testing.T) {
	h := newHarness(t, nil)
	var good bytes.Buffer
	h.m.reg.WriteSnapshot(&good)
	os.Chmod(h.m.cfg.WorkDir, 0o500) // no new files: as good as a full disk for staging
	defer os.Chmod(h.m.cfg.WorkDir, 0o755)
	if os.Geteuid() == 0 {
		t.Skip("root writes through directory permissions")
	}
	rec := serve(h.m.Handler(), context.Background(), http.MethodPost, SnapshotPath, good.String(), nil)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "cannot stage") {
		t.Fatalf("%d %q, want 503 naming the staging failure", rec.Code, rec.Body)
	}
}
