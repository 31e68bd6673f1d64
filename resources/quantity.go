package resources

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Quantity is a scalar amount in thousandths (fixed point, three decimals).
// Mesos rounds scalars to three decimals for the same reason: float sums drift.
type Quantity int64

// Scale is the number of Quantity units in one whole unit.
const Scale = 1000

// maxQuantity bounds parsed values so that sums of many agents cannot
// overflow int64: 2^63 / 1e3 / 1e6 agents, about 9.2e9 units (9.2 PB of mem
// or disk in MB). It used to be 2^52 units, which contradicted this comment
// (2^52 units is 4.5e18 thousandths, so three such values overflowed int64)
// and exceeded float64's exact-integer range, so String/Parse did not round
// trip large values. Below the bound every Quantity is under 2^44 and
// converts to and from float64 text exactly.
const maxQuantity = float64(math.MaxInt64 / Scale / 1_000_000)

// QuantityFromFloat converts v to fixed point, rounding to the nearest
// thousandth. It rejects NaN, infinities, negative values and absurdly
// large ones with an error that says which.
func QuantityFromFloat(v float64) (Quantity, error) {
	switch {
	case math.IsNaN(v):
		return 0, fmt.Errorf("value is NaN")
	case math.IsInf(v, 0):
		return 0, fmt.Errorf("value is infinite")
	case v < 0:
		return 0, fmt.Errorf("value %v is negative", v)
	case v > maxQuantity:
		return 0, fmt.Errorf("value %v is too large", v)
	}
	return Quantity(math.Round(v * Scale)), nil
}

// Units returns whole units as a float64 (for display, JSON and Mesos protos).
func (q Quantity) Units() float64 { return float64(q) / Scale }

// Ratio returns q/d as a float64; zero when d is zero.
func (q Quantity) Ratio(d Quantity) float64 {
	if d == 0 {
		return 0
	}
	return float64(q) / float64(d)
}

// String prints q with at most three decimals and no trailing zeros.
func (q Quantity) String() string {
	return strconv.FormatFloat(q.Units(), 'f', -1, 64)
}

// ParseQuantity parses a decimal string such as "0.5" or "4096".
func ParseQuantity(s string) (Quantity, error) {
	v, err := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) {
		// "1e400" is a number, just beyond float64: say what is wrong with
		// it rather than "not a number".
		if v < 0 {
			return 0, fmt.Errorf("%q: value is negative", s)
		}
		return 0, fmt.Errorf("%q: value is too large", s)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	q, err := QuantityFromFloat(v)
	if err != nil {
		return 0, fmt.Errorf("%q: %v", s, err)
	}
	return q, nil
}

// addBounded returns a+b for values that were each parsed within bounds,
// rejecting a sum above the same bound: repeated entries ("cpus:9e9;cpus:9e9")
// are one amount, and without the check enough of them would overflow int64.
func addBounded(a, b Quantity) (Quantity, error) {
	if s := a + b; s <= Quantity(maxQuantity*Scale) {
		return s, nil
	}
	return 0, fmt.Errorf("total %v is too large", a.Units()+b.Units())
}
