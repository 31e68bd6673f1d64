package sorter

import (
	"testing"

	"github.com/allot-sched/allot/resources"
)

// TestFSPFinishKey: by remaining virtual size, x (1000 MB s left at 10
// MB/s) comes before y (2000 at 100); by projected virtual finish y (20 s)
// comes before x (100 s); a job that does not shrink comes last among
// known sizes; late jobs keep their negative keys either way.
func TestFSPFinishKey(t *testing.T) {
	c := &Cluster{Total: resources.MustParse("mem:8192").Scalars}
	key := func(p FSP, v Virtual) float64 { return p.Key(&Framework{Weight: 1, Virtual: v}, c) }
	x := Virtual{State: VirtualKnown, Remaining: 1000, Rate: 10}
	y := Virtual{State: VirtualKnown, Remaining: 2000, Rate: 100}
	stuck := Virtual{State: VirtualKnown, Remaining: 1, Rate: 0}
	late := Virtual{State: VirtualDone, Remaining: -5}
	cases := []struct {
		p             FSP
		first, second Virtual
	}{
		{FSP{}, x, y},
		{FSP{Finish: true}, y, x},
		{FSP{Finish: true}, x, stuck},
		{FSP{Finish: true}, late, y},
		{FSP{}, late, x},
	}
	for i, cs := range cases {
		if a, b := key(cs.p, cs.first), key(cs.p, cs.second); !(a < b) {
			t.Errorf("case %d (%+v): keys %v and %v, want the first smaller", i, cs.p, a, b)
		}
	}
	if got := (FSP{DRF: true, Finish: true}).Name(); got != "fspy-drf" {
		t.Errorf("name %q, want fspy-drf", got)
	}
}
