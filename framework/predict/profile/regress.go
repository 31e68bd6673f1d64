package profile

import "math"

// leastSquares solves min ||X b - y|| by the normal equations with
// partial pivoting. It reports false when X'X is (numerically) singular:
// the runs do not pin down every coefficient, and the caller falls back.
// The systems are 4x4 and the features O(1..20), so the normal equations'
// squared condition number is harmless here.
func leastSquares(xs [][]float64, y []float64) ([]float64, bool) {
	n := len(xs[0])
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
	}
	for r, x := range xs {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				a[i][j] += x[i] * x[j]
			}
			a[i][n] += x[i] * y[r]
		}
	}
	scale := 0.0
	for i := range a {
		scale = math.Max(scale, math.Abs(a[i][i]))
	}
	for col := 0; col < n; col++ {
		piv := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) <= 1e-10*scale {
			return nil, false
		}
		a[col], a[piv] = a[piv], a[col]
		for r := 0; r < n; r++ {
			if r == col {
				continue
			}
			f := a[r][col] / a[col][col]
			for c := col; c <= n; c++ {
				a[r][c] -= f * a[col][c]
			}
		}
	}
	b := make([]float64, n)
	for i := range b {
		b[i] = a[i][n] / a[i][i]
	}
	return b, true
}
