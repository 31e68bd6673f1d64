package allocator

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// benchRoles builds the role-heavy cluster of BenchmarkAllocationCycleRoles:
// frameworks spread over roles (ten to a role); with quota set, half the
// roles have a guarantee and a limit and a tenth of the agents reserve
// half of themselves for a role.
func benchRoles(b *testing.B, agents, frameworks int, crit string, withQuota bool) (*Allocator, *ManualClock) {
	a, clk := benchAllocator(b, agents, 0, crit, sorter.RRR, Oblivious)
	roles := max(frameworks/10, 1)
	for i := 0; i < frameworks; i++ {
		if err := a.AddFramework(fmt.Sprintf("framework-%d", i), fmt.Sprintf("role-%d", i%roles)); err != nil {
			b.Fatal(err)
		}
	}
	if !withQuota {
		return a, clk
	}
	for r := 0; r < roles; r += 2 {
		q := quota("cpus:480;mem:81920", "cpus:4800;mem:819200")
		if err := a.SetQuota(fmt.Sprintf("role-%d", r), q); err != nil {
			b.Fatal(err)
		}
	}
	half := resources.MustParse("cpus:12;mem:2048;disk:2048")
	for i := 0; i < agents; i += 10 {
		byRole := map[string]resources.Resources{fmt.Sprintf("role-%d", (i/10)%roles): half}
		if err := a.SetReservations(fmt.Sprintf("agent-%d", i), byRole); err != nil {
			b.Fatal(err)
		}
	}
	return a, clk
}

// BenchmarkAllocationCycleRoles is BenchmarkAllocationCycle's decline
// cycle on 10k agents and 1k frameworks in 100 roles, with and without
// quota on half the roles and reservations on a tenth of the agents (the
// first runs the role-aware cycle, the second the fast path).
func BenchmarkAllocationCycleRoles(b *testing.B) {
	for _, withQuota := range []bool{false, true} {
		for _, crit := range []string{"drf", "psdsf"} {
			b.Run(fmt.Sprintf("agents=10000/frameworks=1000/sorter=%s/quota=%v", crit, withQuota), func(b *testing.B) {
				a, clk := benchRoles(b, 10000, 1000, crit, withQuota)
				offers := benchCycles(b, a, clk, &Filter{RefuseSeconds: 5}, nil)
				b.ReportMetric(float64(offers)/float64(b.N), "offers/cycle")
			})
		}
	}
}

// BenchmarkAllocationCycleRolesRatio is the comparison itself:
// each op runs one cycle of BenchmarkAllocationCycleRoles without quota
// and one with, interleaved (which goes first alternates), so that the
// load of a shared machine falls on both alike. It reports the median
// wall and CPU time per cycle of each and their ratio, roles/flat.
func BenchmarkAllocationCycleRolesRatio(b *testing.B) {
	for _, crit := range []string{"drf", "psdsf"} {
		b.Run(fmt.Sprintf("agents=10000/frameworks=1000/sorter=%s", crit), func(b *testing.B) {
			type side struct {
				a         *Allocator
				clk       *ManualClock
				wall, cpu []float64
			}
			var sides [2]side
			for i, withQuota := range []bool{false, true} {
				a, clk := benchRoles(b, 10000, 1000, crit, withQuota)
				sides[i] = side{a: a, clk: clk}
			}
			filter := &Filter{RefuseSeconds: 5}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range sides {
					s := &sides[(i+j)%2]
					t0, c0 := time.Now(), processCPU()
					out := s.a.Allocate().Offers
					s.wall = append(s.wall, float64(time.Since(t0)))
					s.cpu = append(s.cpu, float64(processCPU()-c0))
					b.StopTimer()
					for _, o := range out {
						if err := s.a.Recover(o.Framework, o.Agent, o.Resources, filter); err != nil {
							b.Fatal(err)
						}
					}
					s.clk.Advance(time.Second)
					b.StartTimer()
				}
			}
			fw, rw := median(sides[0].wall), median(sides[1].wall)
			fc, rc := median(sides[0].cpu), median(sides[1].cpu)
			b.ReportMetric(fw/1e6, "flat-ms")
			b.ReportMetric(rw/1e6, "roles-ms")
			b.ReportMetric(rw/fw, "roles/flat")
			if fc > 0 {
				b.ReportMetric(fc/1e6, "flat-cpu-ms")
				b.ReportMetric(rc/1e6, "roles-cpu-ms")
				b.ReportMetric(rc/fc, "roles/flat-cpu")
			}
		})
	}
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkQuotaScenario is Mesos's quota scenario: 3,000 agents, 3,000
// roles each with a guarantee of half an agent and one framework. One op
// is one cycle from an empty cluster: every guarantee is met in the quota
// stage, and the fair-share stage hands out the rest.
func BenchmarkQuotaScenario(b *testing.B) {
	const n = 3000
	b.ReportAllocs()
	offers := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		a, _ := benchAllocator(b, n, 0, "drf", sorter.RRR, Oblivious)
		for r := 0; r < n; r++ {
			role := fmt.Sprintf("role-%d", r)
			if err := a.AddFramework(fmt.Sprintf("framework-%d", r), role); err != nil {
				b.Fatal(err)
			}
			if err := a.SetQuota(role, quota("cpus:12;mem:2048", "")); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		offers += len(a.Allocate().Offers)
	}
	b.ReportMetric(float64(offers)/float64(b.N), "offers/cycle")
}
