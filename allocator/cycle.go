package allocator

import (
	"time"

	"github.com/allot-sched/allot/allocator/policy"
)

// Allocate runs one allocation cycle at the clock's current time and
// returns its decisions: the offers it makes (at most one per framework
// and agent) and the inverse offers it asks for. The caller owns the
// returned slices.
//
// A cycle refreshes the policy models (model.go), drops expired filters,
// re-sorts the frameworks if the cluster's totals changed, and runs the
// fill path chosen in New (paths.go).
func (a *Allocator) Allocate() Decisions {
	now := a.clock.Now()
	if a.refreshModels(now) {
		a.keysDirty = true
	}
	a.pruneFilters(now)
	if a.keysDirty {
		a.rebuildKeys()
	}
	a.out = nil // sized on first use: most cycles in a busy cluster offer little
	if a.rm {
		a.roleFill() // rolefill.go: quota, reservations, nested and multiple roles
		a.cycles++   // its grants stamped the frameworks they offered to
	} else {
		a.path.fill()
		a.notePlaced() // placement.go
	}
	if len(a.models) > 0 {
		for i := range a.out {
			o := &a.out[i]
			a.tell(policy.Event{Kind: policy.Offered, Framework: o.Framework, Agent: o.Agent, Res: o.Resources, Tasks: o.Tasks})
		}
	}
	d := Decisions{Offers: a.out}
	if a.cfg.Reclaim {
		d.InverseOffers = a.reclaim()
	}
	return d
}

// pruneFilters drops expired filters; a sweep per cycle keeps every
// agent's list short and blocked() free of clock reads.
func (a *Allocator) pruneFilters(now time.Time) {
	for _, ag := range a.agents {
		if ag == nil || len(ag.filters) == 0 {
			continue
		}
		w := 0
		for _, fl := range ag.filters {
			if !now.Before(fl.until) {
				if f := a.fws[fl.fw]; f != nil {
					f.nfilters--
				}
				continue
			}
			ag.filters[w] = fl
			w++
		}
		clear(ag.filters[w:])
		ag.filters = ag.filters[:w]
	}
}
