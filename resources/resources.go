package resources

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Kind indexes the well-known scalars kept in a fixed array.
type Kind int

// The well-known scalar kinds. Names follow Mesos; mem and disk are in MB,
// the bandwidths in MB/s.
const (
	CPUs Kind = iota
	Mem
	Disk
	GPUs
	DiskBW
	NetBW
	NumKinds
)

// KindNames are the Mesos resource names of the well-known kinds.
var KindNames = [NumKinds]string{"cpus", "mem", "disk", "gpus", "disk_bw", "net_bw"}

// PortsName is the name of the ranges resource allot understands.
const PortsName = "ports"

// Advisory reports whether kind k is advisory (never reserved).
func (k Kind) Advisory() bool { return k == DiskBW || k == NetBW }

func (k Kind) String() string { return KindNames[k] }

// KindOf returns the well-known kind named name.
func KindOf(name string) (Kind, bool) {
	for k, n := range KindNames {
		if n == name {
			return Kind(k), true
		}
	}
	return 0, false
}

// Vector is the well-known scalars of a resource set.
type Vector [NumKinds]Quantity

// Named is a scalar that is not one of the well-known kinds.
type Named struct {
	Name  string
	Value Quantity
}

// Resources is a set of resources: well-known scalars, other named scalars
// (sorted by name, zero values dropped) and port ranges. The zero value is
// the empty set. Methods never modify their receiver.
type Resources struct {
	Scalars Vector
	Extra   []Named
	Ports   Ranges
}

// Scalar returns the amount of the named scalar.
func (r Resources) Scalar(name string) Quantity {
	if k, ok := KindOf(name); ok {
		return r.Scalars[k]
	}
	for _, e := range r.Extra {
		if e.Name == name {
			return e.Value
		}
	}
	return 0
}

// WithScalar returns a copy of r with the named scalar set to q.
func (r Resources) WithScalar(name string, q Quantity) Resources {
	if k, ok := KindOf(name); ok {
		r.Scalars[k] = q
		return r
	}
	extra := make([]Named, 0, len(r.Extra)+1)
	done := false
	for _, e := range r.Extra {
		if e.Name == name {
			e.Value, done = q, true
		}
		if e.Value != 0 {
			extra = append(extra, e)
		}
	}
	if !done && q != 0 {
		extra = append(extra, Named{name, q})
		sort.Slice(extra, func(i, j int) bool { return extra[i].Name < extra[j].Name })
	}
	if len(extra) == 0 {
		extra = nil
	}
	r.Extra = extra
	return r
}

// IsEmpty reports whether r holds nothing.
func (r Resources) IsEmpty() bool {
	return r.Scalars == Vector{} && len(r.Extra) == 0 && len(r.Ports) == 0
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	out := Resources{Scalars: r.Scalars.Add(o.Scalars)}
	out.Extra = mergeNamed(r.Extra, o.Extra, 1)
	out.Ports = r.Ports.Add(o.Ports)
	return out
}

// Sub returns r - o, clamping at zero. Callers that need exactness check
// Contains first; the allocator does, and its property tests assert it.
func (r Resources) Sub(o Resources) Resources {
	out := Resources{Scalars: r.Scalars.Sub(o.Scalars)}
	out.Extra = mergeNamed(r.Extra, o.Extra, -1)
	out.Ports = r.Ports.Sub(o.Ports)
	return out
}

// Contains reports whether o ⊆ r.
func (r Resources) Contains(o Resources) bool {
	if !r.Scalars.Contains(o.Scalars) {
		return false
	}
	for _, e := range o.Extra {
		if r.Scalar(e.Name) < e.Value {
			return false
		}
	}
	return r.Ports.Contains(o.Ports)
}

// Equal reports whether r and o are the same set.
func (r Resources) Equal(o Resources) bool {
	if r.Scalars != o.Scalars || len(r.Extra) != len(o.Extra) || !r.Ports.Equal(o.Ports) {
		return false
	}
	for i := range r.Extra {
		if r.Extra[i] != o.Extra[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy that shares no memory with r.
func (r Resources) Clone() Resources {
	r.Extra = append([]Named(nil), r.Extra...)
	if len(r.Extra) == 0 {
		r.Extra = nil
	}
	r.Ports = r.Ports.Clone()
	return r
}

// Reservable returns r without the advisory bandwidths.
func (r Resources) Reservable() Resources {
	r.Scalars[DiskBW], r.Scalars[NetBW] = 0, 0
	return r
}

// ScalarTimes returns r's scalars multiplied by n (ports are not multiplied:
// a demand vector never asks for ranges).
func (r Resources) ScalarTimes(n int64) Resources {
	out := Resources{}
	for k := range r.Scalars {
		out.Scalars[k] = r.Scalars[k] * Quantity(n)
	}
	for _, e := range r.Extra {
		// Drop zero products (n == 0): Extra never holds zero values, and
		// Equal compares Extra element by element.
		if v := e.Value * Quantity(n); v != 0 {
			out.Extra = append(out.Extra, Named{e.Name, v})
		}
	}
	return out
}

// mergeNamed combines two sorted lists with sign +1 (add) or -1 (subtract,
// clamped at zero), dropping zeros.
func mergeNamed(a, b []Named, sign Quantity) []Named {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make([]Named, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var n Named
		switch {
		case j == len(b) || (i < len(a) && a[i].Name < b[j].Name):
			n = a[i]
			i++
		case i == len(a) || b[j].Name < a[i].Name:
			n = Named{b[j].Name, sign * b[j].Value}
			j++
		default:
			n = Named{a[i].Name, a[i].Value + sign*b[j].Value}
			i++
			j++
		}
		if n.Value < 0 {
			n.Value = 0
		}
		if n.Value != 0 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Add returns v + o.
func (v Vector) Add(o Vector) Vector {
	for k := range v {
		v[k] += o[k]
	}
	return v
}

// Sub returns v - o, clamped at zero.
func (v Vector) Sub(o Vector) Vector {
	for k := range v {
		v[k] -= o[k]
		if v[k] < 0 {
			v[k] = 0
		}
	}
	return v
}

// Contains reports whether o <= v in every kind.
func (v Vector) Contains(o Vector) bool {
	for k := range v {
		if o[k] > v[k] {
			return false
		}
	}
	return true
}

// Times returns v scaled by n.
func (v Vector) Times(n int64) Vector {
	for k := range v {
		v[k] *= Quantity(n)
	}
	return v
}

// DominantShare returns max over reservable kinds r of v_r / total_r, the
// DRF dominant share (kinds with zero total are skipped).
func (v Vector) DominantShare(total Vector) float64 {
	s := 0.0
	for k := Kind(0); k < NumKinds; k++ {
		if k.Advisory() || total[k] == 0 {
			continue
		}
		if f := float64(v[k]) / float64(total[k]); f > s {
			s = f
		}
	}
	return s
}

// MaxRatio returns max over kinds with d_r > 0 of d_r / c_r, and ok=false if
// some d_r > 0 meets c_r == 0 (the demand can never be met by c). Advisory
// kinds are included only when includeAdvisory is set.
func (d Vector) MaxRatio(c Vector, includeAdvisory bool) (ratio float64, ok bool) {
	for k := Kind(0); k < NumKinds; k++ {
		if d[k] == 0 || (!includeAdvisory && k.Advisory()) {
			continue
		}
		if c[k] <= 0 {
			return math.Inf(1), false
		}
		if f := float64(d[k]) / float64(c[k]); f > ratio {
			ratio = f
		}
	}
	return ratio, true
}

// String prints r in the Mesos text form, e.g. "cpus:24;mem:4096;ports:[31000-32000]".
func (r Resources) String() string {
	var parts []string
	for k, q := range r.Scalars {
		if q != 0 {
			parts = append(parts, KindNames[k]+":"+q.String())
		}
	}
	for _, e := range r.Extra {
		parts = append(parts, e.Name+":"+e.Value.String())
	}
	if len(r.Ports) > 0 {
		parts = append(parts, PortsName+":"+r.Ports.String())
	}
	if len(parts) == 0 {
		return "{}"
	}
	return strings.Join(parts, ";")
}

// Parse reads the Mesos text form "name:value;name:[a-b,c-d];...". Scalars
// may repeat (they add up). It rejects unknown range resources, static
// reservations ("cpus(role):2": ParseByRole reads those), empty names,
// negative, NaN and non-numeric values, naming the bad part.
func Parse(s string) (Resources, error) {
	var r Resources
	// "{}" is what String prints for the empty set; accept it so that
	// Parse(r.String()) round-trips for every r.
	if t := strings.TrimSpace(s); t == "" || t == "{}" {
		return r, nil
	}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, ":")
		name = strings.TrimSpace(name)
		if !ok {
			return Resources{}, fmt.Errorf("resource %q: want name:value", part)
		}
		if strings.ContainsAny(name, "()") {
			return Resources{}, fmt.Errorf("resource %q: static reservations (name(role):value) are not allowed here", part)
		}
		var err error
		if r, err = r.parsePart(part, name, value); err != nil {
			return Resources{}, err
		}
	}
	return r, nil
}

// parsePart adds one "name:value" part of the text form to r.
func (r Resources) parsePart(part, name, value string) (Resources, error) {
	if name == "" {
		return Resources{}, fmt.Errorf("resource %q: empty name", part)
	}
	value = strings.TrimSpace(value)
	if strings.HasPrefix(value, "[") || name == PortsName {
		if name != PortsName {
			return Resources{}, fmt.Errorf("resource %q: only %q may be a range", part, PortsName)
		}
		rs, err := ParseRanges(value)
		if err != nil {
			return Resources{}, fmt.Errorf("resource %q: %v", part, err)
		}
		r.Ports = r.Ports.Add(rs)
		return r, nil
	}
	q, err := ParseQuantity(value)
	if err == nil {
		q, err = addBounded(r.Scalar(name), q)
	}
	if err != nil {
		return Resources{}, fmt.Errorf("resource %q: %v", part, err)
	}
	return r.WithScalar(name, q), nil
}

// MustParse is Parse for literals in tests and fixtures; it panics on error.
func MustParse(s string) Resources {
	r, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return r
}
