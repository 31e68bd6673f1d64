package allocator

import (
	"fmt"
	"testing"
	"time"
)

// Revive walks only the agents where the framework put filters
// (filterAgents), so the list must name every such agent through repeats,
// expiries and the list's own compaction: after a revive the framework has
// no filter left anywhere, and another framework keeps all of its own.
func TestReviveDropsFiltersOnlyWhereListed(t *testing.T) {
	const agents = 40
	for _, tc := range []struct {
		name    string
		rounds  int           // cycles whose offers are all declined, before the revive
		advance time.Duration // clock moved between rounds: past 60 s, earlier filters expire
	}{
		{"one round", 1, 0},
		{"expiring rounds, past compaction", 8, 61 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, Config{Seed: 3})
			for i := range agents {
				fx.agent(fmt.Sprintf("a%02d", i), "cpus:4;mem:1024")
			}
			fx.framework("f1", "").framework("f2", "")
			for r := range tc.rounds {
				if r > 0 {
					fx.clk.Advance(tc.advance)
				}
				fx.decline(fx.cycle(), 60)
			}
			f1, f2 := fx.a.fws[fx.a.fwByID["f1"]], fx.a.fws[fx.a.fwByID["f2"]]
			if len(f1.filterAgents) > 2*f1.nfilters+16 {
				t.Errorf("f1's list has %d entries for %d filters: never compacted", len(f1.filterAgents), f1.nfilters)
			}
			f2Before := f2.nfilters
			if err := fx.a.Revive("f1"); err != nil {
				t.Fatal(err)
			}
			left, f2Count := 0, 0
			for _, ag := range fx.a.agents {
				for _, fl := range ag.filters {
					switch fl.fw {
					case f1.idx:
						left++
					case f2.idx:
						f2Count++
					}
				}
			}
			if left != 0 || f1.nfilters != 0 || len(f1.filterAgents) != 0 {
				t.Errorf("after revive f1 has %d filters on agents (counted %d, listed %d), want none", left, f1.nfilters, len(f1.filterAgents))
			}
			if f2Count != f2Before || f2.nfilters != f2Before || f2Before == 0 {
				t.Errorf("f2 has %d filters on agents, counted %d, had %d: want them untouched", f2Count, f2.nfilters, f2Before)
			}
		})
	}
}
