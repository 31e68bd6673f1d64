package examples

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/allot-sched/allot/examples/internal/gen"
	"github.com/allot-sched/allot/internal/testcluster"
)

// BenchmarkWordCount runs wordcount on a two-agent local cluster (two
// executors of one core each, as this 2-core machine has) and, side by
// side on the same generated input, a single-process all-cores Go word
// count (the plain strings.Fields loop of the correctness tests, and the
// same count written with the runtime's allocation-free splitting, so that
// the ratio is also reported like for like). ALLOT_WORDCOUNT_BYTES sets the input size (default 1 GB); run it
// with -benchtime 1x. Timings are reported, never asserted.
func BenchmarkWordCount(b *testing.B) {
	size := int64(1 << 30)
	if s := os.Getenv("ALLOT_WORDCOUNT_BYTES"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v <= 0 {
			b.Fatalf("ALLOT_WORDCOUNT_BYTES=%q: want a positive byte count", s)
		}
		size = v
	}
	in := filepath.Join(b.TempDir(), "words.txt")
	if err := gen.WriteText(in, size, 42); err != nil {
		b.Fatal(err)
	}
	// Flush the freshly written file: otherwise its writeback competes
	// with whichever count runs first.
	if f, err := os.Open(in); err == nil {
		f.Sync()
		f.Close()
	}
	c := newCluster(b)
	var cluster, single, singleBytes time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		_, stderr, err := c.run(b, "wordcount", "--input", in, "--executors", "2", "--cores", "1", "--quiet")
		if err != nil {
			b.Fatalf("wordcount: %v\n%s", err, testcluster.Tail(stderr, 2000))
		}
		cluster += time.Since(t0)
		if i == 0 {
			logStages(b, events(b, stderr), time.Since(t0))
		}
		t0 = time.Now()
		if _, err := gen.CountWords(in, runtime.NumCPU()); err != nil {
			b.Fatal(err)
		}
		single += time.Since(t0)
		t0 = time.Now()
		if _, err := gen.CountWordsBytes(in, runtime.NumCPU()); err != nil {
			b.Fatal(err)
		}
		singleBytes += time.Since(t0)
	}
	mb := float64(size) / (1 << 20) * float64(b.N)
	b.ReportMetric(mb/cluster.Seconds(), "cluster-MB/s")
	b.ReportMetric(mb/single.Seconds(), "single-MB/s")
	b.ReportMetric(single.Seconds()/cluster.Seconds(), "cluster/single")
	b.ReportMetric(mb/singleBytes.Seconds(), "single-bytes-MB/s")
	b.ReportMetric(singleBytes.Seconds()/cluster.Seconds(), "cluster/single-bytes")
}

// logStages says where a run's time went: the stages from the event log,
// and the rest (starting the driver, getting executors, tearing down).
func logStages(b *testing.B, evs []map[string]any, wall time.Duration) {
	var first, last, staged float64
	taskTime, taskCPU, tasks := map[any]float64{}, map[any]float64{}, map[any]int{}
	for _, e := range evs {
		if e["event"] == "task_end" && e["success"] == true {
			taskTime[e["stage"]] += e["duration_s"].(float64)
			taskCPU[e["stage"]] += e["cpu_time_s"].(float64)
			tasks[e["stage"]]++
		}
	}
	for _, e := range evs {
		switch e["event"] {
		case "executor_added":
			if t := e["time"].(float64); first == 0 || t < first {
				first = t
			}
		case "stage_completed":
			d := e["duration_s"].(float64)
			staged += d
			last = max(last, e["end"].(float64))
			st := e["stage"]
			b.Logf("stage %v %-24v %6.2fs on %v executors: %d tasks, %.2fs task time, %.2fs task CPU", st, e["name"], d, e["executors"], tasks[st], taskTime[st], taskCPU[st])
		}
	}
	b.Logf("wall %.2fs: first executor registered to last stage end %.2fs; stages sum %.2fs", wall.Seconds(), last-first, staged)
}
