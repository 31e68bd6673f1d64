package jobsize

import (
	"math"

	"github.com/allot-sched/allot/internal/hashrand"
)

// Predictor estimates job sizes and may learn from finished jobs.
type Predictor interface {
	// Predict returns the job's size in MB x s; ok is false when the
	// predictor cannot tell yet (the job is then of unknown size).
	Predict(JobFeatures) (size float64, ok bool)
	// Observe reports a finished job's measured phase times.
	Observe(JobFeatures, Actual)
}

// Oracle knows every job's true size, by job id: the "fsp" baseline with
// perfect information. A job it does not know is of unknown size.
type Oracle map[string]float64

var _ Predictor = Oracle(nil)

// Predict returns the job's true size.
func (o Oracle) Predict(f JobFeatures) (float64, bool) {
	s, ok := o[f.ID]
	return s, ok
}

// Observe does nothing: an oracle has nothing to learn.
func (Oracle) Observe(JobFeatures, Actual) {}

// Noisy is another predictor with a multiplicative log-normal error: it
// predicts Base's size times exp(Sigma Z), Z standard normal. The error is
// median-unbiased and symmetric in ratio (doubling a size is as likely as
// halving it), the usual model of size-estimation error in the size-based
// scheduling literature; Sigma is the standard deviation of log(predicted /
// base). Z is a pure function of (Seed, job id): a job gets the same error
// every time it is asked about and in every run with the same seed, so
// policies compared on one seed see the same mistakes.
type Noisy struct {
	Base  Predictor
	Sigma float64
	Seed  uint64
}

var _ Predictor = (*Noisy)(nil)

// NewNoisy wraps base with a log-normal error of sigma.
func NewNoisy(base Predictor, sigma float64, seed uint64) *Noisy {
	return &Noisy{Base: base, Sigma: sigma, Seed: seed}
}

// Predict returns Base's size times the job's error factor.
func (n *Noisy) Predict(f JobFeatures) (float64, bool) {
	s, ok := n.Base.Predict(f)
	if !ok {
		return 0, false
	}
	return s * math.Exp(n.Sigma*hashrand.Normal(n.Seed, f.ID)), true
}

// Observe passes the job on to Base.
func (n *Noisy) Observe(f JobFeatures, a Actual) { n.Base.Observe(f, a) }

// R2 is the coefficient of determination of predicted against actual,
// 1 - SS_res / SS_tot: 1 for perfect predictions, 0 for predicting the
// mean, negative for worse. It is NaN with fewer than two values or when
// actual does not vary. It panics if the lengths differ.
func R2(actual, predicted []float64) float64 {
	if len(actual) != len(predicted) {
		panic("jobsize.R2: actual and predicted differ in length")
	}
	if len(actual) < 2 {
		return math.NaN()
	}
	var mean float64
	for _, y := range actual {
		mean += y
	}
	mean /= float64(len(actual))
	var res, tot float64
	for i, y := range actual {
		res += (y - predicted[i]) * (y - predicted[i])
		tot += (y - mean) * (y - mean)
	}
	if tot == 0 {
		return math.NaN()
	}
	return 1 - res/tot
}
