package allocator

import (
	"fmt"
	"testing"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/sorter"
)

// BenchmarkFSPCycle is BenchmarkAllocationCycle at 10,000 agents for FSP
// beside DRF: one op is one cycle, which for FSP advances the virtual
// cluster by a second (a third of the jobs leave it during the run),
// rewrites every declared framework's view and re-keys them all. Two
// thirds of the frameworks declare a known size, one third an unknown
// one. The issue asks for FSP within 2x of DRF.
func BenchmarkFSPCycle(b *testing.B) {
	for _, frameworks := range []int{100, 1000, 10000} {
		for _, crit := range []string{"drf", "fspy"} {
			b.Run(fmt.Sprintf("frameworks=%d/sorter=%s", frameworks, crit), func(b *testing.B) {
				a, clk := benchAllocator(b, 10000, frameworks, crit, sorter.RRR, Oblivious)
				if crit == "fspy" {
					for i := 0; i < frameworks; i++ {
						s := policy.JobSize{Job: "j", APB: float64(1024 * (1 + i%16))}
						if i%3 != 0 {
							s.Known, s.Size = true, float64(1+i%97)*4e6
						}
						if err := a.Observe(sizeOf(fmt.Sprintf("framework-%d", i), s)); err != nil {
							b.Fatal(err)
						}
					}
				}
				benchCycles(b, a, clk, &Filter{RefuseSeconds: 5}, nil)
			})
		}
	}
}
