package jobsize

import (
	"fmt"
	"math"
)

// JobFeatures is what is known of a job before it finishes: its
// configuration and, once a probe ran, the probe's counters scaled to the
// whole job. Sizes are in MB, times in seconds.
type JobFeatures struct {
	// ID names the job (Oracle and Noisy key on it).
	ID string

	// From the job's configuration.
	MapTasks, ReduceTasks int     // N_m, N_r
	MapMemMB, ReduceMemMB float64 // R_m, R_r: memory of one container
	InputMB               float64 // MI: total map input

	// From the probe, extrapolated to the whole job (eq. 8).
	MapFuncSeconds     float64 // MFE: total time in the map function
	MapOutputMB        float64 // MO: total map output (the reduces' input)
	MapOutputRecords   float64 // MOR
	ReduceFuncSeconds  float64 // RFE: total time in the reduce function
	ReduceOutputMB     float64 // RO
	ReduceInputRecords float64 // RIR
}

// Actual is what a finished job measured: the total execution time of all
// its map tasks and of all its reduce tasks (SE_m, SE_r in the paper), in
// seconds. The regression needs the two phases apart, since it fits one
// model per phase; a bare size would not do.
type Actual struct {
	MapSeconds, ReduceSeconds float64
}

// Size is the job's size in MB x s given its phase times (eq. 5).
func (f JobFeatures) Size(a Actual) float64 {
	return f.MapMemMB*a.MapSeconds + f.ReduceMemMB*a.ReduceSeconds
}

// Probe is what a probing job measured: the counters of a run over the
// fraction Fraction of the job's input (one map, one reduce, in uber mode
// in the paper).
type Probe struct {
	Fraction           float64 // f_p, in (0, 1]
	MapFuncSeconds     float64
	MapOutputMB        float64
	MapOutputRecords   float64
	ReduceFuncSeconds  float64
	ReduceOutputMB     float64
	ReduceInputRecords float64
}

// WithProbe returns f with the probe's counters extrapolated to the whole
// job, P_o = P_p / f_p (eq. 8). Configuration fields are kept: they are
// known without probing.
func (f JobFeatures) WithProbe(p Probe) (JobFeatures, error) {
	if !(p.Fraction > 0 && p.Fraction <= 1) {
		return f, fmt.Errorf("jobsize: probe fraction %v, want (0, 1]", p.Fraction)
	}
	for _, v := range []float64{p.MapFuncSeconds, p.MapOutputMB, p.MapOutputRecords, p.ReduceFuncSeconds, p.ReduceOutputMB, p.ReduceInputRecords} {
		if !(v >= 0) || math.IsInf(v, 0) {
			return f, fmt.Errorf("jobsize: probe counter %v, want a finite number >= 0", v)
		}
	}
	k := 1 / p.Fraction
	f.MapFuncSeconds, f.MapOutputMB, f.MapOutputRecords = p.MapFuncSeconds*k, p.MapOutputMB*k, p.MapOutputRecords*k
	f.ReduceFuncSeconds, f.ReduceOutputMB, f.ReduceInputRecords = p.ReduceFuncSeconds*k, p.ReduceOutputMB*k, p.ReduceInputRecords*k
	return f, nil
}

// SampleFraction is the fraction of its input a job's probe samples:
// 1 / max(maps, reduces), so neither the probe's one map nor its one reduce
// does more than a task of the job would (Algorithm 1, line 1).
func SampleFraction(maps, reduces int) float64 {
	return 1 / float64(max(1, maps, reduces))
}

// MapTerms is the design row of the map model, eq. 6:
//
//	SE_m = a0 + a1 N_m + a2 MI + a3 MFE + a4 MO + a5 MOR + a6 MOR ln MOR
func MapTerms(f JobFeatures) []float64 {
	return []float64{1, float64(f.MapTasks), f.InputMB, f.MapFuncSeconds, f.MapOutputMB,
		f.MapOutputRecords, xlogx(f.MapOutputRecords)}
}

// ReduceTerms is the design row of the reduce model. The paper prints eq. 7
// as a copy of eq. 6 but names its eight coefficients b0..b7 and its
// variables in the text (N_r, RFE, RO, RIR, and SE_m "involved as
// parameter" because early reduces wait for the maps); mirroring eq. 6 with
// the reduces' input MO in MI's place gives exactly eight terms:
//
//	SE_r = b0 + b1 N_r + b2 MO + b3 RFE + b4 RO + b5 RIR + b6 RIR ln RIR + b7 SE_m
//
// mapSeconds is SE_m: the measured value when training, the map model's
// prediction when predicting.
func ReduceTerms(f JobFeatures, mapSeconds float64) []float64 {
	return []float64{1, float64(f.ReduceTasks), f.MapOutputMB, f.ReduceFuncSeconds, f.ReduceOutputMB,
		f.ReduceInputRecords, xlogx(f.ReduceInputRecords), mapSeconds}
}

// xlogx is x ln x, taken as 0 for x <= 1 (no records, or one).
func xlogx(x float64) float64 {
	if x <= 1 {
		return 0
	}
	return x * math.Log(x)
}
