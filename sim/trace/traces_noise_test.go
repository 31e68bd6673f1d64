package trace_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/trace"
)

// swimRows is n SWIM rows with the same bytes, so that without noise
// every job has the same durations.
func swimRows(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "job%d\t%d\t1\t640000000\t512000000\t100000000\n", i, i)
	}
	return b.String()
}

func TestSWIMRateNoiseOffIsExact(t *testing.T) {
	jobs, err := trace.ReadSWIM(strings.NewReader(swimRows(3)), "fb.tsv", trace.TraceOptions{NoiseSeed: 7})
	if err != nil {
		t.Fatal(err)
	}
	// 640e6 B: 10 maps of 64e6 B at 20 MB/s; 512e6 B shuffled: 2 reduces
	// of 256e6 B at 10 MB/s writing 50e6 B at 20 MB/s
	wantMap, wantRed := 5+64e6/20e6, 5+256e6/10e6+50e6/20e6
	for _, j := range jobs {
		if d := j.Stages[0].Groups[0].Duration; d != wantMap {
			t.Errorf("%s map %v, want %v", j.ID, d, wantMap)
		}
		if d := j.Stages[1].Groups[0].Duration; d != wantRed {
			t.Errorf("%s reduce %v, want %v", j.ID, d, wantRed)
		}
		if mr := j.MapReduce; mr == nil || mr.MapCost != 1 || mr.ReduceCost != 1 || mr.InputBytes != 640e6 || mr.ShuffleBytes != 512e6 || mr.OutputBytes != 100e6 {
			t.Errorf("%s MapReduce %+v", j.ID, j.MapReduce)
		}
	}
}

func TestSWIMRateNoise(t *testing.T) {
	const n, sigma = 4000, 0.3
	read := func(seed uint64, rows string) []sim.Job {
		jobs, err := trace.ReadSWIM(strings.NewReader(rows), "fb.tsv", trace.TraceOptions{RateNoise: sigma, NoiseSeed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	jobs := read(1, swimRows(n))
	var sum, sumLog, sumLog2 float64
	for _, j := range jobs {
		g := j.MapReduce.MapCost
		// the byte-proportional part (3.2 s) scales by g; the 5 s startup does not
		if want := 5 + 64e6/20e6*g; math.Abs(j.Stages[0].Groups[0].Duration-want) > 1e-9 {
			t.Fatalf("%s map duration %v, want %v", j.ID, j.Stages[0].Groups[0].Duration, want)
		}
		sum += g
		sumLog += math.Log(g)
		sumLog2 += math.Log(g) * math.Log(g)
	}
	mean := sum / n
	sd := math.Sqrt(sumLog2/n - (sumLog/n)*(sumLog/n))
	// E[g] = 1 (work preserved), sd(log g) = sigma; tolerances ~4 standard errors
	if math.Abs(mean-1) > 0.02 || math.Abs(sd-sigma) > 0.015 {
		t.Errorf("map cost factors: mean %.4f (want 1), sd of log %.4f (want %v)", mean, sd, sigma)
	}
	// a pure function of (seed, id): the same job in a shorter file, or
	// read again, draws the same; another seed draws differently
	again := read(1, swimRows(10))
	other := read(2, swimRows(10))
	for i := range again {
		if again[i].MapReduce.MapCost != jobs[i].MapReduce.MapCost || again[i].MapReduce.ReduceCost != jobs[i].MapReduce.ReduceCost {
			t.Errorf("%s: draws depend on the rest of the file", again[i].ID)
		}
		if other[i].MapReduce.MapCost == jobs[i].MapReduce.MapCost {
			t.Errorf("%s: seed 2 draws what seed 1 drew", again[i].ID)
		}
	}
	if jobs[0].MapReduce.MapCost == jobs[0].MapReduce.ReduceCost {
		t.Errorf("map and reduce share a draw")
	}
}
