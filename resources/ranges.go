package resources

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Range is an inclusive interval [Begin, End], as Mesos's Value.Range.
type Range struct{ Begin, End uint64 }

// Ranges is a sorted list of disjoint, non-adjacent ranges. Every method
// keeps that normal form, so equality is slice equality and Contains is a
// single merge walk.
type Ranges []Range

// NormalizeRanges sorts and coalesces rs into normal form. It rejects a
// range whose end is before its begin.
func NormalizeRanges(rs []Range) (Ranges, error) {
	for _, r := range rs {
		if r.End < r.Begin {
			return nil, fmt.Errorf("range [%d-%d] ends before it begins", r.Begin, r.End)
		}
	}
	out := append(Ranges(nil), rs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Begin < out[j].Begin })
	return out.coalesce(), nil
}

// coalesce merges overlapping or adjacent ranges of a sorted list in place.
func (rs Ranges) coalesce() Ranges {
	if len(rs) == 0 {
		return nil
	}
	w := 0
	for _, r := range rs[1:] {
		last := &rs[w]
		if last.End == ^uint64(0) || r.Begin <= last.End+1 { // adjacent or overlapping
			if r.End > last.End {
				last.End = r.End
			}
			continue
		}
		w++
		rs[w] = r
	}
	return rs[:w+1]
}

// Count is the number of values covered (ports, for example).
func (rs Ranges) Count() uint64 {
	var n uint64
	for _, r := range rs {
		n += r.End - r.Begin + 1
	}
	return n
}

// Add returns the union of rs and o as a new list.
func (rs Ranges) Add(o Ranges) Ranges {
	if len(o) == 0 {
		return rs.Clone()
	}
	if len(rs) == 0 {
		return o.Clone()
	}
	out := make(Ranges, 0, len(rs)+len(o))
	i, j := 0, 0
	for i < len(rs) || j < len(o) {
		if j == len(o) || (i < len(rs) && rs[i].Begin <= o[j].Begin) {
			out = append(out, rs[i])
			i++
		} else {
			out = append(out, o[j])
			j++
		}
	}
	return out.coalesce()
}

// Sub returns rs minus o as a new list; values of o not in rs are ignored.
func (rs Ranges) Sub(o Ranges) Ranges {
	if len(rs) == 0 || o.Contains(rs) {
		return nil // the common "take everything" case allocates nothing
	}
	out := make(Ranges, 0, len(rs)+1)
	j := 0
	for _, r := range rs {
		cur := r
		for j < len(o) && o[j].End < cur.Begin {
			j++
		}
		k := j
		empty := false
		for k < len(o) && o[k].Begin <= cur.End {
			if o[k].Begin > cur.Begin {
				out = append(out, Range{cur.Begin, o[k].Begin - 1})
			}
			if o[k].End >= cur.End {
				empty = true
				break
			}
			cur.Begin = o[k].End + 1
			k++
		}
		if !empty {
			out = append(out, cur)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Contains reports whether every value of o is in rs.
func (rs Ranges) Contains(o Ranges) bool {
	i := 0
	for _, r := range o {
		for i < len(rs) && rs[i].End < r.Begin {
			i++
		}
		if i == len(rs) || rs[i].Begin > r.Begin || rs[i].End < r.End {
			return false
		}
	}
	return true
}

// Equal reports whether both lists cover the same values.
func (rs Ranges) Equal(o Ranges) bool {
	if len(rs) != len(o) {
		return false
	}
	for i := range rs {
		if rs[i] != o[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy that shares no memory with rs.
func (rs Ranges) Clone() Ranges {
	if len(rs) == 0 {
		return nil
	}
	return append(Ranges(nil), rs...)
}

// String prints the Mesos form "[31000-32000, 33000-33000]".
func (rs Ranges) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range rs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatUint(r.Begin, 10))
		b.WriteByte('-')
		b.WriteString(strconv.FormatUint(r.End, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// ParseRanges parses "[31000-32000,33000-33100]" (brackets optional; a single
// value "80" means [80-80]).
func ParseRanges(s string) (Ranges, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimPrefix(t, "[")
	t = strings.TrimSuffix(t, "]")
	if strings.TrimSpace(t) == "" {
		return nil, nil
	}
	var rs []Range
	for _, part := range strings.Split(t, ",") {
		part = strings.TrimSpace(part)
		lo, hi, found := strings.Cut(part, "-")
		b, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("range %q: %q is not a non-negative integer", part, lo)
		}
		e := b
		if found {
			e, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("range %q: %q is not a non-negative integer", part, hi)
			}
		}
		rs = append(rs, Range{b, e})
	}
	return NormalizeRanges(rs)
}
