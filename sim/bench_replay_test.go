package sim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/trace"
	"github.com/allot-sched/allot/sorter"
)

// tracesDir is where the shared traces live; override with ALLOT_TRACES.
func tracesDir() string {
	if d := os.Getenv("ALLOT_TRACES"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "data", "traces")
}

// BenchmarkSimReplay replays the whole Alibaba 2017 batch trace (2.55
// million task instances) on 1,000 agents of 96 cpus / 512 GB, in
// characterized mode with RRR agent selection, once per sorter. Run it
// one sorter at a time on a shared machine:
//
//	go test ./sim -run '^$' -bench 'SimReplay/trace=alibaba2017/sorter=drf' -benchtime 1x -benchmem
func BenchmarkSimReplay(b *testing.B) {
	path := filepath.Join(tracesDir(), "alibaba-2017-batch", "jobs.csv")
	if _, err := os.Stat(path); err != nil {
		b.Skipf("trace not found: %v", err)
	}
	for _, name := range []string{"drf", "psdsf", "tsf", "rpsdsf", "fifo", "capacity", "tetris"} {
		b.Run(fmt.Sprintf("trace=alibaba2017/sorter=%s", name), func(b *testing.B) {
			jobs, err := trace.LoadJobs(path, trace.FormatAlibaba2017, trace.TraceOptions{})
			if err != nil {
				b.Fatal(err)
			}
			nodes, err := trace.ParseCluster("alibaba")
			if err != nil {
				b.Fatal(err)
			}
			w := &sim.Workload{Name: "alibaba2017", Jobs: jobs, Nodes: nodes}
			p, err := sim.ParsePolicy(name, sorter.RRR)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var r *sim.Result
			for i := 0; i < b.N; i++ {
				if r, err = sim.Run(w, sim.Config{Policy: p, Mode: allocator.Characterized, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r.Makespan, "makespan_s")
			b.ReportMetric(float64(r.Cycles), "cycles")
			b.ReportMetric(r.Utilization["cpus"], "util_cpus")
		})
	}
}
