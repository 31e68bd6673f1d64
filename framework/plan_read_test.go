package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A split's file bytes reach the usage counters while it is read, a read
// buffer at a time, not once when the split ends: the per-second samples
// (and the stage peaks learned from them) must see the reads spread over
// the seconds they took.
func TestReadLinesCountsAsItReads(t *testing.T) {
	line := strings.Repeat("x", 99) + "\n"
	const lines = 30000 // 3 MB: three 1 MiB buffer fills
	path := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat(line, lines)), 0o644); err != nil {
		t.Fatal(err)
	}
	ex := &Executor{}
	r := &taskRun{ex: ex, m: &taskMetrics{}}
	n := &node{Op: "text", Path: path, Splits: []span{{0, int64(len(line) * lines)}}}
	var seen, counted []int64
	k := 0
	err := r.readLines(n, 0, func([]byte) {
		if k%(lines/6) == 0 {
			seen = append(seen, int64(k*len(line)))
			counted = append(counted, ex.stats.fileBytes.Load())
		}
		k++
	})
	if err != nil || k != lines {
		t.Fatalf("read %d lines, %v", k, err)
	}
	for i := range seen {
		// counted runs ahead of what was emitted by at most one buffer
		if counted[i] < seen[i] || counted[i] > seen[i]+1<<20 {
			t.Errorf("after %d bytes emitted the counter read %d: want it within one 1 MiB buffer ahead", seen[i], counted[i])
		}
	}
	if got := ex.stats.fileBytes.Load(); got != int64(len(line)*lines) {
		t.Errorf("counted %d bytes in all, want %d", got, len(line)*lines)
	}
	if r.m.BytesRead != int64(len(line)*lines) {
		t.Errorf("BytesRead %d, want %d", r.m.BytesRead, len(line)*lines)
	}
}
