package resources

import (
	"math"
	"strings"
	"testing"
)

// checkResources fails t unless r keeps the Resources invariants: no
// negative scalars, Extra sorted by name with no duplicates, no zero values
// and no well-known or ports names, and Ports in normal form.
func checkResources(t *testing.T, what string, r Resources) {
	t.Helper()
	for k, q := range r.Scalars {
		if q < 0 {
			t.Errorf("%s = %v: negative %s", what, r, Kind(k))
		}
	}
	if r.Extra != nil && len(r.Extra) == 0 {
		t.Errorf("%s: Extra empty but not nil", what)
	}
	for i, e := range r.Extra {
		if e.Value <= 0 {
			t.Errorf("%s = %v: Extra %q has value %d", what, r, e.Name, e.Value)
		}
		if _, ok := KindOf(e.Name); ok || e.Name == PortsName || e.Name == "" {
			t.Errorf("%s = %v: Extra holds name %q", what, r, e.Name)
		}
		if i > 0 && r.Extra[i-1].Name >= e.Name {
			t.Errorf("%s = %v: Extra not strictly sorted at %q", what, r, e.Name)
		}
	}
	checkNormal(t, what+".Ports", r.Ports)
}

func q(v float64) Quantity {
	x, err := QuantityFromFloat(v)
	if err != nil {
		panic(err)
	}
	return x
}

func TestKinds(t *testing.T) {
	for k := Kind(0); k < NumKinds; k++ {
		got, ok := KindOf(k.String())
		if !ok || got != k {
			t.Errorf("KindOf(%q) = %v, %v; want %v", k.String(), got, ok, k)
		}
		if want := k == DiskBW || k == NetBW; k.Advisory() != want {
			t.Errorf("%v.Advisory() = %v, want %v", k, k.Advisory(), want)
		}
	}
	for _, name := range []string{"", "ports", "CPUS", "foo", "cpus "} {
		if k, ok := KindOf(name); ok {
			t.Errorf("KindOf(%q) = %v, want not found", name, k)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Resources
	}{
		{"", Resources{}},
		{"   ", Resources{}},
		{";;", Resources{}},
		{"{}", Resources{}}, // what String prints for the empty set
		{"cpus:24;mem:4096;disk:4096;ports:[31000-32000]", Resources{
			Scalars: Vector{CPUs: q(24), Mem: q(4096), Disk: q(4096)},
			Ports:   rs(31000, 32000),
		}},
		{"cpus:0.5", Resources{Scalars: Vector{CPUs: 500}}},
		{" cpus : 0.5 ; mem : 10 ;", Resources{Scalars: Vector{CPUs: 500, Mem: q(10)}}},
		{"gpus:2;disk_bw:100;net_bw:1000", Resources{Scalars: Vector{GPUs: q(2), DiskBW: q(100), NetBW: q(1000)}}},
		{"cpus:1;cpus:2.5", Resources{Scalars: Vector{CPUs: q(3.5)}}},
		{"cpus:0.1;cpus:0.2", Resources{Scalars: Vector{CPUs: q(0.3)}}},
		{"foo:2", Resources{Extra: []Named{{"foo", q(2)}}}},
		{"foo:2;bar:1;foo:0.5", Resources{Extra: []Named{{"bar", q(1)}, {"foo", q(2.5)}}}},
		{"zeta:1;alpha:1;mid:1", Resources{Extra: []Named{{"alpha", q(1)}, {"mid", q(1)}, {"zeta", q(1)}}}},
		{"foo:0;cpus:0", Resources{}},
		{"cpus:0.0001", Resources{}},
		{"ports:[1-2,3-4]", Resources{Ports: rs(1, 4)}},
		{"ports:[1-2];ports:[5-6]", Resources{Ports: rs(1, 2, 5, 6)}},
		{"ports:[1-5];ports:[3-8]", Resources{Ports: rs(1, 8)}},
		{"ports:80", Resources{Ports: rs(80, 80)}},
		{"ports:[]", Resources{}},
		{"cpus:1e3", Resources{Scalars: Vector{CPUs: q(1000)}}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("Parse(%q) = %v, want %v", tt.in, got, tt.want)
		}
		checkResources(t, "Parse("+tt.in+")", got)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in       string
		contains []string
	}{
		{"cpus:-1", []string{`"cpus:-1"`, "negative"}},
		{"cpus:NaN", []string{`"cpus:NaN"`, "NaN"}},
		{"cpus:Inf", []string{`"cpus:Inf"`, "infinite"}},
		{"cpus:abc", []string{`"cpus:abc"`, `"abc"`, "not a number"}},
		{"cpus:", []string{`"cpus:"`}},
		{"cpus:1e30", []string{`"cpus:1e30"`, "too large"}},
		{"cpus", []string{`"cpus"`, "name:value"}},
		{"mem:1;cpus", []string{`"cpus"`}},
		{":5", []string{`":5"`, "empty name"}},
		{"  :5", []string{`":5"`, "empty name"}},
		{"cpus(role):2", []string{`"cpus(role):2"`, "static reservations"}},
		{"cpus(*):2", []string{`"cpus(*):2"`}},
		{"foo:[1-2]", []string{`"foo:[1-2]"`, `only "ports" may be a range`}},
		{"cpus:[1-2]", []string{`"cpus:[1-2]"`, "range"}},
		{"ports:[5-1]", []string{`"ports:[5-1]"`, "[5-1]"}},
		{"ports:[a-3]", []string{`"ports:[a-3]"`, `"a"`}},
		{"cpus:1;mem:x;disk:2", []string{`"mem:x"`}},
		{"{}x", []string{`"{}x"`}},
		// The sum of repeated scalars is bounded like a single value.
		{"cpus:9e9;cpus:9e9", []string{`cpus`, "too large"}},
		{"foo:9e9;foo:9e9", []string{`foo`, "too large"}},
	}
	for _, tt := range tests {
		r, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want error", tt.in, r)
			continue
		}
		for _, c := range tt.contains {
			if !strings.Contains(err.Error(), c) {
				t.Errorf("Parse(%q) error %q does not mention %q", tt.in, err, c)
			}
		}
	}
}

func TestMustParse(t *testing.T) {
	if got := MustParse("cpus:1"); got.Scalars[CPUs] != Scale {
		t.Errorf("MustParse(cpus:1) = %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustParse(cpus:-1) did not panic")
		}
	}()
	MustParse("cpus:-1")
}

func TestString(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", "{}"},
		{"cpus:24;mem:4096;disk:4096;ports:[31000-32000]", "cpus:24;mem:4096;disk:4096;ports:[31000-32000]"},
		{"ports:[33000-33000,31000-32000];foo:1.5;net_bw:10;cpus:0.25", "cpus:0.25;net_bw:10;foo:1.5;ports:[31000-32000, 33000-33000]"},
		{"b:1;a:2", "a:2;b:1"},
		{"cpus:0.0015", "cpus:0.002"},
	}
	for _, tt := range tests {
		r := MustParse(tt.in)
		if got := r.String(); got != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	inputs := []string{
		"",
		"foo:0",
		"cpus:24;mem:4096;disk:4096;ports:[31000-32000]",
		"cpus:0.001;mem:0.1;disk:1e6;gpus:8;disk_bw:100.5;net_bw:1000",
		"foo:2;bar:0.333;baz:1e9",
		"ports:[1-2,4-5,7-7];ports:[0-0]",
		"ports:[0-18446744073709551615]",
		"cpus:9223372036;my resource:1",
		"cpus:1;cpus:2;foo:1;foo:2",
	}
	for _, in := range inputs {
		r := MustParse(in)
		back, err := Parse(r.String())
		if err != nil {
			t.Errorf("Parse(%q) (from %q): %v", r.String(), in, err)
			continue
		}
		if !back.Equal(r) {
			t.Errorf("Parse(%q) = %v, want %v", r.String(), back, r)
		}
	}
}

func TestScalarAndWithScalar(t *testing.T) {
	r := MustParse("cpus:2;foo:3;ports:[1-2]")
	if got := r.Scalar("cpus"); got != q(2) {
		t.Errorf("Scalar(cpus) = %v", got)
	}
	if got := r.Scalar("foo"); got != q(3) {
		t.Errorf("Scalar(foo) = %v", got)
	}
	if got := r.Scalar("bar"); got != 0 {
		t.Errorf("Scalar(bar) = %v", got)
	}

	tests := []struct {
		name string
		q    Quantity
		want string
	}{
		{"cpus", q(5), "cpus:5;foo:3;ports:[1-2]"},
		{"cpus", 0, "foo:3;ports:[1-2]"},
		{"foo", q(1), "cpus:2;foo:1;ports:[1-2]"},
		{"foo", 0, "cpus:2;ports:[1-2]"},
		{"bar", q(1), "cpus:2;bar:1;foo:3;ports:[1-2]"},
		{"zed", q(1), "cpus:2;foo:3;zed:1;ports:[1-2]"},
		{"bar", 0, "cpus:2;foo:3;ports:[1-2]"},
	}
	for _, tt := range tests {
		before := r.String()
		got := r.WithScalar(tt.name, tt.q)
		if want := MustParse(tt.want); !got.Equal(want) {
			t.Errorf("WithScalar(%q, %v) = %v, want %v", tt.name, tt.q, got, want)
		}
		checkResources(t, "WithScalar", got)
		if r.String() != before {
			t.Errorf("WithScalar modified its receiver: %v, was %v", r, before)
		}
	}
	if got := MustParse("foo:1").WithScalar("foo", 0); got.Extra != nil {
		t.Errorf("WithScalar to zero left Extra = %#v, want nil", got.Extra)
	}
}

func TestIsEmpty(t *testing.T) {
	for in, want := range map[string]bool{
		"":            true,
		"foo:0":       true,
		"cpus:0.001":  false,
		"foo:1":       false,
		"ports:[1-1]": false,
		"net_bw:1":    false,
	} {
		if got := MustParse(in).IsEmpty(); got != want {
			t.Errorf("Parse(%q).IsEmpty() = %v, want %v", in, got, want)
		}
	}
}

func TestAddSub(t *testing.T) {
	tests := []struct {
		a, b, sum, diff string
	}{
		{"", "", "", ""},
		{"cpus:1", "", "cpus:1", "cpus:1"},
		{"", "cpus:1", "cpus:1", ""},
		{"cpus:1;mem:100", "cpus:0.5;mem:30", "cpus:1.5;mem:130", "cpus:0.5;mem:70"},
		{"cpus:0.1", "cpus:0.2", "cpus:0.3", ""}, // clamped at zero
		{"cpus:1;foo:2", "foo:1;bar:1", "cpus:1;bar:1;foo:3", "cpus:1;foo:1"},
		{"foo:2", "foo:2", "foo:4", ""},
		{"a:1;c:1;e:1", "b:1;d:1;f:1", "a:1;b:1;c:1;d:1;e:1;f:1", "a:1;c:1;e:1"},
		{"a:1;b:5", "b:2;c:3", "a:1;b:7;c:3", "a:1;b:3"},
		{"ports:[1-10]", "ports:[4-6]", "ports:[1-10]", "ports:[1-3,7-10]"},
		{"ports:[1-3]", "ports:[4-6]", "ports:[1-6]", "ports:[1-3]"},
		{"cpus:4;mem:1024;disk_bw:50;gpus:1;ports:[31000-32000]", "cpus:1;mem:24;disk_bw:50;ports:[31000-31000]",
			"cpus:5;mem:1048;disk_bw:100;gpus:1;ports:[31000-32000]",
			"cpus:3;mem:1000;gpus:1;ports:[31001-32000]"},
	}
	for _, tt := range tests {
		a, b := MustParse(tt.a), MustParse(tt.b)
		aS, bS := a.String(), b.String()
		sum := a.Add(b)
		if want := MustParse(tt.sum); !sum.Equal(want) {
			t.Errorf("%v + %v = %v, want %v", a, b, sum, want)
		}
		if rev := b.Add(a); !rev.Equal(sum) {
			t.Errorf("%v + %v = %v, but %v + %v = %v", a, b, sum, b, a, rev)
		}
		diff := a.Sub(b)
		if want := MustParse(tt.diff); !diff.Equal(want) {
			t.Errorf("%v - %v = %v, want %v", a, b, diff, want)
		}
		checkResources(t, "Add", sum)
		checkResources(t, "Sub", diff)
		if a.String() != aS || b.String() != bS {
			t.Errorf("Add/Sub modified an operand")
		}
	}
}

func TestAddDoesNotAlias(t *testing.T) {
	a := MustParse("foo:1;ports:[1-2]")
	sum := a.Add(Resources{})
	sum.Extra[0].Value = 99
	sum.Ports[0].End = 99
	if !a.Equal(MustParse("foo:1;ports:[1-2]")) {
		t.Errorf("Add result shares memory with its receiver: %v", a)
	}
	c := a.Clone()
	c.Extra[0].Value = 99
	c.Ports[0].End = 99
	if !a.Equal(MustParse("foo:1;ports:[1-2]")) {
		t.Errorf("Clone shares memory with its receiver: %v", a)
	}
	if e := (Resources{Extra: []Named{}}).Clone(); e.Extra != nil {
		t.Errorf("Clone of empty Extra = %#v, want nil", e.Extra)
	}
}

func TestContains(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"cpus:1", "", true},
		{"", "cpus:0.001", false},
		{"cpus:1;mem:10", "cpus:1;mem:10", true},
		{"cpus:1;mem:10", "cpus:1.001", false},
		{"cpus:1;mem:10", "mem:10.001", false},
		{"cpus:1;mem:10", "gpus:1", false},
		{"cpus:1;net_bw:1", "net_bw:2", false},
		{"foo:2", "foo:2", true},
		{"foo:2", "foo:2.001", false},
		{"foo:2", "bar:1", false},
		{"foo:2;bar:1", "bar:1", true},
		{"cpus:1", "foo:1", false},
		{"ports:[1-10]", "ports:[2-3]", true},
		{"ports:[1-10]", "ports:[10-11]", false},
		{"cpus:4;foo:1;ports:[1-10]", "cpus:4;foo:1;ports:[11-11]", false},
		{"cpus:4;foo:1;ports:[1-10]", "cpus:4;foo:1;ports:[1-10]", true},
	}
	for _, tt := range tests {
		a, b := MustParse(tt.a), MustParse(tt.b)
		if got := a.Contains(b); got != tt.want {
			t.Errorf("%v.Contains(%v) = %v, want %v", a, b, got, tt.want)
		}
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"", "foo:0", true},
		{"cpus:1", "cpus:1", true},
		{"cpus:1", "cpus:1.001", false},
		{"cpus:1", "mem:1", false},
		{"foo:1", "foo:1", true},
		{"foo:1", "bar:1", false},
		{"foo:1", "foo:2", false},
		{"foo:1", "foo:1;bar:1", false},
		{"foo:1;bar:1", "bar:1;foo:1", true},
		{"ports:[1-2]", "ports:[1-2]", true},
		{"ports:[1-2]", "ports:[1-1,2-2]", true},
		{"ports:[1-2]", "ports:[1-3]", false},
		{"ports:[1-2]", "", false},
	}
	for _, tt := range tests {
		a, b := MustParse(tt.a), MustParse(tt.b)
		if got := a.Equal(b); got != tt.want {
			t.Errorf("%v.Equal(%v) = %v, want %v", a, b, got, tt.want)
		}
		if got := b.Equal(a); got != tt.want {
			t.Errorf("%v.Equal(%v) = %v, want %v", b, a, got, tt.want)
		}
	}
}

func TestReservable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"disk_bw:100;net_bw:1000", ""},
		{"cpus:4;mem:1024;disk:10;gpus:1;disk_bw:100;net_bw:1000;foo:2;ports:[1-2]",
			"cpus:4;mem:1024;disk:10;gpus:1;foo:2;ports:[1-2]"},
	}
	for _, tt := range tests {
		r := MustParse(tt.in)
		got := r.Reservable()
		if want := MustParse(tt.want); !got.Equal(want) {
			t.Errorf("%v.Reservable() = %v, want %v", r, got, want)
		}
		if !r.Equal(MustParse(tt.in)) {
			t.Errorf("Reservable modified its receiver")
		}
	}
}

func TestScalarTimes(t *testing.T) {
	tests := []struct {
		in   string
		n    int64
		want string
	}{
		{"cpus:0.5;mem:100;foo:0.25;ports:[1-2]", 4, "cpus:2;mem:400;foo:1"},
		{"cpus:0.5;mem:100;foo:0.25", 1, "cpus:0.5;mem:100;foo:0.25"},
		{"cpus:0.5;mem:100;foo:0.25", 0, ""},
		{"", 7, ""},
	}
	for _, tt := range tests {
		r := MustParse(tt.in)
		got := r.ScalarTimes(tt.n)
		if want := MustParse(tt.want); !got.Equal(want) {
			t.Errorf("%v.ScalarTimes(%d) = %v, want %v", r, tt.n, got, want)
		}
		checkResources(t, "ScalarTimes", got)
	}
}

func TestVectorOps(t *testing.T) {
	a := Vector{CPUs: 1000, Mem: 500, NetBW: 7}
	b := Vector{CPUs: 300, Mem: 800, GPUs: 1}
	if got, want := a.Add(b), (Vector{CPUs: 1300, Mem: 1300, GPUs: 1, NetBW: 7}); got != want {
		t.Errorf("Add = %v, want %v", got, want)
	}
	if got, want := a.Sub(b), (Vector{CPUs: 700, NetBW: 7}); got != want {
		t.Errorf("Sub = %v, want %v", got, want)
	}
	if got, want := a.Times(3), (Vector{CPUs: 3000, Mem: 1500, NetBW: 21}); got != want {
		t.Errorf("Times = %v, want %v", got, want)
	}
	if a != (Vector{CPUs: 1000, Mem: 500, NetBW: 7}) {
		t.Error("Vector methods modified their receiver")
	}
	if !a.Contains(Vector{CPUs: 1000}) || a.Contains(b) || !a.Contains(Vector{}) || !a.Contains(a) {
		t.Error("Vector.Contains is wrong")
	}
}

func TestDominantShare(t *testing.T) {
	total := Vector{CPUs: q(10), Mem: q(100), Disk: q(1000), DiskBW: q(10), NetBW: q(10)}
	tests := []struct {
		name  string
		v     Vector
		total Vector
		want  float64
	}{
		{"empty", Vector{}, total, 0},
		{"cpu dominant", Vector{CPUs: q(2), Mem: q(10)}, total, 0.2},    // 2/10 vs 10/100
		{"mem dominant", Vector{CPUs: q(1), Mem: q(30)}, total, 0.3},    // 1/10 vs 30/100
		{"disk dominant", Vector{CPUs: q(1), Disk: q(500)}, total, 0.5}, // 1/10 vs 500/1000
		{"advisory ignored", Vector{CPUs: q(1), DiskBW: q(10), NetBW: q(9)}, total, 0.1},
		{"zero total skipped", Vector{CPUs: q(1), GPUs: q(4)}, total, 0.1}, // no gpus in total
		{"everything", total, total, 1},
		{"no total", Vector{CPUs: q(1)}, Vector{}, 0},
		{"over", Vector{CPUs: q(15)}, total, 1.5},
		{"thousandths", Vector{CPUs: 1}, Vector{CPUs: q(4)}, 0.00025},
	}
	for _, tt := range tests {
		if got := tt.v.DominantShare(tt.total); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: DominantShare = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMaxRatio(t *testing.T) {
	c := Vector{CPUs: q(4), Mem: q(1000), DiskBW: q(100)}
	tests := []struct {
		name     string
		d, c     Vector
		advisory bool
		want     float64
		ok       bool
	}{
		{"empty demand", Vector{}, c, false, 0, true},
		{"empty demand no capacity", Vector{}, Vector{}, false, 0, true},
		{"cpu", Vector{CPUs: q(1), Mem: q(100)}, c, false, 0.25, true}, // 1/4 vs 100/1000
		{"mem", Vector{CPUs: q(1), Mem: q(500)}, c, false, 0.5, true},  // 1/4 vs 500/1000
		{"over", Vector{CPUs: q(8)}, c, false, 2, true},
		{"missing kind", Vector{CPUs: q(1), GPUs: q(1)}, c, false, math.Inf(1), false},
		{"advisory ignored", Vector{CPUs: q(1), DiskBW: q(80)}, c, false, 0.25, true},
		{"advisory included", Vector{CPUs: q(1), DiskBW: q(80)}, c, true, 0.8, true},
		{"advisory missing ignored", Vector{CPUs: q(1), NetBW: q(1)}, c, false, 0.25, true},
		{"advisory missing included", Vector{CPUs: q(1), NetBW: q(1)}, c, true, math.Inf(1), false},
	}
	for _, tt := range tests {
		got, ok := tt.d.MaxRatio(tt.c, tt.advisory)
		if ok != tt.ok || (got != tt.want && math.Abs(got-tt.want) > 1e-12) {
			t.Errorf("%s: MaxRatio = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
