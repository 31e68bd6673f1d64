package allocator

import (
	"testing"

	"github.com/allot-sched/allot/sorter"
)

// Filters lists a framework's live decline filters and forgets them once
// they expire.
func TestFiltersListsLiveDeclines(t *testing.T) {
	drf, _ := sorter.Lookup("drf")
	fx := newFixture(t, Config{Sorter: drf, AgentSelection: sorter.BestFit, Mode: Oblivious})
	fx.agent("s1", "cpus:4;mem:4096").agent("s2", "cpus:4;mem:4096").framework("a", "*")
	out := fx.cycle()
	fx.decline(out[:1], 30)
	fls, err := fx.a.Filters("a")
	if err != nil || len(fls) != 1 || fls[0].Agent != out[0].Agent || !fls[0].Until.Equal(fx.clk.Now().Add(30e9)) {
		t.Fatalf("Filters = %+v, %v; want one on %s for 30 s", fls, err, out[0].Agent)
	}
	fx.clk.Advance(31e9)
	if fls, _ := fx.a.Filters("a"); len(fls) != 0 {
		t.Errorf("an expired filter is still listed: %+v", fls)
	}
	if _, err := fx.a.Filters("nope"); err == nil {
		t.Error("Filters of an unknown framework: no error")
	}
}
