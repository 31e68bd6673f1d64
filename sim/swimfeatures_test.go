package sim_test

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/allot-sched/allot/framework/predict/jobsize"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/trace"
)

// On SWIM jobs with cost noise, the regression over a perfect probe's
// features is exact (R^2 = 1: the model is linear in them) and its size is
// the simulator's; without the probe's function times (bytes only) it is
// not, which is what the noise is for.
func TestSWIMFeaturesRegression(t *testing.T) {
	var b strings.Builder
	for i := range 400 {
		// inputs from 1 MB to ~60 GB, shuffles and outputs in proportion
		in := math.Exp(float64(i%97)/96*11) * 1e6
		b.WriteString("job" + strconv.Itoa(i) + "\t" + strconv.Itoa(i) + "\t1\t" + ftoa(in) + "\t" + ftoa(in*float64(i%5)/4) + "\t" + ftoa(in*float64(i%3)/10) + "\n")
	}
	for _, sigma := range []float64{0, 0.3} {
		jobs, err := trace.ReadSWIM(strings.NewReader(b.String()), "fb.tsv", trace.TraceOptions{RateNoise: sigma, NoiseSeed: 1})
		if err != nil {
			t.Fatal(err)
		}
		probe, bytesOnly := jobsize.NewRegression(), jobsize.NewRegression()
		var actual, predProbe, predBytes []float64
		for i := range jobs {
			f, a, ok := sim.SWIMFeatures(&jobs[i])
			if !ok {
				t.Fatalf("%s: no features", jobs[i].ID)
			}
			if got, want := f.Size(a), sim.JobSize(&jobs[i]); math.Abs(got-want) > 1e-9*want {
				t.Fatalf("%s: size from features %v, simulator's %v", jobs[i].ID, got, want)
			}
			// bytes only: function times at the nominal rates, as if the job's
			// cost factors were unknown
			fb := f
			fb.MapFuncSeconds /= jobs[i].MapReduce.MapCost
			if jobs[i].MapReduce.ReduceCost > 0 {
				fb.ReduceFuncSeconds /= jobs[i].MapReduce.ReduceCost
			}
			if i >= 200 { // score on the second half, trained online throughout
				sp, ok1 := probe.Predict(f)
				sb, ok2 := bytesOnly.Predict(fb)
				if !ok1 || !ok2 {
					t.Fatal("no prediction after 200 jobs")
				}
				actual, predProbe, predBytes = append(actual, f.Size(a)), append(predProbe, sp), append(predBytes, sb)
			}
			probe.Observe(f, a)
			bytesOnly.Observe(fb, a)
		}
		r2p, r2b := jobsize.R2(actual, predProbe), jobsize.R2(actual, predBytes)
		t.Logf("sigma %.1f: R^2 with a perfect probe %.6f, bytes only %.4f", sigma, r2p, r2b)
		if r2p < 1-1e-6 {
			t.Errorf("sigma %v: R^2 with a perfect probe %v, want 1", sigma, r2p)
		}
		if sigma == 0 && r2b < 1-1e-6 {
			t.Errorf("without noise bytes predict exactly; R^2 %v", r2b)
		}
		if sigma > 0 && r2b > 0.99 {
			t.Errorf("sigma %v: bytes alone still predict sizes (R^2 %v)", sigma, r2b)
		}
	}
	if _, _, ok := sim.SWIMFeatures(&sim.Job{ID: "csv"}); ok {
		t.Error("features for a job not read from SWIM")
	}
}

func ftoa(x float64) string { return strconv.Itoa(int(x)) }
