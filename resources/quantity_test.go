package resources

import (
	"math"
	"strings"
	"testing"
)

func TestQuantityFromFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want Quantity
	}{
		{0, 0},
		{math.Copysign(0, -1), 0}, // -0 is not negative
		{1, 1000},
		{0.5, 500},
		{4096, 4096000},
		{0.001, 1},
		// Rounding to the nearest thousandth, halves away from zero (as
		// Mesos's llround(v*1000)).
		{0.0015, 2},
		{0.0014, 1},
		{0.0016, 2},
		{0.0025, 3},
		{0.0005, 1},
		{0.0004999, 0},
		{0.0004, 0},
		{2.5004, 2500},
		{2.5006, 2501},
		{0.1, 100},
		{0.2, 200},
		{0.3, 300},
		{maxQuantity, Quantity(maxQuantity * Scale)},
	}
	for _, tt := range tests {
		got, err := QuantityFromFloat(tt.in)
		if err != nil {
			t.Errorf("QuantityFromFloat(%v): unexpected error %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("QuantityFromFloat(%v) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestQuantityFromFloatErrors(t *testing.T) {
	tests := []struct {
		in       float64
		contains []string
	}{
		{math.NaN(), []string{"NaN"}},
		{math.Inf(1), []string{"infinite"}},
		{math.Inf(-1), []string{"infinite"}},
		{-1, []string{"-1", "negative"}},
		{-0.0001, []string{"-0.0001", "negative"}},
		{1e300, []string{"1e+300", "too large"}},
		{math.Nextafter(maxQuantity, math.Inf(1)), []string{"too large"}},
	}
	for _, tt := range tests {
		q, err := QuantityFromFloat(tt.in)
		if err == nil {
			t.Errorf("QuantityFromFloat(%v) = %d, want error", tt.in, q)
			continue
		}
		for _, c := range tt.contains {
			if !strings.Contains(err.Error(), c) {
				t.Errorf("QuantityFromFloat(%v) error %q does not mention %q", tt.in, err, c)
			}
		}
	}
}

func TestParseQuantity(t *testing.T) {
	tests := []struct {
		in   string
		want Quantity
	}{
		{"0", 0},
		{"0.5", 500},
		{"4096", 4096000},
		{"1e3", 1000000},
		{"+2", 2000},
		{"0.0015", 2},
		{"0.0001", 0},
		{"1e-400", 0}, // underflows to zero, which is fine
		{"-0", 0},
	}
	for _, tt := range tests {
		got, err := ParseQuantity(tt.in)
		if err != nil {
			t.Errorf("ParseQuantity(%q): unexpected error %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseQuantity(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestParseQuantityErrors(t *testing.T) {
	tests := []struct {
		in       string
		contains []string
	}{
		{"", []string{`""`, "not a number"}},
		{"abc", []string{`"abc"`, "not a number"}},
		{"1.2.3", []string{`"1.2.3"`}},
		{" 1", []string{`" 1"`}},
		{"NaN", []string{`"NaN"`, "NaN"}},
		{"nan", []string{`"nan"`, "NaN"}},
		{"Inf", []string{`"Inf"`, "infinite"}},
		{"+Inf", []string{`"+Inf"`, "infinite"}},
		{"-Inf", []string{`"-Inf"`}},
		{"-1", []string{`"-1"`, "negative"}},
		{"-0.5", []string{`"-0.5"`, "negative"}},
		{"1e30", []string{`"1e30"`, "too large"}},
		{"1e400", []string{`"1e400"`, "too large"}},
		{"-1e400", []string{`"-1e400"`, "negative"}},
		{"9223372037", []string{`"9223372037"`, "too large"}},
	}
	for _, tt := range tests {
		q, err := ParseQuantity(tt.in)
		if err == nil {
			t.Errorf("ParseQuantity(%q) = %d, want error", tt.in, q)
			continue
		}
		for _, c := range tt.contains {
			if !strings.Contains(err.Error(), c) {
				t.Errorf("ParseQuantity(%q) error %q does not mention %q", tt.in, err, c)
			}
		}
	}
}

func TestQuantityString(t *testing.T) {
	tests := []struct {
		q    Quantity
		want string
	}{
		{0, "0"},
		{1, "0.001"},
		{10, "0.01"},
		{100, "0.1"},
		{300, "0.3"},
		{1500, "1.5"},
		{1234, "1.234"},
		{4096000, "4096"},
	}
	for _, tt := range tests {
		if got := tt.q.String(); got != tt.want {
			t.Errorf("Quantity(%d).String() = %q, want %q", tt.q, got, tt.want)
		}
		back, err := ParseQuantity(tt.q.String())
		if err != nil || back != tt.q {
			t.Errorf("ParseQuantity(%q) = %d, %v; want %d", tt.q.String(), back, err, tt.q)
		}
	}
}

// Every quantity up to the parse limit survives String -> ParseQuantity.
func TestQuantityStringRoundTripLarge(t *testing.T) {
	top := Quantity(maxQuantity * Scale)
	for _, q := range []Quantity{top, top - 1, top - 7, top / 3, top/3 + 1, 1234567890123, 999999999999} {
		back, err := ParseQuantity(q.String())
		if err != nil || back != q {
			t.Errorf("ParseQuantity(%q) = %d, %v; want %d", q.String(), back, err, q)
		}
	}
}

func TestQuantityUnitsAndRatio(t *testing.T) {
	if got := Quantity(1500).Units(); got != 1.5 {
		t.Errorf("Units = %v, want 1.5", got)
	}
	tests := []struct {
		q, d Quantity
		want float64
	}{
		{500, 1000, 0.5},
		{1000, 500, 2},
		{0, 1000, 0},
		{1000, 0, 0},
		{0, 0, 0},
	}
	for _, tt := range tests {
		if got := tt.q.Ratio(tt.d); got != tt.want {
			t.Errorf("Quantity(%d).Ratio(%d) = %v, want %v", tt.q, tt.d, got, tt.want)
		}
	}
}

func TestQuantityExactArithmetic(t *testing.T) {
	a, _ := QuantityFromFloat(0.1)
	b, _ := QuantityFromFloat(0.2)
	c, _ := QuantityFromFloat(0.3)
	// Variables, so that the float sum happens at run time (constant
	// arithmetic in Go is exact and would hide the drift).
	x, y := 0.1, 0.2
	if x+y == 0.3 {
		t.Fatal("float64 0.1+0.2 is expected to drift; the test premise is wrong")
	}
	if a+b != c {
		t.Errorf("0.1+0.2 = %d thousandths, want %d", a+b, c)
	}
	if got := (a + b).String(); got != "0.3" {
		t.Errorf("(0.1+0.2).String() = %q, want 0.3", got)
	}

	// A thousand allocations then recoveries of a tenth of a cpu.
	var sum Quantity
	for range 1000 {
		sum += a
	}
	if sum != 100*Scale {
		t.Errorf("1000 * 0.1 = %v, want exactly 100", sum)
	}
	for range 1000 {
		sum -= a
	}
	if sum != 0 {
		t.Errorf("after 1000 additions and subtractions of 0.1: %d, want exactly 0", sum)
	}

	// The same through Resources, which is how the allocator uses it.
	tenth := MustParse("cpus:0.1;mem:0.1;foo:0.1")
	var r Resources
	for range 1000 {
		r = r.Add(tenth)
	}
	if want := MustParse("cpus:100;mem:100;foo:100"); !r.Equal(want) {
		t.Errorf("1000 * %v = %v, want %v", tenth, r, want)
	}
	for range 1000 {
		if !r.Contains(tenth) {
			t.Fatalf("%v does not contain %v", r, tenth)
		}
		r = r.Sub(tenth)
	}
	if !r.IsEmpty() {
		t.Errorf("after recoveries: %v, want empty", r)
	}
}
