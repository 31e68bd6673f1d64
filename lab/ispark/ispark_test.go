package ispark

import (
	"math"
	"reflect"
	"testing"
)

// bigShape fills most of the cluster by itself: two of them cannot run at
// once, so the second waits on the first.
func bigShape() IterShape {
	s := IterShapes["pagerank"]
	s.Name, s.Lanes, s.Iters = "big", 120, 30
	return s
}

func TestIterShapeDiminishes(t *testing.T) {
	for name, s := range IterShapes {
		if !(s.rho(0) > 0.75 && s.rho(s.Iters-1) < 0.35 && s.rho(5) < s.rho(1)) {
			t.Errorf("%s: rho %0.2f -> %0.2f, want high early and diminishing below 0.35", name, s.rho(0), s.rho(s.Iters-1))
		}
	}
}

// Alone, nobody waits: no inverse offer reaches the application, so iSpark
// never shrinks it and runs exactly as dynamic allocation does.
func TestISparkAloneEqualsDynamic(t *testing.T) {
	apps := []IterApp{{Name: "a", Shape: bigShape()}}
	dyn, err := RunIter(apps, IterConfig{Policy: IterDynamic, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	isp, err := RunIter(apps, IterConfig{Policy: IterISpark, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if isp.Givers != 0 || isp.JCT[0] != dyn.JCT[0] {
		t.Errorf("alone: iSpark gave %d executors, jct %.0f vs dynamic %.0f; want 0 and equal", isp.Givers, isp.JCT[0], dyn.JCT[0])
	}
}

// Two applications on a cluster with room for one: under iSpark the
// inverse offers make the first give back executors once its utilisation
// falls, so the second finishes sooner than under dynamic allocation, and
// its handoffs move partitions rather than lose them.
func TestISparkSecondWaitsLess(t *testing.T) {
	apps := []IterApp{{Name: "first", Shape: bigShape()}, {Name: "second", Shape: bigShape(), Arrival: 10}}
	dyn, err := RunIter(apps, IterConfig{Policy: IterDynamic, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	isp, err := RunIter(apps, IterConfig{Policy: IterISpark, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if isp.Givers == 0 || isp.MovedMB == 0 {
		t.Fatalf("iSpark released %d executors, moved %.0f MB; want both > 0", isp.Givers, isp.MovedMB)
	}
	if !(isp.JCT[1] < dyn.JCT[1]) {
		t.Errorf("second app: jct %.0f under iSpark, %.0f under dynamic; want shorter", isp.JCT[1], dyn.JCT[1])
	}
	if isp.JCT[0] > 1.1*dyn.JCT[0] {
		t.Errorf("first app slowed by more than 10%%: %.0f vs %.0f", isp.JCT[0], dyn.JCT[0])
	}
}

func TestRunIterDeterministic(t *testing.T) {
	apps, err := GenerateIterApps(12, ISparkMeanGapSec, ISparkMix, 3)
	if err != nil {
		t.Fatal(err)
	}
	a, err := RunIter(apps, IterConfig{Policy: IterISpark, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RunIter(apps, IterConfig{Policy: IterISpark, Seed: 3})
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs of one seed differ")
	}
}

func TestRunIterRejects(t *testing.T) {
	if _, err := RunIter(nil, IterConfig{Policy: "nope"}); err == nil {
		t.Error("unknown policy accepted")
	}
	bad := IterShapes["gbt"]
	bad.Lanes = 0
	if _, err := RunIter([]IterApp{{Name: "x", Shape: bad}}, IterConfig{Policy: IterStatic}); err == nil {
		t.Error("shape with no lanes accepted")
	}
}

// The experiment's shape on a small workload: relations that could fail,
// no figures typed in.
func TestISparkExperimentShape(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the experiment on 30 applications")
	}
	rep, err := ISparkExperiment(ISparkOptions{Seeds: 1, Apps: 30, Gammas: []float64{0.2, 0.5}, Hs: []float64{1.0, 1.1}, MemMBs: []float64{2048}})
	if err != nil {
		t.Fatal(err)
	}
	row := map[string]ISparkRow{}
	for _, r := range rep.Rows {
		row[r.Policy] = r
	}
	if len(rep.Rows) != len(IterPolicies) {
		t.Fatalf("%d rows, want %d", len(rep.Rows), len(IterPolicies))
	}
	dyn, df := row[IterDynamic], row[IterISpark]
	for _, r := range rep.Rows {
		if sum := r.CPUUtil + r.Idle.Total(); math.Abs(sum-1) > 1e-9 {
			t.Errorf("%s: cpu %.4f + idle %.4f = %.6f of cores x makespan, want 1", r.Policy, r.CPUUtil, r.Idle.Total(), sum)
		}
	}
	if !(df.Idle.UnderGamma < dyn.Idle.UnderGamma) {
		t.Errorf("idle under gamma: iSpark %.3f, dynamic %.3f; iSpark should give those executors back", df.Idle.UnderGamma, dyn.Idle.UnderGamma)
	}
	if !(df.CPUUtil > dyn.CPUUtil) {
		t.Errorf("iSpark cpu %.3f not above dynamic %.3f", df.CPUUtil, dyn.CPUUtil)
	}
	if dyn.MakespanP50Reduction != 0 || !(df.MakespanP50Reduction > 0) {
		t.Errorf("makespan reduction: dynamic %.3f (want 0), iSpark %.3f (want > 0)", dyn.MakespanP50Reduction, df.MakespanP50Reduction)
	}
	if row[IterStatic].Givers != 0 || dyn.Givers != 0 || df.Givers == 0 {
		t.Errorf("givers: static %.0f dynamic %.0f iSpark %.0f; only iSpark should hand off", row[IterStatic].Givers, dyn.Givers, df.Givers)
	}
	if nc := row[IterNoCache]; !(nc.Recomputed > df.Recomputed) {
		t.Errorf("without the cache manager %.0f partitions recomputed, with it %.0f; want more without", nc.Recomputed, df.Recomputed)
	}
	if !(df.AppUtil["lda"] > row[IterStatic].AppUtil["lda"]) {
		t.Errorf("LDA utilisation: iSpark %.3f not above static %.3f", df.AppUtil["lda"], row[IterStatic].AppUtil["lda"])
	}
	g := rep.Sensitivity.Gamma
	if len(g) != 2 || !(g[1].UtilGain > g[0].UtilGain) {
		t.Errorf("gamma sweep %+v: want the gain to rise with gamma", g)
	}
	if h := rep.Sensitivity.H; len(h) != 2 || h[0].JCTRatio != 1 {
		t.Errorf("h sweep %+v: want two points, the first the reference", h)
	}
	// Which eviction policy hits more often depends on the seed and the
	// workload's size, through the handoffs each run makes (docs/ispark.md,
	// Fig. 12): on these 30 applications the order flipped with changes
	// that had nothing to do with eviction. The shape only is asserted.
	if ev := rep.Eviction; len(ev) != 1 || !(ev[0].DAGAware > 0.5 && ev[0].DAGAware <= 1 && ev[0].Plain > 0.5 && ev[0].Plain <= 1) {
		t.Errorf("eviction %+v: want one point, both hit ratios in (0.5, 1]", rep.Eviction)
	}
}

// An iteration after the first reads the input and, if the shape derives
// one, the last iteration's dataset: a shape with DerivedMB 0 (svm) reads
// half as many partitions; under static allocation on a quiet cluster,
// with datasets that fit the executors' storage regions, only the first
// iteration's partitions cached before the executors arrived miss.
func TestIterReadsPerShape(t *testing.T) {
	for _, c := range []struct {
		shape    string
		datasets int
	}{{"pagerank", 2}, {"svm", 1}} {
		s := IterShapes[c.shape]
		s.Iters = 8
		res, err := RunIter([]IterApp{{Name: "a", Shape: s}}, IterConfig{Policy: IterStatic, Seed: 1, MemMB: 6144})
		if err != nil {
			t.Fatal(err)
		}
		perIter := s.Lanes * s.Parts * c.datasets
		if want := perIter * (s.Iters - 1); res.Reads != want || res.Reads-res.Hits > perIter {
			t.Errorf("%s: %d reads, %d hits; want %d, at most %d misses", c.shape, res.Reads, res.Hits, want, perIter)
		}
	}
}

// Fig. 12 in the model: SVM's 1 GB of input per lane fills a 2 GB
// executor's storage region, so where executors hold more than one lane
// eviction chooses; at 6 GB there is room. On 12 applications of seed 1
// both policies hit more often at 6 GB than at 2 GB, and at 6 GB they are
// within a point. Which is ahead at 2 GB is logged, not asserted: on a
// workload this small it turns on a few dozen handoffs and flipped with
// changes that had nothing to do with eviction (0.884 vs 0.850, then
// 0.879 vs 0.876 once U_max was the application's, then 0.877 vs 0.883
// once iterations ended on time); on 120 applications it depends on the
// seed (docs/ispark.md).
func TestSVMEvictionByMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("four runs of 12 SVM applications")
	}
	apps := smallSVM(t)
	hit := func(mem float64, plain bool) float64 {
		r, err := RunIter(apps, IterConfig{Policy: IterISpark, Seed: 1, MemMB: mem, PlainEviction: plain})
		if err != nil {
			t.Fatal(err)
		}
		return float64(r.Hits) / float64(r.Reads)
	}
	dag2, plain2 := hit(2048, false), hit(2048, true)
	dag6, plain6 := hit(6144, false), hit(6144, true)
	t.Logf("hit ratio 2 GB %.3f vs %.3f, 6 GB %.3f vs %.3f (dependency-aware vs random)", dag2, plain2, dag6, plain6)
	if !(dag6 > dag2 && plain6 > plain2) {
		t.Errorf("hit ratio 2 GB %.3f / %.3f, 6 GB %.3f / %.3f; want both higher at 6 GB", dag2, plain2, dag6, plain6)
	}
	if math.Abs(dag6-plain6) > 0.01 {
		t.Errorf("6 GB: %.3f vs %.3f; want within a point (room for both)", dag6, plain6)
	}
}

// Why the h sweep shows no task failures (docs/ispark.md): a receiver is
// packed by its lanes' last-iteration demand, and in this model demand only
// falls afterwards (diminishing iterations, +-15 % noise), so receivers'
// cpu demand stays below their core under DF and CF alike, and h = 1.1 and
// 1.2 differ in nothing that fails tasks. Under DF memory, not cpu, is
// what bounds the packing.
func TestISparkReceiversMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of 30 applications")
	}
	apps, err := GenerateIterApps(30, ISparkMeanGapSec, pageRankOnly, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		policy string
		h      float64
	}{{IterISpark, 1.2}, {IterISparkCF, 1.2}} {
		r, err := RunIter(apps, IterConfig{Policy: c.policy, H: c.h, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s h %.1f: %d receiver epochs, %d above the core (%.3f%%), mean cpu %.3f, mean mem %.3f; failures %d of %d tasks",
			c.policy, c.h, r.RecvEpochs, r.RecvOverCore, 100*float64(r.RecvOverCore)/float64(max(1, r.RecvEpochs)), r.RecvCPU, r.RecvMem, r.Failures, r.Tasks)
		if r.RecvEpochs == 0 {
			t.Fatalf("%s: no receiver ran", c.policy)
		}
		if float64(r.RecvOverCore) >= 0.01*float64(r.RecvEpochs) {
			t.Errorf("%s receivers: %d of %d epochs above the core; want < 1%%", c.policy, r.RecvOverCore, r.RecvEpochs)
		}
		if c.policy == IterISpark && !(r.RecvMem > r.RecvCPU) {
			t.Errorf("DF receivers: mem %.3f, cpu %.3f; want memory the larger", r.RecvMem, r.RecvCPU)
		}
	}
}

// Fig. 12's diagnosis (docs/ispark.md): on SVM at 2 GB an executor holding
// its lane's input is above gamma, so iSpark's givers are executors added
// in the running iteration, which have read none of their lanes' partitions
// yet. The counters say so on a small workload, and WarmGivers (beyond the
// paper) hands none of them off: its young givers are zero.
func TestSVMGiversYoungAndWarmGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of 12 SVM applications")
	}
	apps := smallSVM(t)
	run := func(warm bool) IterResult {
		r, err := RunIter(apps, IterConfig{Policy: IterISpark, Seed: 1, MemMB: 2048, WarmGivers: warm})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	paper, warm := run(false), run(true)
	t.Logf("paper: %d givers, %d young, %d empty; warm: %d givers, %d young, %d empty",
		paper.Givers, paper.YoungGivers, paper.EmptyGivers, warm.Givers, warm.YoungGivers, warm.EmptyGivers)
	if paper.Givers == 0 || 2*paper.YoungGivers <= paper.Givers {
		t.Errorf("paper's behaviour: %d givers, %d young; want most givers young", paper.Givers, paper.YoungGivers)
	}
	if paper.EmptyGivers > paper.Givers || paper.YoungGivers > paper.Givers {
		t.Errorf("counters above givers: %+v", paper)
	}
	if warm.YoungGivers != 0 || !(warm.Givers < paper.Givers) {
		t.Errorf("WarmGivers: %d givers, %d young; want none young and fewer givers than %d", warm.Givers, warm.YoungGivers, paper.Givers)
	}
}

// EvictionOnly runs Fig. 12 alone: no policy rows, no sweeps, and per
// seed the runs whose mean is the point.
func TestISparkEvictionOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("four runs of 10 SVM applications")
	}
	rep, err := ISparkExperiment(ISparkOptions{Seeds: 2, Apps: 10, MemMBs: []float64{2048}, EvictionOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 0 || len(rep.Sensitivity.Gamma) != 0 || len(rep.Sensitivity.H) != 0 {
		t.Errorf("eviction only ran more: %d rows, %d gamma, %d h", len(rep.Rows), len(rep.Sensitivity.Gamma), len(rep.Sensitivity.H))
	}
	if len(rep.Eviction) != 1 || len(rep.Eviction[0].Runs) != 2 {
		t.Fatalf("eviction %+v: want one point of two seeds", rep.Eviction)
	}
	e := rep.Eviction[0]
	runs := e.Runs
	if runs[0].Seed != 1 || runs[1].Seed != 2 || e.WarmGivers {
		t.Errorf("runs %+v: want seeds 1, 2, the paper's behaviour", runs)
	}
	if mean := (runs[0].DAGAware + runs[1].DAGAware) / 2; math.Abs(mean-e.DAGAware) > 1e-12 {
		t.Errorf("dependency-aware %.4f is not the mean of its seeds (%.4f)", e.DAGAware, mean)
	}
	if mean := (runs[0].PlainJCT + runs[1].PlainJCT) / 2; math.Abs(mean-e.PlainJCT) > 1e-9 {
		t.Errorf("random jct %.1f is not the mean of its seeds (%.1f)", e.PlainJCT, mean)
	}
}

// smallSVM is 12 SVM applications of seed 1, the Fig. 12 tests' workload.
func smallSVM(t *testing.T) []IterApp {
	t.Helper()
	apps, err := GenerateIterApps(12, ISparkMeanGapSec, svmOnly, 1)
	if err != nil {
		t.Fatal(err)
	}
	return apps
}

// An iteration at full speed takes IterSec: IterSec one-second steps of
// 1/IterSec must end it, float residue or not (1/15 summed 15 times
// leaves 1 - sum > 0, which ran every GBT iteration a 16th second at full
// demand).
func TestIterSecIsExact(t *testing.T) {
	for _, sec := range []float64{15, 20, 25} {
		s := IterShape{Name: "one", Lanes: 1, Parts: 1, Iters: 4, IterSec: sec, CPUHigh: 0.8, CPULow: 0.3, Decay: 2, InputMB: 10, ExecMB: 100, RecomputeSec: 1}
		r, err := RunIter([]IterApp{{Name: "a", Shape: s}}, IterConfig{Policy: IterStatic, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if want := float64(s.Iters) * sec; r.JCT[0] != want {
			t.Errorf("IterSec %g: %d iterations took %g s, want %g", sec, s.Iters, r.JCT[0], want)
		}
	}
}
