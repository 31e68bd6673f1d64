package resources

import (
	"math/rand/v2"
	"testing"
)

var extraNames = []string{"a", "foo", "fpgas", "zz"}

// randomResources returns a random resource set in normal form: small
// scalars with up to three decimals (some zero), a few extra named scalars
// and ports within [0, 200).
func randomResources(rng *rand.Rand) Resources {
	var r Resources
	for k := range r.Scalars {
		if rng.IntN(3) > 0 {
			r.Scalars[k] = Quantity(rng.Int64N(100 * Scale))
		}
	}
	for _, name := range extraNames {
		if rng.IntN(2) == 0 {
			r = r.WithScalar(name, Quantity(rng.Int64N(10*Scale)))
		}
	}
	var list []Range
	for range rng.IntN(4) {
		lo := rng.Uint64N(200)
		list = append(list, Range{lo, lo + rng.Uint64N(20)})
	}
	ports, err := NormalizeRanges(list)
	if err != nil {
		panic(err)
	}
	r.Ports = ports
	return r
}

func TestProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(20240601, 42))
	for i := 0; i < 5000; i++ {
		a, b := randomResources(rng), randomResources(rng)
		aS, bS := a.String(), b.String()

		// Ports are a set, not a multiset: adding a port a already holds
		// and taking it away again loses it. Take b's ports disjoint from
		// a's for the inverse law (as the allocator never hands out a
		// port twice); the general case is checked below.
		bd := b
		bd.Ports = b.Ports.Sub(a.Ports)

		sum := a.Add(bd)
		if back := sum.Sub(bd); !back.Equal(a) {
			t.Fatalf("(%v + %v) - %v = %v, want %v", a, bd, bd, back, a)
		}
		if !sum.Contains(a) || !sum.Contains(bd) {
			t.Fatalf("%v + %v = %v does not contain both", a, bd, sum)
		}
		if !a.Add(b).Contains(a) || !a.Add(b).Contains(b) {
			t.Fatalf("%v + %v = %v does not contain both", a, b, a.Add(b))
		}
		// With overlapping ports: scalars come back, shared ports are gone.
		want := a
		want.Ports = a.Ports.Sub(b.Ports)
		if got := a.Add(b).Sub(b); !got.Equal(want) {
			t.Fatalf("(%v + %v) - %v = %v, want %v", a, b, b, got, want)
		}
		if !a.Contains(a) || !a.Contains(Resources{}) {
			t.Fatalf("%v does not contain itself or the empty set", a)
		}
		if !a.Equal(a.Clone()) || !a.Add(Resources{}).Equal(a) || !a.Sub(Resources{}).Equal(a) {
			t.Fatalf("identity laws fail for %v", a)
		}
		if !a.Add(b).Equal(b.Add(a)) {
			t.Fatalf("%v + %v is not commutative", a, b)
		}
		if a.Sub(a).IsEmpty() != true {
			t.Fatalf("%v - itself = %v", a, a.Sub(a))
		}
		// a - b is in a, and (a - b) + b covers a.
		if d := a.Sub(b); !a.Contains(d) || !d.Add(b).Contains(a) {
			t.Fatalf("a=%v b=%v a-b=%v", a, b, d)
		}
		// Contains agrees with "b fits, so subtraction is exact".
		if a.Contains(b) {
			if got := a.Sub(b).Add(b); !got.Equal(a) {
				t.Fatalf("%v contains %v but (a-b)+b = %v", a, b, got)
			}
		}
		if a.Contains(b) && b.Contains(a) && !a.Equal(b) {
			t.Fatalf("%v and %v contain each other but are not Equal", a, b)
		}
		for _, r := range []Resources{sum, a.Sub(b), a.Reservable(), a.ScalarTimes(3)} {
			checkResources(t, "derived", r)
		}
		if back, err := Parse(aS); err != nil || !back.Equal(a) {
			t.Fatalf("Parse(%q) = %v, %v; want %v", aS, back, err, a)
		}
		if a.String() != aS || b.String() != bS {
			t.Fatalf("operations modified their operands")
		}
	}
}
