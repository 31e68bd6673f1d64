package fsp

import "math"

// vraDRF is VRA over cpus and memory by dominant resource fairness, for
// sorter.FSP.DRF (beyond the paper, which shares memory alone): every job
// in the virtual cluster gets a fraction x_j <= 1 of its APB vector
// (APB MB, APBCPUs cpus), the same dominant share s for every job not
// capped at its whole APB: x_j = min(1, s / d_j), d_j its APB's dominant
// share of the cluster. s is the largest level at which no resource is
// over-committed, found by bisection (the water level of progressive
// filling when every job asks for both resources). A job that declared
// no cpus is sized by memory alone. Its virtual resource VR is then
// x_j x APB MB, and VSC goes on in memory as before: the job's virtual
// size shrinks at VR - AM.
func (m *Model) vraDRF() {
	q, mem, cpus := m.st.Queue, m.st.Total, m.st.TotalCPUs
	dom := func(j *vjob) float64 {
		d := j.APB / math.Max(mem, 1e-9)
		if cpus > 0 {
			d = math.Max(d, j.APBCPUs/cpus)
		}
		return d
	}
	fits := func(s float64) bool {
		var um, uc float64
		for _, j := range q {
			x := math.Min(1, s/dom(j))
			um += x * j.APB
			uc += x * j.APBCPUs
		}
		return um <= mem*(1+1e-12) && (cpus <= 0 || uc <= cpus*(1+1e-12))
	}
	var hi float64
	for _, j := range q {
		hi = math.Max(hi, dom(j))
	}
	s := hi
	if !fits(hi) {
		lo := 0.0
		for i := 0; i < 64; i++ {
			mid := (lo + hi) / 2
			if fits(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
		s = lo
	}
	for _, j := range q {
		j.VR = math.Min(1, s/dom(j)) * j.APB
	}
}
