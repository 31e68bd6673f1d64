package profile

import (
	"testing"

	"github.com/allot-sched/allot/framework/eventlog"
)

// A stage's disk demand is its device I/O by default and its file I/O
// with DiskFromFile; the network is the same either way.
func TestFromEventsDiskSource(t *testing.T) {
	evs := []eventlog.Event{
		&eventlog.ApplicationStart{App: "wc", InputBytes: 1 << 20},
		&eventlog.ExecutorStage{StageKey: "map", StartOffsetS: 1, EndOffsetS: 3, DiskBWPeak: 1 * mib, FileBWPeak: 9 * mib, NetBWPeak: 2 * mib},
		&eventlog.ExecutorStage{StageKey: "map", StartOffsetS: 1, EndOffsetS: 5, DiskBWPeak: 0, FileBWPeak: 12 * mib, NetBWPeak: 3 * mib},
		&eventlog.ApplicationEnd{Success: true},
	}
	for _, c := range []struct {
		opt       LoadOptions
		disk, net float64
	}{
		{LoadOptions{}, 1, 3},
		{LoadOptions{DiskFromFile: true}, 12, 3},
	} {
		r, ok := FromEventsWith(evs, c.opt)
		if !ok || len(r.Stages) != 1 {
			t.Fatalf("%+v: run %+v, %v", c.opt, r, ok)
		}
		if s := r.Stages[0]; s.DiskBW != c.disk || s.NetBW != c.net || s.Start != 1 || s.End != 4 {
			t.Errorf("%+v: stage %+v, want disk %v net %v over [1, 4)", c.opt, s, c.disk, c.net)
		}
	}
}
