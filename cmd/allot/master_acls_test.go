package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --acls is read before the master starts: a file that does not parse
// stops it with the file's problem, never a master running without the
// rules the operator meant.
func TestMasterACLsFlag(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"run_task": []}`), 0o644)
	tests := []struct {
		name, file, want string
	}{
		{"unknown key", bad, `unknown key "run_task"`},
		{"missing file", filepath.Join(dir, "none.json"), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runMaster([]string{"--work-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--acls", tt.file}, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "--acls") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("runMaster: %v, want an --acls error containing %q", err, tt.want)
			}
		})
	}
}
