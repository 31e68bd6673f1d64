package sim

import (
	"math"
	"sort"
)

// The summary statistics every report uses: one definition each, so two
// experiments that print "mean" or "sd" mean the same thing.

// Mean is the arithmetic mean of v; 0 for none.
func Mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// StdDev is the sample standard deviation (n-1), as the papers' tables
// report it; 0 for fewer than two values.
func StdDev(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m, s := Mean(v), 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)-1))
}

// Median is the middle of v (the mean of the two middle values when their
// number is even; 0 for none); v is not changed.
func Median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Round keeps six decimals after the point: enough for any reading, and
// stable text in the JSON.
func Round(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*1e6) / 1e6
}
