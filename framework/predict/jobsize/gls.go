package jobsize

import "math"

// gls is a linear model y = x'beta + e fitted by feasible generalized least
// squares with a grouped diagonal covariance: every observation carries a
// group (Regression uses the octave of the job's size proxy), errors are
// independent, and all errors of group k share a variance sigma_k^2. GLS
// with that covariance is least squares weighted by 1/sigma_k^2; the
// sigma_k^2 are unknown and are estimated from the fit's own residuals,
// alternating with the fit (iterated FGLS).
//
// It keeps only sufficient statistics, per group: A_k = sum x x', b_k =
// sum x y, yy_k = sum y^2 and n_k. Both the weighted normal equations
// (sum_k w_k A_k, sum_k w_k b_k) and each group's residual sum of squares
// (yy_k - 2 beta'b_k + beta'A_k beta) follow from them, so observing a job
// is O(p^2), a refit is O(K p^2 + p^3) for K groups, whatever the number of
// jobs, and no history is stored.
//
// Groups are visited in index order, never in map order, so that the same
// observations give the same coefficients bit for bit (the simulator's
// runs must repeat exactly).
type gls struct {
	p      int
	groups []*glsGroup // by group index, 0..maxGroup; nil when empty
	n      int         // rows added
	beta   []float64   // last fit; nil before any
	rank   int         // columns the last fit used
	sigma2 []float64   // each group's variance in the last reweighting
}

// maxGroup is the largest group index; add clamps to 0..maxGroup.
const maxGroup = 40

type glsGroup struct {
	a  []float64 // p x p, row-major
	b  []float64
	yy float64
	n  int
}

func newGLS(p int) *gls {
	return &gls{p: p, groups: make([]*glsGroup, maxGroup+1)}
}

// add accumulates row x with response y in group g.
func (m *gls) add(x []float64, y float64, g int) {
	g = max(0, min(maxGroup, g))
	c := m.groups[g]
	if c == nil {
		c = &glsGroup{a: make([]float64, m.p*m.p), b: make([]float64, m.p)}
		m.groups[g] = c
	}
	for i, xi := range x {
		if xi == 0 {
			continue
		}
		c.b[i] += xi * y
		row := c.a[i*m.p:]
		for j, xj := range x {
			row[j] += xi * xj
		}
	}
	c.yy += y * y
	c.n++
	m.n++
}

const (
	// fglsRounds is how many times the variances are re-estimated: the
	// first fit is ordinary least squares; two re-weightings settle it.
	fglsRounds = 3
	// priorJobs shrinks each group's variance towards the pooled one as if
	// the group had that many more jobs with the pooled variance: a group
	// of one or two jobs (whose residuals the fit has nearly absorbed)
	// cannot claim a tiny variance and with it the whole fit.
	priorJobs = 4
)

// fit refits beta by iterated feasible GLS. It returns false when no
// column is usable (no data).
func (m *gls) fit() bool {
	w := make([]float64, len(m.groups))
	for k := range w {
		w[k] = 1
	}
	for round := range fglsRounds {
		a, b := make([]float64, m.p*m.p), make([]float64, m.p)
		for k, c := range m.groups {
			if c == nil {
				continue
			}
			for i := range c.a {
				a[i] += w[k] * c.a[i]
			}
			for i := range c.b {
				b[i] += w[k] * c.b[i]
			}
		}
		beta, rank := solve(m.p, a, b)
		if rank == 0 {
			return false
		}
		m.beta, m.rank = beta, rank
		if round == fglsRounds-1 || !m.reweight(w) {
			break
		}
	}
	return true
}

// reweight sets w to 1/sigma_k^2 from the current fit's residuals, each
// group's variance shrunk towards the pooled one. It returns false when
// the fit is exact (nothing to weigh: any weights give the same beta).
func (m *gls) reweight(w []float64) bool {
	rss := make([]float64, len(m.groups))
	var total, yy float64
	for k, c := range m.groups {
		if c == nil {
			continue
		}
		r := c.yy
		for i := range m.p {
			r -= 2 * m.beta[i] * c.b[i]
			var ai float64
			for j := range m.p {
				ai += c.a[i*m.p+j] * m.beta[j]
			}
			r += m.beta[i] * ai
		}
		rss[k] = math.Max(0, r)
		total += rss[k]
		yy += c.yy
	}
	pooled := total / float64(m.n)
	if pooled <= 1e-12*yy/float64(m.n) {
		return false
	}
	m.sigma2 = make([]float64, len(m.groups))
	for k, c := range m.groups {
		if c == nil {
			continue
		}
		s2 := (rss[k] + priorJobs*pooled) / (float64(c.n) + priorJobs)
		m.sigma2[k] = s2
		w[k] = 1 / s2
	}
	return true
}

// pivotTol is how small, relative to a column's own weighted sum of
// squares, the part of it not explained by the earlier columns may be
// before the column is dropped as collinear (or absent: a feature a
// workload never has, such as record counts in SWIM).
const pivotTol = 1e-10

// solve solves the p x p normal equations a beta = b by Cholesky after
// scaling a to a unit diagonal (Jacobi scaling: features range from counts
// to megabytes). A column whose pivot falls below pivotTol is dropped: its
// coefficient is 0 and the rest is the least-squares fit on the columns
// kept, as if the dropped one had never been in the model. rank counts the
// columns kept.
func solve(p int, a, b []float64) (beta []float64, rank int) {
	d := make([]float64, p)
	for i := range p {
		if aii := a[i*p+i]; aii > 0 {
			d[i] = 1 / math.Sqrt(aii)
		}
	}
	l := make([]float64, p*p) // lower triangle of the scaled factor
	keep := make([]bool, p)
	for j := range p {
		if d[j] == 0 {
			continue
		}
		s := a[j*p+j] * d[j] * d[j]
		for k := range j {
			s -= l[j*p+k] * l[j*p+k]
		}
		if s <= pivotTol {
			continue // dropped columns leave zeros in l: later ones ignore them
		}
		keep[j] = true
		rank++
		ljj := math.Sqrt(s)
		l[j*p+j] = ljj
		for i := j + 1; i < p; i++ {
			v := a[i*p+j] * d[i] * d[j]
			for k := range j {
				v -= l[i*p+k] * l[j*p+k]
			}
			l[i*p+j] = v / ljj
		}
	}
	z := make([]float64, p) // L z = D b
	for i := range p {
		if keep[i] {
			v := b[i] * d[i]
			for k := range i {
				v -= l[i*p+k] * z[k]
			}
			z[i] = v / l[i*p+i]
		}
	}
	beta = make([]float64, p) // L' u = z, beta = D u
	for i := p - 1; i >= 0; i-- {
		if keep[i] {
			v := z[i]
			for k := i + 1; k < p; k++ {
				v -= l[k*p+i] * beta[k]
			}
			beta[i] = v / l[i*p+i]
		}
	}
	for i := range beta {
		beta[i] *= d[i]
	}
	return beta, rank
}

// predict is x'beta with the last fit.
func (m *gls) predict(x []float64) float64 {
	var y float64
	for i, xi := range x {
		y += m.beta[i] * xi
	}
	return y
}
