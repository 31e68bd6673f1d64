package resources

import (
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mres "github.com/mesos/mesos-go/api/v1/lib/resources"
)

// An agent's exact resources, outside the allocator, are a mesos.Resources
// list: unreserved, statically reserved (--resources "cpus(ads):4"),
// dynamically reserved (RESERVE, with principal, labels and refinement
// stacks) and persistent volumes (CREATE, disk with disk.persistence). The
// speculative operations (RESERVE, UNRESERVE, CREATE, DESTROY, GROW_VOLUME,
// SHRINK_VOLUME) each consume some of that list and put back a converted
// form of it, as Mesos's master applies them.

// Conversion is what one operation takes from an agent's resources and what
// it puts back in their place.
type Conversion struct {
	Consumed  mesos.Resources
	Converted mesos.Resources
}

// Convert validates op against the agent's total (for volume ids already in
// use) and returns its conversion. Only the speculative operations are
// converted; any other type is an error. Errors say what is wrong as a
// client can fix it.
func Convert(total mesos.Resources, op *mesos.Offer_Operation) (Conversion, error) {
	switch op.GetType() {
	case mesos.Offer_Operation_RESERVE:
		if op.Reserve == nil {
			return Conversion{}, fmt.Errorf("RESERVE operation without reserve")
		}
		if len(op.Reserve.Source) > 0 {
			return Conversion{}, fmt.Errorf("RESERVE with reserve.source (a reservation update) is not supported: UNRESERVE, then RESERVE")
		}
		return reserve(op.Reserve.Resources)
	case mesos.Offer_Operation_UNRESERVE:
		if op.Unreserve == nil {
			return Conversion{}, fmt.Errorf("UNRESERVE operation without unreserve")
		}
		return unreserve(op.Unreserve.Resources)
	case mesos.Offer_Operation_CREATE:
		if op.Create == nil {
			return Conversion{}, fmt.Errorf("CREATE operation without create")
		}
		return create(total, op.Create.Volumes)
	case mesos.Offer_Operation_DESTROY:
		if op.Destroy == nil {
			return Conversion{}, fmt.Errorf("DESTROY operation without destroy")
		}
		return destroy(op.Destroy.Volumes)
	case mesos.Offer_Operation_GROW_VOLUME:
		if op.GrowVolume == nil {
			return Conversion{}, fmt.Errorf("GROW_VOLUME operation without grow_volume")
		}
		return grow(op.GrowVolume)
	case mesos.Offer_Operation_SHRINK_VOLUME:
		if op.ShrinkVolume == nil {
			return Conversion{}, fmt.Errorf("SHRINK_VOLUME operation without shrink_volume")
		}
		return shrink(op.ShrinkVolume)
	}
	return Conversion{}, fmt.Errorf("operation %s is not a reservation or volume operation", op.GetType())
}

// Apply returns total with c carried out, or an error naming what of
// c.Consumed total does not hold.
func (c Conversion) Apply(total mesos.Resources) (mesos.Resources, error) {
	if err := Holds(total, c.Consumed); err != nil {
		return nil, err
	}
	return total.Minus(c.Consumed...).Plus(c.Converted...), nil
}

// Holds returns nil if have holds every resource of want, else an error
// naming the first it does not hold.
func Holds(have, want mesos.Resources) error {
	left := have.Clone()
	for _, r := range want {
		if !mres.Contains(left, r) {
			return fmt.Errorf("%s is not available (the agent has %s)", mesos.Resources{r}, have)
		}
		left.Subtract1(r)
	}
	return nil
}

func reserve(list []mesos.Resource) (Conversion, error) {
	if len(list) == 0 {
		return Conversion{}, fmt.Errorf("RESERVE: no resources to reserve")
	}
	var c Conversion
	for i := range list {
		r := cloneResource(list[i])
		if err := checkResource(r); err != nil {
			return Conversion{}, fmt.Errorf("RESERVE: %v", err)
		}
		n := len(r.Reservations)
		if n == 0 {
			return Conversion{}, fmt.Errorf("RESERVE: resource %s has no reservations; the last must be the DYNAMIC reservation to make", mesos.Resources{r})
		}
		last := &r.Reservations[n-1]
		if last.Type == nil {
			t := mesos.Resource_ReservationInfo_DYNAMIC
			last.Type = &t
		}
		if last.GetType() != mesos.Resource_ReservationInfo_DYNAMIC {
			return Conversion{}, fmt.Errorf("RESERVE: the last reservation of %s must be DYNAMIC", mesos.Resources{r})
		}
		if err := ValidateRole(last.GetRole()); err != nil {
			return Conversion{}, fmt.Errorf("RESERVE: %v", err)
		}
		if last.GetRole() == Unreserved {
			return Conversion{}, fmt.Errorf("RESERVE: resources cannot be reserved for role %q", Unreserved)
		}
		if n > 1 && (last.GetRole() == r.Reservations[n-2].GetRole() || !IsRoleOrDescendant(last.GetRole(), r.Reservations[n-2].GetRole())) {
			return Conversion{}, fmt.Errorf("RESERVE: a refined reservation for %q must be for a descendant of %q", last.GetRole(), r.Reservations[n-2].GetRole())
		}
		if r.IsPersistentVolume() {
			return Conversion{}, fmt.Errorf("RESERVE: %s is a persistent volume; reserve the disk, then CREATE the volume", mesos.Resources{r})
		}
		c.Consumed.Add1(popReservation(r))
		c.Converted.Add1(r)
	}
	return c, nil
}

func unreserve(list []mesos.Resource) (Conversion, error) {
	if len(list) == 0 {
		return Conversion{}, fmt.Errorf("UNRESERVE: no resources to unreserve")
	}
	var c Conversion
	for i := range list {
		r := cloneResource(list[i])
		if err := checkResource(r); err != nil {
			return Conversion{}, fmt.Errorf("UNRESERVE: %v", err)
		}
		if !r.IsDynamicallyReserved() {
			return Conversion{}, fmt.Errorf("UNRESERVE: %s is not dynamically reserved", mesos.Resources{r})
		}
		if r.IsPersistentVolume() {
			return Conversion{}, fmt.Errorf("UNRESERVE: %s is a persistent volume; DESTROY it first", mesos.Resources{r})
		}
		c.Consumed.Add1(r)
		c.Converted.Add1(popReservation(r))
	}
	return c, nil
}

// checkResource applies mesos-go's validation of one resource.
func checkResource(r mesos.Resource) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("invalid resource %s: %v", mesos.Resources{r}, err)
	}
	return nil
}

// cloneResource copies r deep enough that the operations here may change
// the copy's value, reservation stack and disk info without touching r.
func cloneResource(r mesos.Resource) mesos.Resource {
	if r.Scalar != nil {
		sc := *r.Scalar
		r.Scalar = &sc
	}
	if r.Ranges != nil {
		rg := mesos.Value_Ranges{Range: append([]mesos.Value_Range(nil), r.Ranges.Range...)}
		r.Ranges = &rg
	}
	r.Reservations = append([]mesos.Resource_ReservationInfo(nil), r.Reservations...)
	if len(r.Reservations) == 0 {
		r.Reservations = nil
	}
	if r.Disk != nil {
		d := *r.Disk
		if d.Persistence != nil {
			p := *d.Persistence
			d.Persistence = &p
		}
		if d.Volume != nil {
			v := *d.Volume
			d.Volume = &v
		}
		r.Disk = &d
	}
	return r
}

// popReservation returns r without its last reservation.
func popReservation(r mesos.Resource) mesos.Resource {
	r = cloneResource(r)
	r.Reservations = r.Reservations[:len(r.Reservations)-1]
	if len(r.Reservations) == 0 {
		r.Reservations = nil
	}
	return r
}

// withoutVolume returns r with its persistence and volume dropped: the
// reserved disk a volume was made of.
func withoutVolume(r mesos.Resource) mesos.Resource {
	r = cloneResource(r)
	if r.Disk != nil {
		r.Disk.Persistence, r.Disk.Volume = nil, nil
		if r.Disk.Source == nil {
			r.Disk = nil
		}
	}
	return r
}

// stripped returns r as the agent's static resources hold it: without
// persistence and without the dynamic reservations on top of its stack.
func stripped(r mesos.Resource) mesos.Resource {
	r = withoutVolume(r)
	for n := len(r.Reservations); n > 0 && r.Reservations[n-1].GetType() == mesos.Resource_ReservationInfo_DYNAMIC; n-- {
		r = popReservation(r)
	}
	return r
}

// Checkpointed returns what of total the agent must checkpoint, as Mesos's
// checkpointed resources: dynamically reserved resources and persistent
// volumes. Static resources come back from --resources.
func Checkpointed(total mesos.Resources) mesos.Resources {
	var out mesos.Resources
	for i := range total {
		if total[i].IsDynamicallyReserved() || total[i].IsPersistentVolume() {
			out = append(out, cloneResource(total[i]))
		}
	}
	return out
}

// ApplyCheckpointed returns the agent's static resources with its
// checkpointed ones in place of what they were made of; an error names a
// checkpointed resource the static ones cannot hold (--resources shrank).
func ApplyCheckpointed(static, checkpointed mesos.Resources) (mesos.Resources, error) {
	total := static.Clone()
	for i := range checkpointed {
		c := Conversion{Consumed: mesos.Resources{stripped(checkpointed[i])}, Converted: mesos.Resources{checkpointed[i]}}
		var err error
		if total, err = c.Apply(total); err != nil {
			return nil, fmt.Errorf("checkpointed resource %s: %v", mesos.Resources{checkpointed[i]}, err)
		}
	}
	return total, nil
}

// Volumes returns the persistent volumes of total.
func Volumes(total mesos.Resources) mesos.Resources {
	var out mesos.Resources
	for i := range total {
		if total[i].IsPersistentVolume() {
			out = append(out, cloneResource(total[i]))
		}
	}
	return out
}

// Quantities converts exact resources into the allocator's quantities,
// keyed by the innermost reservation role (Unreserved for "*").
func Quantities(total mesos.Resources) (map[string]Resources, error) {
	return FromMesos(total)
}

// Take returns what of pool makes up want: whole persistent volumes while
// want's disk allows (a volume is never split), then other scalars up to
// want, then ports inside want's ranges. An allocator that offers a
// reservation pool whole gets the whole pool back.
func Take(pool mesos.Resources, want Resources) mesos.Resources {
	var out mesos.Resources
	for _, volumes := range []bool{true, false} {
		for i := range pool {
			if pool[i].IsPersistentVolume() != volumes {
				continue
			}
			var got *mesos.Resource
			if got, want = takeOne(pool[i], want, volumes); got != nil {
				out = append(out, *got)
			}
		}
	}
	return out
}

// takeOne returns what of r want still needs (nil: nothing), and what want
// needs after it.
func takeOne(r mesos.Resource, want Resources, whole bool) (*mesos.Resource, Resources) {
	switch r.GetType() {
	case mesos.SCALAR:
		have, err := QuantityFromFloat(r.GetScalar().GetValue())
		need := want.Scalar(r.Name)
		if err != nil || need <= 0 || have <= 0 || (whole && need < have) {
			return nil, want
		}
		if have > need {
			have = need
		}
		out := cloneResource(r)
		out.Scalar.Value = have.Units()
		return &out, want.WithScalar(r.Name, need-have)
	case mesos.RANGES:
		if r.Name != PortsName {
			return nil, want
		}
		var rs []Range
		for _, x := range r.GetRanges().GetRange() {
			rs = append(rs, Range{x.Begin, x.End})
		}
		have, err := NormalizeRanges(rs)
		if err != nil {
			return nil, want
		}
		both := have.Sub(have.Sub(want.Ports))
		if len(both) == 0 {
			return nil, want
		}
		out := cloneResource(r)
		out.Ranges = &mesos.Value_Ranges{}
		for _, x := range both {
			out.Ranges.Range = append(out.Ranges.Range, mesos.Value_Range{Begin: x.Begin, End: x.End})
		}
		want.Ports = want.Ports.Sub(both)
		return &out, want
	}
	return nil, want
}
