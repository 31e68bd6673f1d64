package fspy

import (
	"fmt"
	"math"
	"sort"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sim"
)

// The FSPY paper's metrics (papers/fspy-size-based-yarn.md, section IV.C),
// computed from runs' JobStats, for `allot experiment fspy`:
//
//   - response time: a job's JCT (finish minus arrival); MeanResponse and
//     ECDF;
//   - common slowdown: a job's JCT over its JCT alone on the cluster
//     (AloneTimes), CommonSlowdowns;
//   - fair slowdown: a job's JCT under a policy over its JCT under fair
//     scheduling, jobs paired by id across the two runs, FairSlowdowns;
//   - prediction R^2 over predicted and actual sizes, sim.PredictionR2;
//   - the paper's workload method: windows of consecutive jobs (Windows),
//     each with an offered load (OfferedLoad), grouped by load
//     (GroupByLoad) as the paper groups by RCP.

// MeanResponse is the mean JCT of the jobs (0 for none).
func MeanResponse(stats []sim.JobStat) float64 {
	if len(stats) == 0 {
		return 0
	}
	var s float64
	for _, j := range stats {
		s += j.JCT()
	}
	return s / float64(len(stats))
}

// JCTs returns the jobs' completion times, in the order given.
func JCTs(stats []sim.JobStat) []float64 {
	out := make([]float64, len(stats))
	for i, j := range stats {
		out[i] = j.JCT()
	}
	return out
}

// ECDFPoint is one step of an empirical CDF: a fraction Y of the values
// are <= X.
type ECDFPoint struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// ECDF is the empirical CDF of values: one point per distinct value, in
// increasing order, Y the fraction of values <= X (the last point has
// Y = 1). NaNs are left out.
func ECDF(values []float64) []ECDFPoint {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	sort.Float64s(v)
	var out []ECDFPoint
	for i, x := range v {
		y := float64(i+1) / float64(len(v))
		if n := len(out); n > 0 && out[n-1].X == x {
			out[n-1].Y = y
			continue
		}
		out = append(out, ECDFPoint{X: x, Y: y})
	}
	return out
}

// FractionAtMost is the fraction of values <= x (0 for no values).
func FractionAtMost(values []float64, x float64) float64 {
	if len(values) == 0 {
		return 0
	}
	n := 0
	for _, v := range values {
		if v <= x {
			n++
		}
	}
	return float64(n) / float64(len(values))
}

// JobRatio is one job's slowdown.
type JobRatio struct {
	ID    string
	Value float64
}

// Values returns the ratios' values, in order.
func Values(r []JobRatio) []float64 {
	out := make([]float64, len(r))
	for i, x := range r {
		out[i] = x.Value
	}
	return out
}

// AloneTimes returns every job's JCT when it runs alone on w's cluster:
// each job is simulated by itself (submitted at 0, with no After) under
// cfg, so the alone time sees what the loaded run sees apart from other
// jobs (the allocation interval's ticks, the offer and filter machinery,
// bandwidth contention among its own tasks) and a common slowdown is >= 1
// up to the phase of the allocation ticks. An analytic alone time (the
// paper's minE, eq. 4) would ignore those and make even an uncontended
// small job look slowed. cfg's Observer and Progress are not used.
func AloneTimes(w *sim.Workload, cfg sim.Config) (map[string]float64, error) {
	cfg.Observer, cfg.Progress = nil, nil
	out := make(map[string]float64, len(w.Jobs))
	for i := range w.Jobs {
		j := w.Jobs[i]
		j.Submit, j.After = 0, ""
		r, err := sim.Run(&sim.Workload{Name: w.Name + "/" + j.ID, Jobs: []sim.Job{j}, Nodes: w.Nodes}, cfg)
		if err != nil {
			return nil, fmt.Errorf("job %q alone: %w", j.ID, err)
		}
		out[j.ID] = r.JobStats[0].JCT()
	}
	return out, nil
}

// CommonSlowdowns is each job's JCT over its alone time, in stats' order.
// A job without a positive alone time is an error.
func CommonSlowdowns(stats []sim.JobStat, alone map[string]float64) ([]JobRatio, error) {
	out := make([]JobRatio, len(stats))
	for i, j := range stats {
		a, ok := alone[j.ID]
		if !ok || !(a > 0) {
			return nil, fmt.Errorf("job %q: no alone time", j.ID)
		}
		out[i] = JobRatio{ID: j.ID, Value: j.JCT() / a}
	}
	return out, nil
}

// FairSlowdowns is each job's JCT under a policy over its JCT under fair
// scheduling, pairing the jobs of the two runs by id; in policy's order.
// The runs must hold the same jobs.
func FairSlowdowns(policy, fair []sim.JobStat) ([]JobRatio, error) {
	if len(policy) != len(fair) {
		return nil, fmt.Errorf("fair slowdown: %d jobs against %d under fair", len(policy), len(fair))
	}
	byID := make(map[string]float64, len(fair))
	for _, j := range fair {
		byID[j.ID] = j.JCT()
	}
	out := make([]JobRatio, len(policy))
	for i, j := range policy {
		f, ok := byID[j.ID]
		if !ok {
			return nil, fmt.Errorf("fair slowdown: job %q did not run under fair", j.ID)
		}
		if !(f > 0) {
			return nil, fmt.Errorf("fair slowdown: job %q took %v s under fair", j.ID, f)
		}
		out[i] = JobRatio{ID: j.ID, Value: j.JCT() / f}
	}
	return out, nil
}

// SlowdownSummary is what the paper reads off a slowdown ECDF.
type SlowdownSummary struct {
	Jobs   int     `json:"jobs"`
	LE1    float64 `json:"le_1"`   // fraction of jobs with slowdown <= 1
	LE1p5  float64 `json:"le_1_5"` // <= 1.5
	Below4 float64 `json:"lt_4"`   // < 4 (the common slowdown figure)
	Mean   float64 `json:"mean"`
	Max    float64 `json:"max"`
}

// Summarize reads the summary off slowdowns.
func Summarize(r []JobRatio) SlowdownSummary {
	s := SlowdownSummary{Jobs: len(r)}
	if len(r) == 0 {
		return s
	}
	v := Values(r)
	s.LE1, s.LE1p5 = FractionAtMost(v, 1), FractionAtMost(v, 1.5)
	below := 0
	for _, x := range v {
		s.Mean += x
		s.Max = math.Max(s.Max, x)
		if x < 4 {
			below++
		}
	}
	s.Mean /= float64(len(v))
	s.Below4 = float64(below) / float64(len(v))
	return s
}

// The paper's windows: segments of 200 consecutive jobs, adjacent ones
// overlapping by 50 (FB-2009's 5,894 jobs give 38 full windows; the paper
// counts 37 and does not say which it left out).
const (
	SWIMWindowJobs    = 200
	SWIMWindowOverlap = 50
)

// Window is a segment of a workload's jobs.
type Window struct {
	ID int `json:"id"`
	// First is the index in the workload of the window's first job.
	First int `json:"first"`
	// Jobs are the window's jobs; an After naming a job outside the window
	// is dropped (that job is taken as done).
	Jobs []sim.Job `json:"-"`
	// Load is the window's offered load on the cluster (OfferedLoad).
	Load float64 `json:"load"`
}

// Windows cuts jobs (in submission order) into windows of size jobs,
// each starting size-overlap jobs after the previous one, and computes
// each window's offered load on nodes. Only full windows are returned: a
// short tail would be a lighter workload by construction.
func Windows(jobs []sim.Job, nodes []sim.Node, size, overlap int) ([]Window, error) {
	if size < 2 || overlap < 0 || overlap >= size {
		return nil, fmt.Errorf("windows of %d jobs overlapping by %d: want size >= 2 and 0 <= overlap < size", size, overlap)
	}
	var out []Window
	for first := 0; first+size <= len(jobs); first += size - overlap {
		ws := append([]sim.Job(nil), jobs[first:first+size]...)
		in := make(map[string]bool, size)
		for i := range ws {
			if ws[i].After != "" && !in[ws[i].After] {
				ws[i].After = ""
			}
			in[ws[i].ID] = true
		}
		out = append(out, Window{ID: len(out), First: first, Jobs: ws, Load: OfferedLoad(ws, nodes)})
	}
	return out, nil
}

// OfferedLoad is the memory the jobs ask for per second of their arrival
// span over the cluster's memory: sum_i S_i / (n x gap x CR), with S_i the
// job's size in MB x s (JobSize), n the number of jobs, gap their mean
// inter-arrival time ((last submit - first submit) / (n - 1)) and CR the
// cluster's memory in MB. It is the argument of the logarithm in the
// paper's RCP (eq. 11), sum S_i / (sum I_i x CR), with the sum of the n
// inter-arrival times I_i taken as n mean gaps (the window's first gap
// reaches back outside it); the paper's alpha and beta are not given, so
// we report the ratio itself. It is memory-only because the paper measures
// sizes and capacity in memory; above 1 the jobs ask for more memory-time
// than the cluster has while they arrive. +Inf when all arrive at once.
func OfferedLoad(jobs []sim.Job, nodes []sim.Node) float64 {
	if len(jobs) == 0 {
		return 0
	}
	var work float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range jobs {
		work += sim.JobSize(&jobs[i])
		lo, hi = math.Min(lo, jobs[i].Submit), math.Max(hi, jobs[i].Submit)
	}
	var mem float64
	for _, n := range nodes {
		mem += n.Total[resources.Mem].Units()
	}
	n := float64(len(jobs))
	if n < 2 || hi <= lo || mem <= 0 {
		return math.Inf(1)
	}
	return work / (n * (hi - lo) / (n - 1) * mem)
}

// LoadGroup is the windows whose loads fall in one octave, [2^Level,
// 2^(Level+1)): the paper's RCP groups with alpha = 1/ln 2, beta = 0 and
// RCP rounded down, RCP = floor(log2 load).
type LoadGroup struct {
	Level int `json:"level"`
	// Lo and Hi bound the octave; Mean is the mean load of its windows.
	Lo      float64 `json:"load_lo"`
	Hi      float64 `json:"load_hi"`
	Mean    float64 `json:"load_mean"`
	Windows []int   `json:"windows"` // Window.IDs
}

// GroupByLoad groups windows by the octave of their load, lightest group
// first. Windows with zero or infinite load are left out.
func GroupByLoad(ws []Window) []LoadGroup {
	byLevel := map[int]*LoadGroup{}
	var levels []int
	for _, w := range ws {
		if !(w.Load > 0) || math.IsInf(w.Load, 0) {
			continue
		}
		l := int(math.Floor(math.Log2(w.Load)))
		g := byLevel[l]
		if g == nil {
			g = &LoadGroup{Level: l, Lo: math.Ldexp(1, l), Hi: math.Ldexp(1, l+1)}
			byLevel[l] = g
			levels = append(levels, l)
		}
		g.Windows = append(g.Windows, w.ID)
		g.Mean += w.Load
	}
	sort.Ints(levels)
	out := make([]LoadGroup, 0, len(levels))
	for _, l := range levels {
		g := byLevel[l]
		g.Mean /= float64(len(g.Windows))
		out = append(out, *g)
	}
	return out
}
