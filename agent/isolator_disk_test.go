package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/rs/zerolog"
)

func writeBytes(t *testing.T, p string, n int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDu(t *testing.T) {
	tests := []struct {
		name     string
		make     func(t *testing.T, dir string)
		min, max uint64 // allocated bytes: at least min (data), at most max (data + metadata blocks)
	}{
		{"empty", func(*testing.T, string) {}, 0, 64 << 10},
		{"two files in subdirectories", func(t *testing.T, d string) {
			writeBytes(t, filepath.Join(d, "a"), 1<<20)
			writeBytes(t, filepath.Join(d, "x", "y", "b"), 2<<20)
		}, 3 << 20, 3<<20 + 128<<10},
		{"a hard link counts once", func(t *testing.T, d string) {
			writeBytes(t, filepath.Join(d, "a"), 1<<20)
			if err := os.Link(filepath.Join(d, "a"), filepath.Join(d, "b")); err != nil {
				t.Fatal(err)
			}
		}, 1 << 20, 1<<20 + 64<<10},
		{"a sparse file counts its blocks, not its size", func(t *testing.T, d string) {
			f, err := os.Create(filepath.Join(d, "sparse"))
			if err != nil {
				t.Fatal(err)
			}
			f.Truncate(1 << 30)
			f.Close()
		}, 0, 64 << 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			tc.make(t, d)
			got, complete, err := du(d)
			if err != nil || !complete || got < tc.min || got > tc.max {
				t.Errorf("du = %d, complete %v, %v; want %d..%d", got, complete, err, tc.min, tc.max)
			}
		})
	}
	if _, _, err := du(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("du of a missing sandbox: no error")
	}
}

func TestExecutorLimitsDisk(t *testing.T) {
	ex := &executor{info: mesos.ExecutorInfo{Resources: []mesos.Resource{scalarRes("disk", 5)}},
		tasks: map[string]*agentTask{"a": {info: mesos.TaskInfo{Resources: []mesos.Resource{scalarRes("disk", 10)}}}}}
	if got := executorLimits(ex).diskBytes; got != 15<<20 {
		t.Errorf("disk limit = %d, want %d (executor's and task's disk, no overhead)", got, 15<<20)
	}
}

// checkDisks kills an executor over its disk, or with warn-only counts it
// once and leaves it be; an executor within its disk is untouched.
func TestCheckDisks(t *testing.T) {
	for _, warnOnly := range []bool{false, true} {
		dir := t.TempDir()
		over := &executor{id: "over", sandbox: filepath.Join(dir, "over"), limits: limits{diskBytes: 1 << 20}, tasks: map[string]*agentTask{}}
		within := &executor{id: "within", sandbox: filepath.Join(dir, "within"), limits: limits{diskBytes: 8 << 20}, tasks: map[string]*agentTask{}}
		writeBytes(t, filepath.Join(over.sandbox, "big"), 3<<20)
		writeBytes(t, filepath.Join(within.sandbox, "small"), 1<<20)
		// checkDisks skips executors without a process; a pid beyond
		// pid_max (1<<22) gives them one that no kill can reach.
		over.pid, within.pid = 1<<30, 1<<30
		a := &Agent{iso: &posixIsolator{}, log: zerolog.Nop(), cfg: Config{DiskQuotaWarnOnly: warnOnly},
			executors: map[string]*executor{"f/over": over, "f/within": within}}
		a.checkDisks()
		a.checkDisks()
		if within.limitation != nil || within.diskUsed < 1<<20 {
			t.Errorf("warnOnly=%v: within its disk: limitation %v, used %d", warnOnly, within.limitation, within.diskUsed)
		}
		if warnOnly {
			if over.limitation != nil || a.diskQuotaExceeded != 1 || !over.diskWarned {
				t.Errorf("warn-only: limitation %v, exceeded count %d (want nil, 1)", over.limitation, a.diskQuotaExceeded)
			}
			continue
		}
		lim := over.limitation
		if lim == nil || lim.reason != mesos.REASON_CONTAINER_LIMITATION_DISK ||
			!strings.Contains(lim.message, "quota (1 MB)") || !strings.Contains(lim.message, "usage (3 MB)") {
			t.Errorf("enforced: limitation %+v, want REASON_CONTAINER_LIMITATION_DISK with usage 3 MB and quota 1 MB", lim)
		}
	}
}
