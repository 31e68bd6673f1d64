package sim

import (
	"math"
	"sort"

	"github.com/allot-sched/allot/resources"
)

// Result is what one run measured. Times are seconds of virtual time
// counted from the first job's submission.
//
//   - Makespan: from the first submission to the last job's finish.
//   - JCT (job completion time): a job's finish minus its arrival (its
//     submit time, or its predecessor's finish for a job run After one).
//     Percentiles are nearest-rank.
//   - MeanWait: mean over jobs of arrival to first task launched.
//   - Utilization: per resource, the time average over the makespan of
//     what running tasks use divided by the cluster's capacity (offered
//     but unused resources do not count). For disk_bw and net_bw, use on
//     an agent is capped at its capacity: the contention model shares it.
//   - Jain: Jain's index (sum x)^2 / (n sum x^2) over the dominant shares x
//     of what running tasks of each framework with an unfinished job use,
//     sampled at the end of every series bucket and averaged over the
//     samples where some framework runs anything. ShareGap is the mean of
//     the largest minus the smallest of those shares.
//   - FluidBound: the fluid lower bound, total work over capacity
//     for each reservable resource, the largest (work = tasks x duration x
//     demand). LowerBound strengthens it, still a bound no schedule can
//     beat: the fluid bound from every arrival time on (a + work arriving
//     at or after a over capacity) and each job's chain of stages from its
//     arrival (critical path), the largest. LowerBoundRatio is Makespan /
//     LowerBound (>= 1; 1 is perfect).
type Result struct {
	Policy          string             `json:"policy"`
	Sorter          string             `json:"sorter"`
	Selection       string             `json:"agent_selection"`
	Mode            string             `json:"mode"`
	Seed            uint64             `json:"seed"`
	Jobs            int                `json:"jobs"`
	Tasks           int64              `json:"tasks"`
	Makespan        float64            `json:"makespan_s"`
	JCTP50          float64            `json:"jct_p50_s"`
	JCTP90          float64            `json:"jct_p90_s"`
	JCTP99          float64            `json:"jct_p99_s"`
	JCTMean         float64            `json:"jct_mean_s"`
	MeanWait        float64            `json:"mean_wait_s"`
	Utilization     map[string]float64 `json:"utilization"`
	Jain            float64            `json:"jain"`
	ShareGap        float64            `json:"share_gap"`
	FluidBound      float64            `json:"fluid_bound_s"`
	LowerBound      float64            `json:"lower_bound_s"`
	LowerBoundRatio float64            `json:"lower_bound_ratio"`
	Cycles          int                `json:"cycles"`
	Offers          int                `json:"offers"`
	Declines        int                `json:"declines"`
	// Roles is what each role got, in a run with a roles file (nil
	// otherwise).
	Roles []RoleStat `json:"roles,omitempty"`

	// Predicted is the size (MB x s) fspy's probe predicted for each job
	// it predicted, by job id; nil for other policies.
	Predicted map[string]float64 `json:"-"`

	// Series is utilisation and fairness over time; Jobs' details are in
	// JobStats. Neither goes into the JSON summary.
	Series   *Series   `json:"-"`
	JobStats []JobStat `json:"-"`
	// Preferences are the co-location bandit's learned preferences at the
	// end of the run (the bandit model's ExportPreferences); nil for other sorters.
	Preferences []byte `json:"-"`
}

// JobStat is one job's timeline.
type JobStat struct {
	ID, Framework         string
	Arrive, Start, Finish float64
	Tasks                 int64
}

// JCT is the job's completion time.
func (j JobStat) JCT() float64 { return j.Finish - j.Arrive }

// Series is the run's time series: bucket i covers [T0 + i*Width,
// T0 + (i+1)*Width), relative to the first submission.
type Series struct {
	Width float64
	// Kinds names the columns of Util ("cpus", "mem", ...).
	Kinds []string
	// Util[i][k] is the mean utilisation of resource Kinds[k] in bucket i.
	Util [][]float64
	// Jain[i] is the index sampled at the end of bucket i (NaN when no
	// framework ran anything).
	Jain []float64
	// Frameworks[i] is the number of frameworks with an unfinished job at
	// the end of bucket i.
	Frameworks []int
}

type bucket struct {
	use  [resources.NumKinds]float64 // integral of use (units x s); bandwidths effective
	jain float64
	nfw  int
}

type metrics struct {
	t0, last, width float64
	cur             int
	buckets         []bucket
	kinds           []resources.Kind // reported kinds (capacity > 0)
	capacity        [resources.NumKinds]float64
	jainSum, gapSum float64
	jainN           int
	fluid, lower    float64
	cycles, offers  int
	declines        int
}

func (m *metrics) init(e *engine) {
	w := e.w
	m.t0 = math.Inf(1)
	lastSubmit := 0.0
	for i := range w.Jobs {
		m.t0 = math.Min(m.t0, w.Jobs[i].Submit)
		lastSubmit = math.Max(lastSubmit, w.Jobs[i].Submit)
	}
	for k := resources.Kind(0); k < resources.NumKinds; k++ {
		if k.Advisory() {
			m.capacity[k] = e.bwTotal[bwIndex(k)]
		} else {
			m.capacity[k] = e.total[k].Units()
		}
		if m.capacity[k] > 0 {
			m.kinds = append(m.kinds, k)
		}
	}
	m.fluid, m.lower = bounds(w, m.t0)
	m.width = e.cfg.SampleEvery
	if m.width <= 0 {
		m.width = niceWidth(math.Max(lastSubmit-m.t0+m.lower, e.iv) / 1000)
	}
	m.width = math.Max(m.width, 1e-3)
	m.last = m.t0
	m.buckets = []bucket{{}}
}

func bwIndex(k resources.Kind) int {
	if k == resources.NetBW {
		return 1
	}
	return 0
}

// niceWidth rounds w up to 1, 2 or 5 times a power of ten.
func niceWidth(w float64) float64 {
	if w <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(w)))
	for _, f := range []float64{1, 2, 5, 10} {
		if f*p >= w {
			return f * p
		}
	}
	return 10 * p
}

// accrue integrates the current state from m.last to t, closing buckets
// (and sampling fairness) at their boundaries.
func (m *metrics) accrue(e *engine, t float64) {
	for t > m.last {
		end := m.t0 + float64(m.cur+1)*m.width
		seg := math.Min(t, end) - m.last
		b := &m.buckets[m.cur]
		for k := resources.Kind(0); k < resources.NumKinds; k++ {
			if k.Advisory() {
				b.use[k] += e.clusterE[bwIndex(k)] * seg
			} else if e.clusterU[k] != 0 {
				b.use[k] += e.clusterU[k].Units() * seg
			}
		}
		if t >= end {
			m.last = end
			m.sample(e, b)
			m.cur++
			m.buckets = append(m.buckets, bucket{})
		} else {
			m.last = t
		}
	}
}

// sample records Jain's index over the active frameworks' dominant shares.
func (m *metrics) sample(e *engine, b *bucket) {
	b.nfw = len(e.activeFws)
	b.jain = math.NaN()
	var sum, sq float64
	lo, hi := math.Inf(1), 0.0
	for _, fi := range e.activeFws {
		f := e.fws[fi]
		x := f.used.DominantShare(e.total) / f.weight
		sum += x
		sq += x * x
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if sq > 0 {
		b.jain = sum * sum / (float64(len(e.activeFws)) * sq)
		m.jainSum += b.jain
		m.gapSum += hi - lo
		m.jainN++
	}
}

// close ends the last (partial) bucket at the current time.
func (m *metrics) close(e *engine) {
	m.accrue(e, e.now)
	if m.last > m.t0+float64(m.cur)*m.width {
		m.sample(e, &m.buckets[m.cur])
	} else {
		m.buckets = m.buckets[:m.cur]
	}
}

// bounds returns the plain fluid bound (total work over capacity, the
// largest over reservable resources) and the strengthened lower bound
// (fluid from every arrival on, and critical paths), relative to t0.
func bounds(w *Workload, t0 float64) (fluid, lower float64) {
	var capacity resources.Vector
	for _, n := range w.Nodes {
		capacity = capacity.Add(reservable(n.Total))
	}
	type arrival struct {
		t    float64
		work [resources.NumKinds]float64
	}
	arr := make([]arrival, len(w.Jobs))
	end := make(map[string]float64, len(w.Jobs))
	for i := range w.Jobs {
		j := &w.Jobs[i]
		start := j.Submit
		if j.After != "" {
			start = math.Max(start, end[j.After])
		}
		path := 0.0
		arr[i].t = j.Submit // After jobs arrive no earlier than Submit: still a bound
		for _, s := range j.Stages {
			longest := 0.0
			for _, g := range s.Groups {
				longest = math.Max(longest, g.Duration)
				for k := resources.Kind(0); k < resources.NumKinds; k++ {
					arr[i].work[k] += float64(g.Tasks) * g.Duration * g.Demand[k].Units()
				}
			}
			path += longest
		}
		end[j.ID] = start + path
		lower = math.Max(lower, start+path-t0)
	}
	sort.SliceStable(arr, func(a, b int) bool { return arr[a].t > arr[b].t })
	var suffix [resources.NumKinds]float64
	for i, a := range arr {
		for k := range suffix {
			suffix[k] += a.work[k]
		}
		if i+1 < len(arr) && arr[i+1].t == a.t {
			continue // all arrivals at this instant first
		}
		for k := resources.Kind(0); k < resources.NumKinds; k++ {
			if k.Advisory() || capacity[k] == 0 {
				continue
			}
			b := suffix[k] / capacity[k].Units()
			lower = math.Max(lower, a.t-t0+b)
			if i == len(arr)-1 {
				fluid = math.Max(fluid, b)
			}
		}
	}
	return fluid, lower
}

// result summarises the run.
func (e *engine) result() *Result {
	m := &e.m
	r := &Result{
		Policy: e.cfg.Policy.Label(), Sorter: e.cfg.Policy.Sorter.Name(), Selection: e.cfg.Policy.Selection.String(),
		Mode: e.cfg.Mode.String(), Seed: e.cfg.Seed, Jobs: len(e.jobs), Tasks: e.total64,
		Cycles: m.cycles, Offers: m.offers, Declines: m.declines,
		FluidBound: Round(m.fluid), LowerBound: Round(m.lower),
		Utilization: map[string]float64{},
	}
	jcts := make([]float64, 0, len(e.jobs))
	var waitSum, jctSum, last float64
	r.JobStats = make([]JobStat, 0, len(e.jobs))
	for i := range e.jobs {
		if e.sizes.isProbe(i) {
			r.Jobs--
			continue // fspy's probes are its cost, not the workload's jobs (probe.go)
		}
		j := &e.jobs[i]
		st := JobStat{ID: j.job.ID, Framework: j.job.Framework, Arrive: j.arrive - m.t0, Start: j.start - m.t0, Finish: j.finish - m.t0, Tasks: j.job.Tasks()}
		r.JobStats = append(r.JobStats, st)
		jcts = append(jcts, st.JCT())
		jctSum += st.JCT()
		waitSum += st.Start - st.Arrive
		last = math.Max(last, st.Finish)
	}
	r.Makespan = Round(last)
	r.Roles = e.roleStats(r.JobStats, last)
	r.Predicted = e.sizes.predictions(e)
	sort.Float64s(jcts)
	r.JCTP50, r.JCTP90, r.JCTP99 = Round(percentile(jcts, 50)), Round(percentile(jcts, 90)), Round(percentile(jcts, 99))
	if n := float64(len(jcts)); n > 0 {
		r.JCTMean, r.MeanWait = Round(jctSum/n), Round(waitSum/n)
	}
	var total [resources.NumKinds]float64
	s := &Series{Width: m.width, Util: make([][]float64, len(m.buckets)), Jain: make([]float64, len(m.buckets)), Frameworks: make([]int, len(m.buckets))}
	for _, k := range m.kinds {
		s.Kinds = append(s.Kinds, k.String())
	}
	for i, b := range m.buckets {
		row := make([]float64, len(m.kinds))
		span := math.Min(m.width, m.last-(m.t0+float64(i)*m.width)) // the last bucket may be partial
		for c, k := range m.kinds {
			total[k] += b.use[k]
			if span > 0 {
				row[c] = b.use[k] / (m.capacity[k] * span)
			}
		}
		s.Util[i], s.Jain[i], s.Frameworks[i] = row, b.jain, b.nfw
	}
	for _, k := range m.kinds {
		u := 0.0
		if last > 0 {
			u = total[k] / (m.capacity[k] * last)
		}
		r.Utilization[k.String()] = Round(u)
	}
	r.Series = s
	r.Jain = 1
	if m.jainN > 0 {
		r.Jain, r.ShareGap = Round(m.jainSum/float64(m.jainN)), Round(m.gapSum/float64(m.jainN))
	}
	if r.LowerBound > 0 {
		r.LowerBoundRatio = Round(last / m.lower)
	}
	return r
}

// percentile is the nearest-rank percentile of sorted v.
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(v)))) - 1
	return v[max(0, min(i, len(v)-1))]
}

// Label names a run in tables and legends: policy and mode.
func (r *Result) Label() string {
	return r.Policy + " " + r.Mode
}
