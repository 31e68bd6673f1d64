package allocator

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/sorter"
)

// BenchmarkBanditCycle compares the co-location bandit's fill with DRF's
// on the same work: one op is one characterized cycle from an empty
// cluster until no task fits, frameworks of four job types each wanting
// 100 tasks of the mixed benchDemands, so that about a thousand draws
// (one per job started) happen beside the placed-first serving.
func BenchmarkBanditCycle(b *testing.B) {
	for _, agents := range []int{1000, 10000} {
		for _, frameworks := range []int{100, 1000} {
			for _, crit := range []string{"drf", "bandit"} {
				name := fmt.Sprintf("agents=%d/frameworks=%d/sorter=%s", agents, frameworks, crit)
				b.Run(name, func(b *testing.B) { benchBanditCycle(b, agents, frameworks, crit) })
			}
		}
	}
}

func benchBanditCycle(b *testing.B, agents, frameworks int, crit string) {
	placements := 0
	var elapsed time.Duration
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		a := banditBenchAllocator(b, agents, frameworks, crit)
		runtime.GC()
		b.StartTimer()
		start := time.Now()
		for _, o := range a.Allocate().Offers {
			placements += o.Tasks
		}
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(placements)/elapsed.Seconds(), "placements/s")
	b.ReportMetric(float64(placements)/float64(b.N), "placements/op")
}

func banditBenchAllocator(b *testing.B, agents, frameworks int, crit string) *Allocator {
	a, _ := benchAllocator(b, agents, frameworks, crit, sorter.RRR, Characterized)
	for n := 0; n < frameworks; n++ {
		id := fmt.Sprintf("framework-%d", n)
		if err := a.SetDemand(id, Demand{Task: benchDemands[n%len(benchDemands)], Tasks: 100}); err != nil {
			b.Fatal(err)
		}
		if err := a.Observe(policy.JobType{Framework: id, Type: fmt.Sprintf("type-%d", n%4)}); err != nil {
			b.Fatal(err)
		}
	}
	return a
}
