package allocator

import (
	"fmt"

	"github.com/allot-sched/allot/resources"
)

// roleInvariants checks the role books in role mode: each framework's
// parts on an agent sum to its holding there; each pool's free part plus
// what is held of it is within its total, and the pools' free parts fit
// in what the agent has free; every role's allocation, unreserved
// allocation and reservations equal the sums over its subtree.
func roleInvariants(a *Allocator) error {
	if !a.rm {
		for _, ag := range a.agents {
			if ag != nil && len(ag.parts) > 0 {
				return fmt.Errorf("agent %q: parts outside role mode", ag.id)
			}
		}
		return nil
	}
	alloc := map[string]resources.Resources{}
	unres := map[string]resources.Resources{}
	reserved := map[string]resources.Resources{}
	addUp := func(m map[string]resources.Resources, role string, r resources.Resources) {
		r = resources.Resources{Scalars: r.Scalars, Extra: r.Extra}
		m[role] = m[role].Add(r)
		for _, p := range resources.RoleAncestors(role) {
			m[p] = m[p].Add(r)
		}
	}
	for _, ag := range a.agents {
		if ag == nil {
			continue
		}
		byFw := map[int32]resources.Resources{}
		for _, p := range ag.parts {
			byFw[p.fw] = byFw[p.fw].Add(p.res)
			addUp(alloc, p.role, p.res)
			if p.pool == "" {
				addUp(unres, p.role, p.res)
			}
		}
		for _, h := range ag.holds {
			if !byFw[h.fw].Equal(h.res()) {
				return fmt.Errorf("agent %q: framework %q holds %s, its parts sum to %s", ag.id, a.fws[h.fw].id, h.res(), byFw[h.fw])
			}
			delete(byFw, h.fw)
		}
		if len(byFw) > 0 {
			return fmt.Errorf("agent %q: parts of frameworks without a holding: %v", ag.id, byFw)
		}
		var free resources.Resources
		for _, name := range ag.poolNames {
			pl := ag.pools[name]
			addUp(reserved, name, pl.total)
			if used := a.heldFromPoolAll(ag, name).Add(pl.free); !pl.total.Contains(used) {
				return fmt.Errorf("agent %q: pool %q: free %s plus held is %s, above its total %s", ag.id, name, pl.free, used, pl.total)
			}
			free = free.Add(pl.free)
		}
		if !ag.avail.Reservable().Contains(free) {
			return fmt.Errorf("agent %q: pools' free parts %s exceed what is free %s", ag.id, free, ag.avail.Reservable())
		}
	}
	for name, n := range a.roleTree {
		for _, c := range []struct {
			what      string
			got, want resources.Resources
		}{{"allocation", n.alloc, alloc[name]}, {"unreserved allocation", n.unres, unres[name]}, {"reservations", n.reserved, reserved[name]}} {
			if !c.got.Equal(c.want) {
				return fmt.Errorf("role %q: %s %s, parts sum to %s", name, c.what, c.got, c.want)
			}
		}
	}
	return nil
}
