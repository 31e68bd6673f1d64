package resources

import (
	"fmt"
	"math"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Unreserved is the Mesos role of unreserved resources.
const Unreserved = "*"

// ReservationRole returns the role a mesos.Resource is reserved for: the
// last entry of the reservations stack (the "current" reservation), else the
// deprecated role field, else Unreserved.
func ReservationRole(res *mesos.Resource) string {
	if n := len(res.Reservations); n > 0 {
		if r := res.Reservations[n-1].GetRole(); r != "" {
			return r
		}
	}
	if r := res.GetRole(); r != "" {
		return r
	}
	return Unreserved
}

// FromMesos converts a mesos-go resource list into resource sets keyed by
// reservation role (Unreserved for "*"). Allocation info is ignored: it says
// who holds a resource, not what it is. Set-typed resources and ranges other
// than ports are rejected with an error naming the resource.
func FromMesos(list []mesos.Resource) (map[string]Resources, error) {
	out := map[string]Resources{}
	for i := range list {
		res := &list[i]
		role := ReservationRole(res)
		cur := out[role]
		if res.Name == "" {
			return nil, fmt.Errorf("resource #%d has no name", i)
		}
		switch res.GetType() {
		case mesos.SCALAR:
			if res.Name == PortsName {
				// Resources.Ports is the only home for "ports"; a scalar of
				// that name would land in Extra, where String prints it as
				// "ports:N" (which Parse reads as the range [N-N]).
				return nil, fmt.Errorf("resource %q: must be of type RANGES, not SCALAR", res.Name)
			}
			v := res.GetScalar().GetValue()
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, fmt.Errorf("resource %q: scalar %v must be a finite non-negative number", res.Name, v)
			}
			q, err := QuantityFromFloat(v)
			if err == nil {
				q, err = addBounded(cur.Scalar(res.Name), q)
			}
			if err != nil {
				return nil, fmt.Errorf("resource %q: %v", res.Name, err)
			}
			cur = cur.WithScalar(res.Name, q)
		case mesos.RANGES:
			if res.Name != PortsName {
				return nil, fmt.Errorf("resource %q: only %q may be a range", res.Name, PortsName)
			}
			var rs []Range
			for _, r := range res.GetRanges().GetRange() {
				rs = append(rs, Range{r.Begin, r.End})
			}
			norm, err := NormalizeRanges(rs)
			if err != nil {
				return nil, fmt.Errorf("resource %q: %v", res.Name, err)
			}
			cur.Ports = cur.Ports.Add(norm)
		default:
			return nil, fmt.Errorf("resource %q: type %v is not supported", res.Name, res.GetType())
		}
		out[role] = cur
	}
	return out, nil
}

// ToMesos converts r into a mesos-go resource list reserved for role
// (Unreserved or "" for none). If allocationRole is not empty every resource
// carries AllocationInfo with it, as Mesos sends to MULTI_ROLE frameworks.
// Zero scalars are left out.
func ToMesos(r Resources, role, allocationRole string) []mesos.Resource {
	// One slice each for the resources, their values and their types:
	// the master converts every offer it makes, so allocations here are
	// paid per offer per cycle.
	n := len(r.Extra) + 1
	for _, q := range r.Scalars {
		if q != 0 {
			n++
		}
	}
	out := make([]mesos.Resource, 0, n)
	values := make([]mesos.Value_Scalar, 0, n)
	types := make([]mesos.Value_Type, 0, n)
	add := func(res mesos.Resource) {
		if role != "" && role != Unreserved {
			rl := role
			t := mesos.Resource_ReservationInfo_STATIC
			res.Reservations = []mesos.Resource_ReservationInfo{{Type: &t, Role: &rl}}
		}
		if allocationRole != "" {
			ar := allocationRole
			res.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &ar}
		}
		out = append(out, res)
	}
	scalar := func(name string, q Quantity) {
		if q == 0 {
			return
		}
		types = append(types, mesos.SCALAR)
		values = append(values, mesos.Value_Scalar{Value: q.Units()})
		add(mesos.Resource{Name: name, Type: &types[len(types)-1], Scalar: &values[len(values)-1]})
	}
	for k, q := range r.Scalars {
		scalar(KindNames[k], q)
	}
	for _, e := range r.Extra {
		scalar(e.Name, e.Value)
	}
	if len(r.Ports) > 0 {
		types = append(types, mesos.RANGES)
		vr := make([]mesos.Value_Range, len(r.Ports))
		for i, p := range r.Ports {
			vr[i] = mesos.Value_Range{Begin: p.Begin, End: p.End}
		}
		add(mesos.Resource{Name: PortsName, Type: &types[len(types)-1], Ranges: &mesos.Value_Ranges{Range: vr}})
	}
	return out
}
