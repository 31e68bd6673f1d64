package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/allot-sched/allot/api"
)

// The disk-busy fault makes the busy fraction 1 while its file exists and
// leaves the real counter alone otherwise, never letting it fall.
func TestDiskBusyFault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy")
	var f diskBusyFault
	var prev *api.Usage
	for i, c := range []struct {
		exists   bool
		realBusy float64 // real cumulative busy seconds of the one disk
		want     float64 // busy fraction of the interval ending here
	}{
		{false, 0, -1}, // the baseline
		{false, 0.5, 0.5},
		{true, 0.6, 1},    // 0.1 real + 1 added: clamped to 1
		{true, 0.6, 1},    // nothing real, all added
		{false, 1.0, 0.4}, // the file is gone: the real 0.4 again
	} {
		if c.exists {
			os.WriteFile(path, nil, 0o644)
		} else {
			os.Remove(path)
		}
		u := &api.Usage{TimestampUnixNano: int64(i+1) * 1e9, DiskDevices: 1, DiskBusySeconds: c.realBusy}
		f.apply(path, u)
		if prev != nil {
			r, err := api.RatesBetween(prev, u)
			if err != nil {
				t.Fatalf("report %d: %v", i, err)
			}
			if d := r.DiskBusy - c.want; d > 1e-9 || d < -1e-9 {
				t.Errorf("report %d: disk busy %v, want %v", i, r.DiskBusy, c.want)
			}
		}
		prev = u
	}
	var off diskBusyFault
	u := &api.Usage{TimestampUnixNano: 5e9, DiskBusySeconds: 3}
	off.apply("", u)
	if u.DiskBusySeconds != 3 {
		t.Errorf("no fault file configured changed the counter to %v", u.DiskBusySeconds)
	}
}
