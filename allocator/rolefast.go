package allocator

import "github.com/allot-sched/allot/resources"

// What the role-aware cycle asks of resources on every visit and grant,
// asked of them where they lie (by pointer) rather than of a copy: a
// Resources value is twelve words, and the general forms copy it into
// each call and compare its vector through a call to the runtime.

// emptyAt reports what r.IsEmpty reports.
func emptyAt(r *resources.Resources) bool {
	return len(r.Extra) == 0 && len(r.Ports) == 0 && zeroVec(&r.Scalars)
}

// zeroVec reports whether every kind of v is zero.
func zeroVec(v *resources.Vector) bool {
	for _, q := range v {
		if q != 0 {
			return false
		}
	}
	return true
}

// allocatableAt reports what allocatable reports of *r, or of
// r.Reservable() where reservable is set.
func (a *Allocator) allocatableAt(r *resources.Resources, reservable bool) bool {
	if a.minAllocVec == nil {
		if reservable {
			return a.allocatable(r.Reservable())
		}
		return a.allocatable(*r)
	}
	v := r.Scalars
	if reservable {
		v[resources.DiskBW], v[resources.NetBW] = 0, 0
	}
	for i := range a.minAllocVec {
		if containsVec(&v, &a.minAllocVec[i]) {
			return true
		}
	}
	return false
}

// containsVec reports v.Contains(*o).
func containsVec(v, o *resources.Vector) bool {
	for k := range v {
		if o[k] > v[k] {
			return false
		}
	}
	return true
}
