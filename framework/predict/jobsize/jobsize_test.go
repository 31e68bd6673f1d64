package jobsize

import (
	"math"
	"math/rand/v2"
	"testing"
)

var (
	trueAlpha = []float64{12, 5, 0.02, 1.1, 0.03, 2e-4, 1e-5}
	trueBeta  = []float64{8, 5, 0.1, 1.3, 0.05, 3e-4, 2e-5, 0.07}
)

// randomJob draws features independently so no column repeats another;
// records are left at 0 when noRecords (SWIM has none).
func randomJob(rng *rand.Rand, id int, noRecords bool) JobFeatures {
	f := JobFeatures{
		ID:       string(rune('a'+id%26)) + string(rune('0'+id/26%10)) + string(rune('A'+id/260)),
		MapTasks: 1 + rng.IntN(400), ReduceTasks: rng.IntN(40),
		MapMemMB: 1024, ReduceMemMB: 2048,
		InputMB: 1 + 5e4*rng.Float64(), MapFuncSeconds: 2000 * rng.Float64(), MapOutputMB: 2e4 * rng.Float64(),
		ReduceFuncSeconds: 1000 * rng.Float64(), ReduceOutputMB: 5e3 * rng.Float64(),
	}
	if !noRecords {
		f.MapOutputRecords, f.ReduceInputRecords = 1e6*rng.Float64(), 1e6*rng.Float64()
	}
	return f
}

// exactPhases is the noise-free truth: the models with the true coefficients.
func exactPhases(f JobFeatures) Actual {
	dot := func(c, x []float64) (s float64) {
		for i := range c {
			s += c[i] * x[i]
		}
		return s
	}
	a := Actual{MapSeconds: dot(trueAlpha, MapTerms(f))}
	if f.ReduceTasks > 0 {
		a.ReduceSeconds = dot(trueBeta, ReduceTerms(f, a.MapSeconds))
	}
	return a
}

func TestRegressionRecoversCoefficientsExactly(t *testing.T) {
	for _, tc := range []struct {
		name      string
		noRecords bool
		wantAlpha []float64
		wantBeta  []float64
	}{
		{"all features", false, trueAlpha, trueBeta},
		// a feature the workload never has is dropped: coefficient 0
		{"no record counts", true,
			[]float64{trueAlpha[0], trueAlpha[1], trueAlpha[2], trueAlpha[3], trueAlpha[4], 0, 0},
			[]float64{trueBeta[0], trueBeta[1], trueBeta[2], trueBeta[3], trueBeta[4], 0, 0, trueBeta[7]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			r := NewRegression()
			for i := range 60 {
				f := randomJob(rng, i, tc.noRecords)
				r.Observe(f, exactPhases(f))
			}
			alpha, beta := r.Coefficients()
			for i := range tc.wantAlpha {
				if !close(alpha[i], tc.wantAlpha[i], 1e-6) {
					t.Errorf("alpha_%d = %.9g, want %.9g", i, alpha[i], tc.wantAlpha[i])
				}
			}
			for i := range tc.wantBeta {
				if !close(beta[i], tc.wantBeta[i], 1e-6) {
					t.Errorf("beta_%d = %.9g, want %.9g", i, beta[i], tc.wantBeta[i])
				}
			}
			var actual, pred []float64
			for i := range 200 {
				f := randomJob(rng, 1000+i, tc.noRecords)
				s, ok := r.Predict(f)
				if !ok {
					t.Fatalf("trained regression cannot predict %+v", f)
				}
				actual, pred = append(actual, f.Size(exactPhases(f))), append(pred, s)
			}
			if r2 := R2(actual, pred); r2 < 1-1e-9 {
				t.Errorf("R^2 on fresh jobs %.12f, want 1", r2)
			}
		})
	}
}

// close compares relatively, absolutely near zero.
func close(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestRegressionNeedsHistory(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	r := &Regression{MinJobs: 5}
	withReduce := randomJob(rng, 0, false)
	withReduce.ReduceTasks = 3
	mapOnly := randomJob(rng, 1, false)
	mapOnly.ReduceTasks = 0
	if _, ok := r.Predict(withReduce); ok {
		t.Fatal("untrained regression predicts")
	}
	// four map-only jobs, then a fifth: the map model is ready, the reduce
	// model has seen nothing
	for i := range 5 {
		if _, ok := r.Predict(mapOnly); ok {
			t.Fatalf("predicts after %d jobs, MinJobs 5", i)
		}
		f := randomJob(rng, 10+i, false)
		f.ReduceTasks = 0
		r.Observe(f, exactPhases(f))
	}
	if s, ok := r.Predict(mapOnly); !ok || s <= 0 {
		t.Errorf("map-only job after 5 map-only jobs: %v %v, want a size", s, ok)
	}
	if _, ok := r.Predict(withReduce); ok {
		t.Error("predicts a job with reduces from a reduce model that saw none")
	}
	bad := randomJob(rng, 99, false)
	r.Observe(bad, Actual{MapSeconds: math.NaN()})
	bad.InputMB = math.Inf(1)
	r.Observe(bad, exactPhases(randomJob(rng, 98, false)))
	if m, red := r.Jobs(); m != 5 || red != 0 {
		t.Errorf("Jobs() = %d, %d; want 5, 0", m, red)
	}
	if NewRegression().minJobs() != DefaultMinJobs {
		t.Error("zero MinJobs is not the default")
	}
}

func TestGLSWeights(t *testing.T) {
	// a column of zeros is dropped, not a singular matrix
	m := newGLS(2)
	m.add([]float64{1, 0}, 4, 0)
	m.add([]float64{1, 0}, 6, 0)
	if !m.fit() || m.beta[0] != 5 || m.beta[1] != 0 || m.rank != 1 {
		t.Errorf("with an empty column: beta %v rank %d, want [5 0] 1", m.beta, m.rank)
	}
	if newGLS(2).fit() {
		t.Error("fit with no data")
	}
	// intercept only, two groups of 20: a quiet one around 10 (variance 1)
	// and a loud one around 20 (variance 400). OLS says 15; GLS weighs the
	// quiet group ~10x more and lands near 10 (10.9 after the shrinkage
	// towards the pooled variance).
	m = newGLS(1)
	for i := range 20 {
		m.add([]float64{1}, 9+2*float64(i%2), 0)
		m.add([]float64{1}, 40*float64(i%2), 1)
	}
	if !m.fit() || m.beta[0] < 10.5 || m.beta[0] > 11.5 {
		t.Errorf("grouped GLS mean %v, want about 10.9", m.beta)
	}
	if !(m.sigma2[0] < m.sigma2[1]/5) {
		t.Errorf("estimated variances %v: want group 0 far quieter", m.sigma2)
	}
}

// With multiplicative errors, GLS grouped by size predicts small jobs
// better than ordinary least squares, which the large jobs dominate.
func TestGLSBeatsOLSOnRelativeError(t *testing.T) {
	var sumGLS, sumOLS float64
	for seed := range uint64(8) {
		relGLS, relOLS := smallJobErrors(seed)
		sumGLS, sumOLS = sumGLS+relGLS, sumOLS+relOLS
		if relGLS > 1.05*relOLS {
			t.Errorf("seed %d: mean relative error on small jobs: GLS %.3f, OLS %.3f; want GLS no worse", seed, relGLS, relOLS)
		}
		t.Logf("seed %d: mean relative error on small jobs: GLS %.3f, OLS %.3f", seed, relGLS, relOLS)
	}
	if sumGLS > 0.8*sumOLS {
		t.Errorf("over 8 seeds GLS's relative error is %.0f%% of OLS's; want at most 80%%", 100*sumGLS/sumOLS)
	}
}

// smallJobErrors trains Regression and an unweighted fit on jobs whose map
// time has a 30 % multiplicative error, and returns their mean relative
// errors on small jobs.
func smallJobErrors(seed uint64) (relGLS, relOLS float64) {
	rng := rand.New(rand.NewPCG(5, seed))
	r := NewRegression()
	ols := newGLS(len(trueAlpha))
	for i := range 400 {
		f := randomJob(rng, i, true)
		f.InputMB = math.Exp(rng.Float64() * 10) // sizes over four orders of magnitude
		f.MapFuncSeconds = f.InputMB / 20
		f.MapTasks = 1 + int(f.InputMB/64)
		f.MapOutputMB = f.InputMB * rng.Float64() // output scales with input
		a := exactPhases(f)
		a.MapSeconds *= math.Exp(0.3 * rng.NormFloat64())
		r.Observe(f, a)
		ols.add(MapTerms(f), a.MapSeconds, 0)
	}
	ols.fit()
	ols.beta, _ = solve(ols.p, ols.groups[0].a, ols.groups[0].b) // one group: unweighted
	n := 0
	for i := range 300 {
		f := randomJob(rng, 2000+i, true)
		f.InputMB = math.Exp(rng.Float64() * 4) // small jobs
		f.MapFuncSeconds = f.InputMB / 20
		f.MapTasks = 1 + int(f.InputMB/64)
		f.MapOutputMB = f.InputMB * rng.Float64() // output scales with input
		want := exactPhases(f).MapSeconds
		got, _ := r.PredictPhases(f)
		relGLS += math.Abs(got.MapSeconds-want) / want
		relOLS += math.Abs(math.Max(0, ols.predict(MapTerms(f)))-want) / want
		n++
	}
	return relGLS / float64(n), relOLS / float64(n)
}

// The same jobs give the same coefficients, bit for bit.
func TestRegressionIsDeterministic(t *testing.T) {
	fit := func() ([]float64, []float64) {
		rng := rand.New(rand.NewPCG(9, 9))
		r := NewRegression()
		for i := range 300 {
			f := randomJob(rng, i, false)
			f.MapFuncSeconds = math.Exp(rng.Float64() * 12) // many groups
			a := exactPhases(f)
			a.MapSeconds *= math.Exp(0.3 * rng.NormFloat64())
			a.ReduceSeconds *= math.Exp(0.3 * rng.NormFloat64())
			r.Observe(f, a)
		}
		return r.Coefficients()
	}
	a1, b1 := fit()
	for range 5 {
		a2, b2 := fit()
		for i := range a1 {
			if a1[i] != a2[i] {
				t.Fatalf("alpha_%d: %v then %v", i, a1[i], a2[i])
			}
		}
		for i := range b1 {
			if b1[i] != b2[i] {
				t.Fatalf("beta_%d: %v then %v", i, b1[i], b2[i])
			}
		}
	}
}

func TestR2(t *testing.T) {
	y := []float64{1, 2, 3, 4}
	for _, tc := range []struct {
		name      string
		actual    []float64
		predicted []float64
		want      float64
	}{
		{"perfect", y, y, 1},
		{"the mean", y, []float64{2.5, 2.5, 2.5, 2.5}, 0},
		// SS_res = 4 x 0.25 = 1, SS_tot = 5
		{"off by a half", y, []float64{1.5, 2.5, 2.5, 4.5}, 0.8},
		{"worse than the mean", y, []float64{4, 3, 2, 1}, -3},
		{"no variance", []float64{2, 2}, []float64{1, 3}, math.NaN()},
		{"one value", []float64{2}, []float64{2}, math.NaN()},
	} {
		got := R2(tc.actual, tc.predicted)
		if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tc.want) > 1e-12) {
			t.Errorf("%s: R2 = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNoisySpreadMatchesSigma(t *testing.T) {
	const n = 20000
	oracle := Oracle{}
	for i := range n {
		oracle[idOf(i)] = 1000 + float64(i)
	}
	for _, sigma := range []float64{0.1, 0.5, 1} {
		p := NewNoisy(oracle, sigma, 42)
		var sum, sq float64
		for i := range n {
			f := JobFeatures{ID: idOf(i)}
			s, ok := p.Predict(f)
			if !ok {
				t.Fatal("noisy oracle cannot predict a known job")
			}
			if again, _ := p.Predict(f); again != s {
				t.Fatalf("job %s: %v then %v", f.ID, s, again)
			}
			l := math.Log(s / oracle[f.ID])
			sum += l
			sq += l * l
		}
		mean := sum / n
		sd := math.Sqrt(sq/n - mean*mean)
		// standard errors: sigma/sqrt(n) for the mean, sigma/sqrt(2n) for sd
		if math.Abs(mean) > 4*sigma/math.Sqrt(n) || math.Abs(sd-sigma) > 4*sigma/math.Sqrt(2*n) {
			t.Errorf("sigma %v: log error mean %.4f sd %.4f", sigma, mean, sd)
		}
	}
	a, _ := NewNoisy(oracle, 0.5, 1).Predict(JobFeatures{ID: idOf(7)})
	b, _ := NewNoisy(oracle, 0.5, 2).Predict(JobFeatures{ID: idOf(7)})
	if a == b {
		t.Error("two seeds, one error")
	}
	if _, ok := NewNoisy(oracle, 0.5, 1).Predict(JobFeatures{ID: "unknown"}); ok {
		t.Error("noisy oracle predicts a job the oracle does not know")
	}
}

func idOf(i int) string { return "job" + string(rune('0'+i%10)) + "-" + itoa(i) }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestWithProbe(t *testing.T) {
	f := JobFeatures{ID: "j", MapTasks: 40, ReduceTasks: 4, InputMB: 2560}
	frac := SampleFraction(f.MapTasks, f.ReduceTasks)
	if frac != 1.0/40 {
		t.Fatalf("SampleFraction(40, 4) = %v, want 1/40", frac)
	}
	got, err := f.WithProbe(Probe{Fraction: frac, MapFuncSeconds: 3, MapOutputMB: 10, MapOutputRecords: 1e4,
		ReduceFuncSeconds: 2, ReduceOutputMB: 1, ReduceInputRecords: 1e4})
	if err != nil {
		t.Fatal(err)
	}
	want := JobFeatures{ID: "j", MapTasks: 40, ReduceTasks: 4, InputMB: 2560, MapFuncSeconds: 120, MapOutputMB: 400,
		MapOutputRecords: 4e5, ReduceFuncSeconds: 80, ReduceOutputMB: 40, ReduceInputRecords: 4e5}
	if got != want {
		t.Errorf("WithProbe:\n got %+v\nwant %+v", got, want)
	}
	for _, p := range []Probe{{Fraction: 0}, {Fraction: 1.5}, {Fraction: 0.5, MapOutputMB: -1}, {Fraction: 0.5, MapFuncSeconds: math.NaN()}} {
		if _, err := f.WithProbe(p); err == nil {
			t.Errorf("WithProbe(%+v) accepted", p)
		}
	}
	if SampleFraction(0, 0) != 1 {
		t.Error("SampleFraction of a job without tasks")
	}
}

func TestOracle(t *testing.T) {
	o := Oracle{"a": 12}
	if s, ok := o.Predict(JobFeatures{ID: "a"}); !ok || s != 12 {
		t.Errorf("oracle a: %v %v", s, ok)
	}
	if _, ok := o.Predict(JobFeatures{ID: "b"}); ok {
		t.Error("oracle knows an unknown job")
	}
	if got := (JobFeatures{MapMemMB: 1024, ReduceMemMB: 2048}).Size(Actual{MapSeconds: 10, ReduceSeconds: 1}); got != 12288 {
		t.Errorf("Size = %v, want 12288", got)
	}
}
