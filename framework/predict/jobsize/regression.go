package jobsize

import "math"

// Regression is FSPY's predictor: the map model (eq. 6) and the reduce model
// (ReduceTerms) fitted by generalized least squares over the jobs observed
// so far, refitted after each one (Observe), and combined into a size by
// eq. 5.
//
// The covariance. The paper cites GLS but does not say which error
// covariance it assumes. Ours is diagonal and grouped by job size: a job's
// error comes from per-byte costs and skew that scale with the job (a
// 2,000-task job is not off by the same seconds as a one-task job), so the
// errors are heteroscedastic, and ordinary least squares would let the few
// largest jobs dictate the fit and leave small jobs badly predicted, which
// the paper notes of its own small jobs. Each job goes into the group of
// the octave of its phase's probed function time (floor(log2 MFE) for the
// map model, of RFE for the reduce model; the part of the job a probe
// sees, so the grouping is fixed before the outcome is known and does not
// bias the fit). Every refit estimates each group's error variance from the
// residuals of the previous fit, shrunk towards the pooled variance for
// groups with few jobs, and refits weighted by their inverses: iterated
// feasible GLS (see gls). The groups keep sufficient statistics only, so a
// refit after the thousandth job costs what it cost after the tenth.
//
// Map-only jobs (no reduces) train the map model only; their predicted
// reduce time is 0. A job's predicted map time feeds the reduce model's SE_m
// term; training uses the measured one.
type Regression struct {
	// MinJobs is how many observed jobs a model needs before it predicts:
	// fewer and Predict says ok = false (the scheduler then serves the job
	// fairly, as FSPY serves a job whose size is unknown). Zero means
	// DefaultMinJobs.
	MinJobs int

	mapM, redM *gls
}

// DefaultMinJobs is ten jobs: the reduce model's eight coefficients and two
// residual degrees of freedom, so the first fit is a regression and not an
// interpolation through the points.
const DefaultMinJobs = 10

// NewRegression returns an untrained regression with DefaultMinJobs (as
// does a zero Regression).
func NewRegression() *Regression { return &Regression{} }

// models returns the two models, creating them on first use so that a
// zero Regression works.
func (r *Regression) models() (mapM, redM *gls) {
	if r.mapM == nil {
		r.mapM = newGLS(len(MapTerms(JobFeatures{})))
		r.redM = newGLS(len(ReduceTerms(JobFeatures{}, 0)))
	}
	return r.mapM, r.redM
}

var _ Predictor = (*Regression)(nil)

func (r *Regression) minJobs() int {
	if r.MinJobs > 0 {
		return r.MinJobs
	}
	return DefaultMinJobs
}

func (r *Regression) ready(m *gls) bool { return m.n >= r.minJobs() && m.beta != nil }

// PredictPhases returns the predicted total map and reduce task times
// (SE_m, SE_r, seconds, each at least 0); ok is false while a model the job
// needs has too little history.
func (r *Regression) PredictPhases(f JobFeatures) (a Actual, ok bool) {
	mapM, redM := r.models()
	if !r.ready(mapM) {
		return Actual{}, false
	}
	a.MapSeconds = math.Max(0, mapM.predict(MapTerms(f)))
	if f.ReduceTasks > 0 {
		if !r.ready(redM) {
			return Actual{}, false
		}
		a.ReduceSeconds = math.Max(0, redM.predict(ReduceTerms(f, a.MapSeconds)))
	}
	if math.IsNaN(a.MapSeconds+a.ReduceSeconds) || math.IsInf(a.MapSeconds+a.ReduceSeconds, 0) {
		return Actual{}, false // features out of any sane range
	}
	return a, true
}

// Predict is the job's predicted size in MB x s (eq. 5).
func (r *Regression) Predict(f JobFeatures) (float64, bool) {
	a, ok := r.PredictPhases(f)
	if !ok {
		return 0, false
	}
	return f.Size(a), true
}

// Observe adds a finished job and refits the models it trained. A job
// with a negative, NaN or infinite feature or time is ignored: the models
// keep running sums, which one such value would spoil for good.
func (r *Regression) Observe(f JobFeatures, a Actual) {
	mapM, redM := r.models()
	mx, rx := MapTerms(f), ReduceTerms(f, a.MapSeconds)
	if !sane(mx) || !sane(rx) || !sane([]float64{a.MapSeconds, a.ReduceSeconds, float64(f.ReduceTasks)}) {
		return
	}
	mapM.add(mx, a.MapSeconds, sizeGroup(f.MapFuncSeconds))
	mapM.fit()
	if f.ReduceTasks == 0 {
		return
	}
	redM.add(rx, a.ReduceSeconds, sizeGroup(f.ReduceFuncSeconds))
	redM.fit()
}

// sane reports whether every value is finite and >= 0.
func sane(v []float64) bool {
	for _, x := range v {
		if !(x >= 0) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// sizeGroup is the GLS group of a job whose probed function time is
// seconds: its octave, floor(log2 seconds), with everything under 2 s in
// group 0 and everything from 2^maxGroup s on in group maxGroup.
func sizeGroup(seconds float64) int {
	if !(seconds >= 2) {
		return 0
	}
	return min(maxGroup, int(math.Floor(math.Log2(seconds))))
}

// Jobs returns how many jobs trained the map and the reduce model.
func (r *Regression) Jobs() (mapJobs, reduceJobs int) {
	mapM, redM := r.models()
	return mapM.n, redM.n
}

// Coefficients returns the current fits (alpha_0..alpha_6 of eq. 6 and
// beta_0..beta_7 of ReduceTerms; nil before a model's first fit). A column
// the data never varied, or that repeats others, gets 0.
func (r *Regression) Coefficients() (mapCoef, reduceCoef []float64) {
	mapM, redM := r.models()
	return append([]float64(nil), mapM.beta...), append([]float64(nil), redM.beta...)
}
