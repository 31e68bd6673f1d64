package resources

import (
	"math/rand/v2"
	"strings"
	"testing"
)

const maxU = ^uint64(0)

// rs is shorthand for a Ranges literal: rs(1, 2, 5, 9) is [1-2, 5-9].
func rs(bounds ...uint64) Ranges {
	if len(bounds)%2 != 0 {
		panic("rs needs pairs")
	}
	var out Ranges
	for i := 0; i < len(bounds); i += 2 {
		out = append(out, Range{bounds[i], bounds[i+1]})
	}
	return out
}

// checkNormal fails t unless r is in normal form: sorted, disjoint,
// non-adjacent, begin <= end, and nil rather than empty.
func checkNormal(t *testing.T, what string, r Ranges) {
	t.Helper()
	if r != nil && len(r) == 0 {
		t.Errorf("%s: empty but not nil", what)
	}
	for i, x := range r {
		if x.End < x.Begin {
			t.Errorf("%s = %v: range %d ends before it begins", what, r, i)
		}
		if i > 0 && r[i-1].End != maxU && x.Begin <= r[i-1].End+1 {
			t.Errorf("%s = %v: ranges %d and %d overlap or touch", what, r, i-1, i)
		}
		if i > 0 && r[i-1].End == maxU {
			t.Errorf("%s = %v: range after one ending at max uint64", what, r)
		}
	}
}

func TestNormalizeRanges(t *testing.T) {
	tests := []struct {
		name string
		in   []Range
		want Ranges
	}{
		{"nil", nil, nil},
		{"empty", []Range{}, nil},
		{"single", rs(5, 5), rs(5, 5)},
		{"sorted", rs(5, 6, 1, 2), rs(1, 2, 5, 6)},
		{"overlap", rs(1, 5, 3, 8), rs(1, 8)},
		{"contained", rs(1, 10, 3, 4), rs(1, 10)},
		{"contained reverse", rs(3, 4, 1, 10), rs(1, 10)},
		{"adjacent", rs(1, 2, 3, 4), rs(1, 4)},
		{"adjacent unsorted", rs(3, 4, 1, 2), rs(1, 4)},
		{"gap of one", rs(1, 2, 4, 5), rs(1, 2, 4, 5)},
		{"duplicates", rs(7, 9, 7, 9, 7, 9), rs(7, 9)},
		{"chain", rs(10, 12, 1, 3, 4, 6, 7, 9, 20, 20), rs(1, 12, 20, 20)},
		{"same begin", rs(1, 3, 1, 10, 1, 2), rs(1, 10)},
		{"zero", rs(0, 0, 1, 1), rs(0, 1)},
		{"max single", rs(maxU, maxU), rs(maxU, maxU)},
		{"max adjacent", rs(maxU, maxU, maxU-1, maxU-1), rs(maxU-1, maxU)},
		{"max full", rs(0, maxU, 5, 6, maxU, maxU), rs(0, maxU)},
		{"max overlap", rs(10, maxU, 5, 20), rs(5, maxU)},
		{"max no wrap", rs(maxU-5, maxU, 0, 0), rs(0, 0, maxU-5, maxU)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]Range(nil), tt.in...)
			got, err := NormalizeRanges(tt.in)
			if err != nil {
				t.Fatalf("NormalizeRanges(%v): %v", tt.in, err)
			}
			if !got.Equal(tt.want) {
				t.Errorf("NormalizeRanges(%v) = %v, want %v", tt.in, got, tt.want)
			}
			checkNormal(t, "NormalizeRanges", got)
			if !Ranges(tt.in).Equal(in) {
				t.Errorf("NormalizeRanges modified its input: %v, was %v", tt.in, in)
			}
		})
	}
}

func TestNormalizeRangesError(t *testing.T) {
	_, err := NormalizeRanges(rs(1, 2, 5, 1))
	if err == nil {
		t.Fatal("NormalizeRanges([5-1]) succeeded, want error")
	}
	if !strings.Contains(err.Error(), "[5-1]") {
		t.Errorf("error %q does not name the bad range [5-1]", err)
	}
}

func TestRangesCount(t *testing.T) {
	tests := []struct {
		r    Ranges
		want uint64
	}{
		{nil, 0},
		{rs(5, 5), 1},
		{rs(1, 10), 10},
		{rs(1, 2, 5, 9), 7},
		{rs(31000, 32000), 1001},
		{rs(0, maxU-1), maxU},
	}
	for _, tt := range tests {
		if got := tt.r.Count(); got != tt.want {
			t.Errorf("%v.Count() = %d, want %d", tt.r, got, tt.want)
		}
	}
}

func TestRangesAdd(t *testing.T) {
	tests := []struct {
		a, b, want Ranges
	}{
		{nil, nil, nil},
		{rs(1, 2), nil, rs(1, 2)},
		{nil, rs(1, 2), rs(1, 2)},
		{rs(1, 2), rs(5, 6), rs(1, 2, 5, 6)},
		{rs(5, 6), rs(1, 2), rs(1, 2, 5, 6)},
		{rs(1, 2), rs(3, 4), rs(1, 4)},
		{rs(3, 4), rs(1, 2), rs(1, 4)},
		{rs(1, 5), rs(3, 8), rs(1, 8)},
		{rs(1, 10), rs(3, 4), rs(1, 10)},
		{rs(1, 2, 6, 7), rs(3, 5), rs(1, 7)},
		{rs(1, 2, 10, 12), rs(4, 5, 20, 21), rs(1, 2, 4, 5, 10, 12, 20, 21)},
		{rs(1, 2, 10, 12), rs(1, 2, 10, 12), rs(1, 2, 10, 12)},
		{rs(0, 0), rs(maxU, maxU), rs(0, 0, maxU, maxU)},
		{rs(5, maxU), rs(0, 4), rs(0, maxU)},
		{rs(maxU-1, maxU), rs(maxU, maxU), rs(maxU-1, maxU)},
	}
	for _, tt := range tests {
		a, b := tt.a.Clone(), tt.b.Clone()
		got := tt.a.Add(tt.b)
		if !got.Equal(tt.want) {
			t.Errorf("%v.Add(%v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		checkNormal(t, "Add", got)
		if !tt.a.Equal(a) || !tt.b.Equal(b) {
			t.Errorf("Add modified an operand")
		}
		if rev := tt.b.Add(tt.a); !rev.Equal(tt.want) {
			t.Errorf("%v.Add(%v) = %v, want %v (commutativity)", tt.b, tt.a, rev, tt.want)
		}
	}
}

func TestRangesAddDoesNotAlias(t *testing.T) {
	a := rs(1, 2)
	got := a.Add(nil)
	got[0].End = 100
	if a[0].End != 2 {
		t.Error("Add(nil) returned a list sharing memory with its receiver")
	}
	got = Ranges(nil).Add(a)
	got[0].End = 100
	if a[0].End != 2 {
		t.Error("nil.Add(a) returned a list sharing memory with its argument")
	}
}

func TestRangesSub(t *testing.T) {
	tests := []struct {
		name       string
		a, b, want Ranges
	}{
		{"nil from nil", nil, nil, nil},
		{"nil from some", rs(1, 5), nil, rs(1, 5)},
		{"some from nil", nil, rs(1, 5), nil},
		{"middle", rs(1, 10), rs(4, 6), rs(1, 3, 7, 10)},
		{"single value middle", rs(1, 10), rs(5, 5), rs(1, 4, 6, 10)},
		{"prefix", rs(1, 10), rs(1, 3), rs(4, 10)},
		{"prefix overhanging", rs(5, 10), rs(1, 7), rs(8, 10)},
		{"suffix", rs(1, 10), rs(8, 10), rs(1, 7)},
		{"suffix overhanging", rs(1, 10), rs(8, 20), rs(1, 7)},
		{"everything exact", rs(1, 10), rs(1, 10), nil},
		{"everything wider", rs(3, 4), rs(1, 10), nil},
		{"everything multi", rs(1, 2, 5, 6, 9, 9), rs(0, 100), nil},
		{"everything piecewise", rs(1, 2, 5, 6), rs(1, 2, 5, 6), nil},
		{"absent below", rs(10, 20), rs(1, 5), rs(10, 20)},
		{"absent above", rs(10, 20), rs(30, 40), rs(10, 20)},
		{"absent gap", rs(1, 5, 10, 20), rs(7, 8), rs(1, 5, 10, 20)},
		{"partly absent", rs(1, 5, 10, 20), rs(4, 12), rs(1, 3, 13, 20)},
		{"several holes", rs(1, 20), rs(2, 3, 5, 5, 10, 12), rs(1, 1, 4, 4, 6, 9, 13, 20)},
		{"one hole spans two", rs(1, 5, 10, 20), rs(3, 15), rs(1, 2, 16, 20)},
		{"holes in several", rs(1, 10, 20, 30), rs(5, 5, 25, 25), rs(1, 4, 6, 10, 20, 24, 26, 30)},
		{"zero", rs(0, 10), rs(0, 0), rs(1, 10)},
		{"max suffix", rs(0, maxU), rs(maxU, maxU), rs(0, maxU-1)},
		{"max middle", rs(0, maxU), rs(1, maxU-1), rs(0, 0, maxU, maxU)},
		{"max all", rs(0, maxU), rs(0, maxU), nil},
		{"max from max", rs(maxU, maxU), rs(maxU-3, maxU), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := tt.a.Clone(), tt.b.Clone()
			got := tt.a.Sub(tt.b)
			if !got.Equal(tt.want) {
				t.Errorf("%v.Sub(%v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			checkNormal(t, "Sub", got)
			if !tt.a.Equal(a) || !tt.b.Equal(b) {
				t.Errorf("Sub modified an operand")
			}
		})
	}
}

func TestRangesContains(t *testing.T) {
	tests := []struct {
		a, b Ranges
		want bool
	}{
		{nil, nil, true},
		{rs(1, 5), nil, true},
		{nil, rs(1, 1), false},
		{rs(1, 5), rs(1, 5), true},
		{rs(1, 5), rs(2, 3), true},
		{rs(1, 5), rs(0, 3), false},
		{rs(1, 5), rs(3, 6), false},
		{rs(1, 5), rs(6, 6), false},
		{rs(1, 5, 10, 20), rs(2, 3, 12, 20), true},
		{rs(1, 5, 10, 20), rs(2, 3, 12, 21), false},
		{rs(1, 5, 10, 20), rs(4, 11), false}, // spans the gap
		{rs(1, 5, 10, 20), rs(7, 7), false},
		{rs(1, 5, 10, 20), rs(15, 15), true},
		{rs(1, 5, 10, 20), rs(25, 25), false},
		{rs(0, maxU), rs(0, 0, maxU, maxU), true},
		{rs(0, maxU-1), rs(maxU, maxU), false},
	}
	for _, tt := range tests {
		if got := tt.a.Contains(tt.b); got != tt.want {
			t.Errorf("%v.Contains(%v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestRangesEqualCloneString(t *testing.T) {
	if !Ranges(nil).Equal(Ranges{}) {
		t.Error("nil and empty Ranges are not Equal")
	}
	if rs(1, 2).Equal(rs(1, 3)) || rs(1, 2).Equal(rs(1, 2, 4, 5)) {
		t.Error("different Ranges are Equal")
	}
	if c := (Ranges{}).Clone(); c != nil {
		t.Errorf("Clone of empty = %#v, want nil", c)
	}
	a := rs(1, 2, 4, 5)
	c := a.Clone()
	c[0].Begin = 0
	if a[0].Begin != 1 {
		t.Error("Clone shares memory")
	}
	for _, tt := range []struct {
		r    Ranges
		want string
	}{
		{nil, "[]"},
		{rs(80, 80), "[80-80]"},
		{rs(31000, 32000, 33000, 33000), "[31000-32000, 33000-33000]"},
		{rs(0, maxU), "[0-18446744073709551615]"},
	} {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		back, err := ParseRanges(tt.r.String())
		if err != nil || !back.Equal(tt.r) {
			t.Errorf("ParseRanges(%q) = %v, %v; want %v", tt.r.String(), back, err, tt.r)
		}
	}
}

func TestParseRanges(t *testing.T) {
	tests := []struct {
		in   string
		want Ranges
	}{
		{"", nil},
		{"[]", nil},
		{" [ ] ", nil},
		{"[31000-32000]", rs(31000, 32000)},
		{"31000-32000", rs(31000, 32000)},
		{"[80]", rs(80, 80)},
		{"80", rs(80, 80)},
		{"[31000-32000,33000-33100]", rs(31000, 32000, 33000, 33100)},
		{"[31000-32000, 33000-33100]", rs(31000, 32000, 33000, 33100)},
		{"[ 1 - 2 , 3 - 4 ]", rs(1, 4)},
		{"[5-6,1-2]", rs(1, 2, 5, 6)},
		{"[1-5,3-8]", rs(1, 8)},
		{"[0-18446744073709551615]", rs(0, maxU)},
	}
	for _, tt := range tests {
		got, err := ParseRanges(tt.in)
		if err != nil {
			t.Errorf("ParseRanges(%q): %v", tt.in, err)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("ParseRanges(%q) = %v, want %v", tt.in, got, tt.want)
		}
		checkNormal(t, "ParseRanges", got)
	}
}

func TestParseRangesErrors(t *testing.T) {
	tests := []struct {
		in       string
		contains []string
	}{
		{"[5-1]", []string{"[5-1]", "ends before it begins"}},
		{"[1-2,9-3]", []string{"[9-3]"}},
		{"[a-3]", []string{`"a"`}},
		{"[3-b]", []string{`"b"`}},
		{"[-3]", []string{`"-3"`}},
		{"[1--3]", []string{`"-3"`}},
		{"[1-2,]", []string{`""`}},
		{"[1-2-3]", []string{`"2-3"`}},
		{"[1.5-2]", []string{`"1.5"`}},
		{"[0-18446744073709551616]", []string{"18446744073709551616"}},
		{"[x]", []string{`"x"`}},
	}
	for _, tt := range tests {
		r, err := ParseRanges(tt.in)
		if err == nil {
			t.Errorf("ParseRanges(%q) = %v, want error", tt.in, r)
			continue
		}
		for _, c := range tt.contains {
			if !strings.Contains(err.Error(), c) {
				t.Errorf("ParseRanges(%q) error %q does not mention %q", tt.in, err, c)
			}
		}
	}
}

// bits is a model of a set of values in [0, 64) for checking Ranges
// operations against plain set arithmetic.
type bits uint64

func (b bits) ranges() Ranges {
	var out Ranges
	for v := uint64(0); v < 64; v++ {
		if b&(1<<v) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].End+1 == v {
			out[n-1].End = v
		} else {
			out = append(out, Range{v, v})
		}
	}
	return out
}

// randomRanges returns up to n random (possibly overlapping, unsorted)
// ranges within [0, 64) and the set they cover.
func randomRanges(rng *rand.Rand, n int) ([]Range, bits) {
	var list []Range
	var b bits
	for range rng.IntN(n + 1) {
		lo := rng.Uint64N(64)
		hi := lo + rng.Uint64N(min(8, 64-lo))
		list = append(list, Range{lo, hi})
		for v := lo; v <= hi; v++ {
			b |= 1 << v
		}
	}
	return list, b
}

func TestRangesAgainstSetModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 5000; i++ {
		la, ba := randomRanges(rng, 6)
		lb, bb := randomRanges(rng, 6)
		a, err := NormalizeRanges(la)
		if err != nil {
			t.Fatal(err)
		}
		b, err := NormalizeRanges(lb)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Equal(ba.ranges()) {
			t.Fatalf("NormalizeRanges(%v) = %v, want %v", la, a, ba.ranges())
		}
		if got, want := a.Add(b), (ba | bb).ranges(); !got.Equal(want) {
			t.Fatalf("%v.Add(%v) = %v, want %v", a, b, got, want)
		}
		if got, want := a.Sub(b), (ba &^ bb).ranges(); !got.Equal(want) {
			t.Fatalf("%v.Sub(%v) = %v, want %v", a, b, got, want)
		}
		if got, want := a.Contains(b), bb&^ba == 0; got != want {
			t.Fatalf("%v.Contains(%v) = %v, want %v", a, b, got, want)
		}
		var n uint64
		for v := ba; v != 0; v &= v - 1 {
			n++
		}
		if got := a.Count(); got != n {
			t.Fatalf("%v.Count() = %d, want %d", a, got, n)
		}
		if back, err := ParseRanges(a.String()); err != nil || !back.Equal(a) {
			t.Fatalf("ParseRanges(%q) = %v, %v; want %v", a.String(), back, err, a)
		}
	}
}
