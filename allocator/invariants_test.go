package allocator

import (
	"fmt"
	"slices"
	"testing"

	"github.com/allot-sched/allot/resources"
)

// checkInvariants verifies the allocator's internal bookkeeping: every set
// sorted by its stored keys with no duplicates and exactly the frameworks
// that belong in it; every agent's available plus holdings equal to its
// total (so nothing is ever allocated beyond capacity); every framework's
// allocation equal to the sum of its holdings; filter counts consistent.
func checkInvariants(t testing.TB, a *Allocator) {
	t.Helper()
	if err := invariants(a); err != nil {
		t.Fatal(err)
	}
}

func invariants(a *Allocator) error {
	if err := setInvariants(a); err != nil {
		return err
	}
	if err := holdingInvariants(a); err != nil {
		return err
	}
	return roleInvariants(a)
}

// setInvariants checks the framework sets: membership and order.
func setInvariants(a *Allocator) error {
	checkSet := func(name string, s *orderedSet, member func(*framework) bool) error {
		seen := map[int32]bool{}
		for i, n := range s.items {
			if seen[n] {
				return fmt.Errorf("%s: framework %d twice", name, n)
			}
			seen[n] = true
			if a.fws[n] == nil || !member(a.fws[n]) {
				return fmt.Errorf("%s: framework %d should not be in it", name, n)
			}
			if i > 0 && !a.keysDirty {
				p := s.items[i-1]
				if !s.less(s.keyOf(p), p, s.keyOf(n), n) {
					return fmt.Errorf("%s: not sorted at %d: (%v,%d) before (%v,%d)", name, i, s.keyOf(p), p, s.keyOf(n), n)
				}
			}
		}
		for _, f := range a.fws {
			if f != nil && member(f) && !seen[f.idx] {
				return fmt.Errorf("%s: framework %q missing", name, f.id)
			}
		}
		return nil
	}
	if err := checkSet("global", &a.global, func(f *framework) bool { return f.inGlobal }); err != nil {
		return err
	}
	for _, f := range a.fws {
		if f != nil && f.inGlobal != a.wantsGlobal(f) {
			return fmt.Errorf("framework %q: inGlobal=%v but belongs=%v", f.id, f.inGlobal, a.wantsGlobal(f))
		}
		if f != nil && (f.shape >= 0) != a.wantsShape(f) {
			return fmt.Errorf("framework %q: shape=%d but belongs=%v", f.id, f.shape, a.wantsShape(f))
		}
	}
	for si, s := range a.shapes {
		si := int32(si)
		if err := checkSet(fmt.Sprintf("shape %d", si), &s.set, func(f *framework) bool { return f.shape == si }); err != nil {
			return err
		}
	}
	if a.classes != nil && !a.keysDirty {
		for c, co := range a.classes {
			name := fmt.Sprintf("class %v", c)
			if err := checkSet(name, &co.set, func(f *framework) bool { return f.inGlobal }); err != nil {
				return err
			}
			for _, n := range co.set.items {
				if want := a.classScore(co, a.fws[n]); co.keys[n] != want {
					return fmt.Errorf("%s: framework %d keyed %v, scores %v", name, n, co.keys[n], want)
				}
			}
		}
	}
	return nil
}

// holdingInvariants checks the agents' holdings against the frameworks'
// allocations, task counts and filters.
func holdingInvariants(a *Allocator) error {
	allocs := map[int32]resources.Resources{}
	tasks := map[int32]int64{}
	filters := map[int32]int{}
	for _, ag := range a.agents {
		if ag == nil {
			continue
		}
		sum := ag.avail.Reservable()
		for i := range ag.holds {
			h := &ag.holds[i]
			hr := h.res()
			if h.pend != 0 {
				return fmt.Errorf("agent %q: framework %d has %d pending tasks outside a cycle", ag.id, h.fw, h.pend)
			}
			sum = sum.Add(hr)
			allocs[h.fw] = allocs[h.fw].Add(resources.Resources{Scalars: hr.Scalars, Extra: hr.Extra})
			tasks[h.fw] += h.tasks
		}
		if !sum.Equal(ag.total.Reservable()) {
			return fmt.Errorf("agent %q: available %s + held = %s, total %s", ag.id, ag.avail, sum, ag.total)
		}
		for _, fl := range ag.filters {
			filters[fl.fw]++
			if f := a.fws[fl.fw]; f != nil && !slices.Contains(f.filterAgents, ag.idx) {
				return fmt.Errorf("framework %q: filter on agent %q, which its filterAgents (Revive's walk) does not list", f.id, ag.id)
			}
		}
	}
	for _, f := range a.fws {
		if f == nil {
			continue
		}
		if !f.alloc.Equal(allocs[f.idx]) {
			return fmt.Errorf("framework %q: allocation %s, holdings sum to %s", f.id, f.alloc, allocs[f.idx])
		}
		if f.view.Tasks != tasks[f.idx] {
			return fmt.Errorf("framework %q: %d tasks, holdings count %d", f.id, f.view.Tasks, tasks[f.idx])
		}
		if f.nfilters != filters[f.idx] {
			return fmt.Errorf("framework %q: nfilters %d, agents hold %d", f.id, f.nfilters, filters[f.idx])
		}
	}
	return nil
}
