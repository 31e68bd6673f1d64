package resources

import (
	"fmt"
	"path"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// The persistent volume operations: CREATE makes reserved disk into
// volumes, DESTROY gives the disk back, GROW_VOLUME and SHRINK_VOLUME change
// a volume's size in place.

func create(total mesos.Resources, volumes []mesos.Resource) (Conversion, error) {
	if len(volumes) == 0 {
		return Conversion{}, fmt.Errorf("CREATE: no volumes to create")
	}
	ids := map[string]bool{}
	for _, v := range Volumes(total) {
		ids[volumeKey(v)] = true
	}
	var c Conversion
	for i := range volumes {
		v := cloneResource(volumes[i])
		if err := checkVolume("CREATE", v); err != nil {
			return Conversion{}, err
		}
		if ReservationRole(&v) == Unreserved {
			return Conversion{}, fmt.Errorf("CREATE: persistent volume %q is on unreserved disk; RESERVE the disk first", v.Disk.Persistence.ID)
		}
		if v.Disk.Volume.Mode == nil {
			rw := mesos.RW
			v.Disk.Volume.Mode = &rw
		}
		if ids[volumeKey(v)] {
			return Conversion{}, fmt.Errorf("CREATE: persistence id %q is already in use for role %q on this agent", v.Disk.Persistence.ID, ReservationRole(&v))
		}
		ids[volumeKey(v)] = true
		c.Consumed.Add1(withoutVolume(v))
		c.Converted.Add1(v)
	}
	return c, nil
}

func destroy(volumes []mesos.Resource) (Conversion, error) {
	if len(volumes) == 0 {
		return Conversion{}, fmt.Errorf("DESTROY: no volumes to destroy")
	}
	var c Conversion
	for i := range volumes {
		v := cloneResource(volumes[i])
		if err := checkResource(v); err != nil {
			return Conversion{}, fmt.Errorf("DESTROY: %v", err)
		}
		if !v.IsPersistentVolume() {
			return Conversion{}, fmt.Errorf("DESTROY: %s is not a persistent volume", mesos.Resources{v})
		}
		c.Consumed.Add1(v)
		c.Converted.Add1(withoutVolume(v))
	}
	return c, nil
}

func grow(g *mesos.Offer_Operation_GrowVolume) (Conversion, error) {
	v, add := cloneResource(g.Volume), cloneResource(g.Addition)
	if !v.IsPersistentVolume() {
		return Conversion{}, fmt.Errorf("GROW_VOLUME: volume %s is not a persistent volume", mesos.Resources{v})
	}
	if err := checkResource(add); err != nil || add.Name != "disk" || add.GetScalar().GetValue() <= 0 {
		return Conversion{}, fmt.Errorf("GROW_VOLUME: addition %s must be a positive disk scalar", mesos.Resources{add})
	}
	if add.IsPersistentVolume() || !sameReservations(v, add) {
		return Conversion{}, fmt.Errorf("GROW_VOLUME: addition %s must be disk reserved as the volume is, without persistence", mesos.Resources{add})
	}
	grown := cloneResource(v)
	grown.Scalar.Value += add.Scalar.Value
	return Conversion{Consumed: mesos.Resources{v, add}, Converted: mesos.Resources{grown}}, nil
}

func shrink(s *mesos.Offer_Operation_ShrinkVolume) (Conversion, error) {
	v := cloneResource(s.Volume)
	if !v.IsPersistentVolume() {
		return Conversion{}, fmt.Errorf("SHRINK_VOLUME: volume %s is not a persistent volume", mesos.Resources{v})
	}
	by := s.Subtract.Value
	if by <= 0 || by >= v.GetScalar().GetValue() {
		return Conversion{}, fmt.Errorf("SHRINK_VOLUME: subtract %v must be above 0 and below the volume's size %v", by, v.GetScalar().GetValue())
	}
	small, freed := cloneResource(v), withoutVolume(v)
	small.Scalar.Value -= by
	freed.Scalar.Value = by
	return Conversion{Consumed: mesos.Resources{v}, Converted: mesos.Resources{small, freed}}, nil
}

// checkVolume checks what CREATE needs of a volume: disk, a persistence id
// that is a safe directory name, and a relative container path.
func checkVolume(op string, v mesos.Resource) error {
	if err := checkResource(v); err != nil {
		return fmt.Errorf("%s: %v", op, err)
	}
	if v.Name != "disk" || v.Disk == nil || v.Disk.Persistence == nil {
		return fmt.Errorf("%s: %s is not a persistent volume (disk with disk.persistence.id)", op, mesos.Resources{v})
	}
	id := v.Disk.Persistence.ID
	if err := checkVolumeID(id); err != nil {
		return fmt.Errorf("%s: %v", op, err)
	}
	if v.Disk.Volume == nil || v.Disk.Volume.ContainerPath == "" {
		return fmt.Errorf("%s: persistent volume %q has no disk.volume.container_path", op, id)
	}
	if p := v.Disk.Volume.ContainerPath; path.IsAbs(p) || strings.HasPrefix(path.Clean(p), "..") {
		return fmt.Errorf("%s: persistent volume %q: container_path %q must be relative and inside the sandbox", op, id, p)
	}
	if v.Disk.Volume.Mode != nil && *v.Disk.Volume.Mode != mesos.RW {
		return fmt.Errorf("%s: persistent volume %q must be in mode RW", op, id)
	}
	return nil
}

// checkVolumeID keeps a persistence id usable as one directory name.
func checkVolumeID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("persistent volume has an empty disk.persistence.id")
	case id == "." || id == ".." || strings.ContainsAny(id, "/\\\x00") || strings.TrimSpace(id) != id:
		return fmt.Errorf("persistence id %q is not allowed (no '/', '\\\\', NUL, '.', '..' or surrounding spaces)", id)
	}
	return nil
}

// VolumeKey names a volume on its agent: its role and persistence id,
// which Mesos requires unique together.
func volumeKey(v mesos.Resource) string {
	return ReservationRole(&v) + "\x00" + v.GetDisk().GetPersistence().GetID()
}

func sameReservations(a, b mesos.Resource) bool {
	if len(a.Reservations) != len(b.Reservations) {
		return false
	}
	for i := range a.Reservations {
		if !a.Reservations[i].Equivalent(&b.Reservations[i]) {
			return false
		}
	}
	return true
}
