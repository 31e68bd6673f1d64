package allocator

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// benchAgent is the agent of Mesos's allocator benchmarks.
var benchAgent = resources.MustParse("cpus:24;mem:4096;disk:4096;ports:[31000-32000]")

func benchAllocator(b testing.TB, agents, frameworks int, crit string, sel sorter.AgentSelection, mode Mode) (*Allocator, *ManualClock) {
	c, err := sorter.Lookup(crit)
	if err != nil {
		b.Fatal(err)
	}
	clk := &ManualClock{T: time.Unix(1e9, 0)}
	a, err := New(Config{Sorter: c, AgentSelection: sel, Mode: mode, Clock: clk, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < agents; i++ {
		if err := a.AddAgent(fmt.Sprintf("agent-%d", i), AgentInfo{Total: benchAgent}); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < frameworks; i++ {
		if err := a.AddFramework(fmt.Sprintf("framework-%d", i), "role"); err != nil {
			b.Fatal(err)
		}
	}
	return a, clk
}

// BenchmarkAllocationCycle is Mesos's DeclineOffers benchmark: one op is one
// allocation cycle that offers every agent, after which every offer is
// declined with a 5 s filter; the clock then moves one allocation interval.
func BenchmarkAllocationCycle(b *testing.B) {
	for _, agents := range []int{1000, 10000, 50000} {
		for _, frameworks := range []int{100, 1000, 6000} {
			for _, crit := range []string{"drf", "random", "psdsf"} {
				name := fmt.Sprintf("agents=%d/frameworks=%d/sorter=%s", agents, frameworks, crit)
				b.Run(name, func(b *testing.B) {
					a, clk := benchAllocator(b, agents, frameworks, crit, sorter.RRR, Oblivious)
					offers := benchCycles(b, a, clk, &Filter{RefuseSeconds: 5}, nil)
					b.ReportMetric(float64(offers)/float64(b.N), "offers/cycle")
				})
			}
		}
	}
}

// benchDemands are mixed per-task demand vectors (cpu-heavy, memory-heavy,
// balanced, tiny), assigned round robin to frameworks.
var benchDemands = []resources.Resources{
	resources.MustParse("cpus:2;mem:256"),
	resources.MustParse("cpus:0.5;mem:512"),
	resources.MustParse("cpus:1;mem:128"),
	resources.MustParse("cpus:4;mem:1024"),
	resources.MustParse("cpus:1;mem:1024"),
	resources.MustParse("cpus:3;mem:64"),
}

// BenchmarkProgressiveFilling fills an empty cluster to full in
// characterized mode: one op is one cycle from empty to no task fitting.
// It reports task placements per second.
func BenchmarkProgressiveFilling(b *testing.B) {
	type policy struct {
		crit string
		sel  sorter.AgentSelection
	}
	policies := []policy{{"drf", sorter.RRR}, {"psdsf", sorter.Joint}, {"rpsdsf", sorter.Joint}, {"psdsf", sorter.RRR}, {"tsf", sorter.RRR}}
	for _, agents := range []int{1000, 10000} {
		for _, frameworks := range []int{100, 1000} {
			for _, p := range policies {
				name := fmt.Sprintf("agents=%d/frameworks=%d/sorter=%s/selection=%s", agents, frameworks, p.crit, p.sel)
				b.Run(name, func(b *testing.B) {
					placements := 0
					var elapsed time.Duration
					b.ReportAllocs()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						a, _ := benchAllocator(b, agents, frameworks, p.crit, p.sel, Characterized)
						for n := 0; n < frameworks; n++ {
							d := Demand{Task: benchDemands[n%len(benchDemands)], Tasks: -1}
							if err := a.SetDemand(fmt.Sprintf("framework-%d", n), d); err != nil {
								b.Fatal(err)
							}
						}
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
				})
			}
		}
	}
}

// BenchmarkAllocatorHeap reports the live heap of an allocator holding
// 50,000 agents and 6,000 frameworks after one cycle of offers.
func BenchmarkAllocatorHeap(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		a, _ := benchAllocator(b, 50000, 6000, "drf", sorter.RRR, Oblivious)
		a.Allocate()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MiB")
		runtime.KeepAlive(a)
	}
}

// BenchmarkProphetCycle is BenchmarkAllocationCycle for the gang path: P
// applications of 4 executors (cpus:2, mem:512, six profile shapes) on A
// agents that advertise disk_bw and net_bw; one op is one cycle, after
// which every offer is recovered and every application declares again.
// sorter=drf runs the same frameworks without application demands through
// DRF's cycle (with BenchmarkAllocationCycle's 5 s decline filter), for
// the 3x comparison.
func BenchmarkProphetCycle(b *testing.B) {
	agent := resources.MustParse("cpus:24;mem:4096;disk:4096;disk_bw:330;net_bw:125;ports:[31000-32000]")
	for _, agents := range []int{100, 1000, 10000} {
		for _, apps := range []int{100, 1000} {
			for _, crit := range []string{"prophet", "drf"} {
				b.Run(fmt.Sprintf("agents=%d/apps=%d/sorter=%s", agents, apps, crit), func(b *testing.B) {
					benchGangCycle(b, agent, agents, apps, crit)
				})
			}
		}
	}
}

func benchGangCycle(b *testing.B, agent resources.Resources, agents, apps int, crit string) {
	c, _ := sorter.Lookup(crit)
	clk := &ManualClock{T: time.Unix(1e9, 0)}
	a, err := New(Config{Sorter: c, Clock: clk, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < agents; i++ {
		if err := a.AddAgent(fmt.Sprintf("agent-%d", i), AgentInfo{Total: agent}); err != nil {
			b.Fatal(err)
		}
	}
	declare := func(n int) {
		if crit != "prophet" {
			return
		}
		d := app(4, 2, float64(20+40*(n%6)))
		d.Mem = 512
		if err := a.Observe(policy.AppDemand{Framework: fmt.Sprintf("app-%d", n), Demand: d}); err != nil {
			b.Fatal(err)
		}
	}
	for n := 0; n < apps; n++ {
		if err := a.AddFramework(fmt.Sprintf("app-%d", n), "role"); err != nil {
			b.Fatal(err)
		}
		declare(n)
	}
	var filter *Filter
	if crit == "drf" {
		filter = &Filter{RefuseSeconds: 5}
	}
	offers := benchCycles(b, a, clk, filter, func() {
		for n := 0; n < apps; n++ {
			declare(n)
		}
	})
	b.ReportMetric(float64(offers)/float64(b.N), "offers/cycle")
}

// benchCycles times b.N allocation cycles. Between cycles, untimed, every
// offer is recovered with filter (nil: none), between runs if given, and the
// clock moves one allocation interval. It returns the offers made in all.
// Besides wall time it reports cpu-ns/op, the process's CPU time during
// the cycles (the collector's included): on a shared machine wall time
// swings with the other load, CPU time much less.
func benchCycles(b *testing.B, a *Allocator, clk *ManualClock, filter *Filter, between func()) int {
	offers := 0
	var cpu int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0 := processCPU()
		out := a.Allocate().Offers
		cpu += processCPU() - c0
		offers += len(out)
		b.StopTimer()
		for _, o := range out {
			if err := a.Recover(o.Framework, o.Agent, o.Resources, filter); err != nil {
				b.Fatal(err)
			}
		}
		if between != nil {
			between()
		}
		clk.Advance(time.Second)
		b.StartTimer()
	}
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
	return offers
}
