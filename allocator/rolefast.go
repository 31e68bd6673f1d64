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

// zeroVec reports whether every kind of v is zero (the kinds are six:
// the declarations below fail to compile otherwise).
var (
	_ [resources.NumKinds - 6]struct{}
	_ [6 - resources.NumKinds]struct{}
)

func zeroVec(v *resources.Vector) bool {
	return v[0]|v[1]|v[2]|v[3]|v[4]|v[5] == 0
}

// allocatableAt reports what allocatable reports of *r, or of
// r.Reservable() where reservable is set. Where no kind of r is negative
// (quantities never are, but the check is exact without assuming it), a
// floor is met when the kinds it names are: those are noted once per
// cycle (noteFloors), so that a floor of cpus alone is one comparison.
func (a *Allocator) allocatableAt(r *resources.Resources, reservable bool) bool {
	if a.minAllocVec == nil {
		if reservable {
			return a.allocatable(r.Reservable())
		}
		return a.allocatable(*r)
	}
	v := &r.Scalars
	neg := v[resources.CPUs] | v[resources.Mem] | v[resources.Disk] | v[resources.GPUs]
	if !reservable {
		neg |= v[resources.DiskBW] | v[resources.NetBW]
	}
	if neg < 0 {
		w := *v
		if reservable {
			w[resources.DiskBW], w[resources.NetBW] = 0, 0
		}
		return a.allocatable(resources.Resources{Scalars: w})
	}
	for i := range a.rc.floors {
		if a.rc.floors[i].metBy(v, reservable) {
			return true
		}
	}
	return false
}

// floor is one min-allocatable vector and the kinds it names.
type floor struct {
	min   resources.Vector
	kinds []resources.Kind
}

// metBy reports min.Contains(*v) for a v with no negative kind, its
// advisory kinds read as zero where reservable is set.
func (fl *floor) metBy(v *resources.Vector, reservable bool) bool {
	for _, k := range fl.kinds {
		q := v[k]
		if reservable && k.Advisory() {
			q = 0
		}
		if fl.min[k] > q {
			return false
		}
	}
	return true
}

// noteFloors notes the min-allocatable floors for allocatableAt.
func (a *Allocator) noteFloors() {
	if len(a.rc.floors) == len(a.minAllocVec) {
		return // the floors are set in New and never change
	}
	a.rc.floors = a.rc.floors[:0]
	for _, m := range a.minAllocVec {
		fl := floor{min: m}
		for k := resources.Kind(0); k < resources.NumKinds; k++ {
			if m[k] != 0 {
				fl.kinds = append(fl.kinds, k)
			}
		}
		a.rc.floors = append(a.rc.floors, fl)
	}
}

// addVec adds o to v in place, as v.Add(o) would.
func addVec(v, o *resources.Vector) {
	for k := range v {
		v[k] += o[k]
	}
}

// subVec takes o from v in place, clamped at zero, as v.Sub(o) would.
func subVec(v, o *resources.Vector) {
	for k := range v {
		v[k] -= o[k]
		if v[k] < 0 {
			v[k] = 0
		}
	}
}

// dominantShare is v.DominantShare(*total), the same arithmetic in the
// same order, without copying the vectors.
func dominantShare(v, total *resources.Vector) float64 {
	s := 0.0
	for k := resources.Kind(0); k < resources.NumKinds; k++ {
		if k.Advisory() || total[k] == 0 {
			continue
		}
		if f := float64(v[k]) / float64(total[k]); f > s {
			s = f
		}
	}
	return s
}
