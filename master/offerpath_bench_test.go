package master

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
)

// benchAgentRes is the agent of the allocator's own benchmarks
// (allocator/bench_test.go, after Mesos's), so the two cycle times compare.
const benchAgentRes = "cpus:24;mem:4096;disk:4096;ports:[31000-32000]"

// BenchmarkMasterOfferPath times the master's half of an allocation cycle
// beside the allocator's half, on a master with A connected agents and F
// subscribed frameworks and no network. One op is one cycle as the
// allocation loop runs it: the allocator decides (alloc-ns/cycle), then the
// master builds the offers, gives them ids, records them in its offer table,
// encodes one OFFERS event per framework onto its stream and counts them
// (master-ns/cycle, which includes the cycle histogram). Between cycles,
// untimed, every offer is declined with a 5 s filter and the clock moves one
// allocation interval, as in the allocator's BenchmarkAllocationCycle.
func BenchmarkMasterOfferPath(b *testing.B) {
	for _, agents := range []int{1000, 10000} {
		for _, frameworks := range []int{100, 1000} {
			b.Run(fmt.Sprintf("agents=%d/frameworks=%d", agents, frameworks), func(b *testing.B) {
				benchOfferPath(b, agents, frameworks)
			})
		}
	}
}

func benchOfferPath(b *testing.B, agents, frameworks int) {
	h := newHarness(b, nil)
	for i := 0; i < agents; i++ {
		rec := &api.AgentRecord{Hostname: fmt.Sprintf("agent-%d", i), Address: "127.0.0.1:5051", Resources: benchAgentRes}
		if _, err := h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER, Agent: rec}, discardStream(b, api.Protobuf)); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < frameworks; i++ {
		ft := 60.0
		info := mesos.FrameworkInfo{User: "bench", Name: fmt.Sprintf("framework-%d", i), FailoverTimeout: &ft}
		if _, _, err := h.m.admitFramework("", info, nil, discardStream(b, api.Protobuf)); err != nil {
			b.Fatal(err)
		}
	}
	m := h.m
	decline := &allocator.Filter{RefuseSeconds: 5}
	var allocNs, masterNs, allocCPU, masterCPU time.Duration
	offers := 0
	// The thread's CPU time as well as the wall clock: on a shared host the
	// wall clock also counts time this goroutine waited for a CPU, and the
	// stream writers that OFFERS wakes compete with it for one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0, c0 := time.Now(), threadCPU()
		m.mu.Lock()
		decided := m.alloc.Allocate()
		t1, c1 := time.Now(), threadCPU()
		m.offerLocked(decided)
		m.m.allocCycle.Observe(time.Since(t0).Seconds())
		t2, c2 := time.Now(), threadCPU()
		allocNs += t1.Sub(t0)
		masterNs += t2.Sub(t1)
		allocCPU += c1 - c0
		masterCPU += c2 - c1
		offers += len(m.offers)
		b.StopTimer()
		for _, o := range m.offers {
			m.removeOfferLocked(o, true, decline)
		}
		m.mu.Unlock()
		h.clock.Advance(time.Second)
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(allocNs.Nanoseconds())/n, "alloc-ns/cycle")
	b.ReportMetric(float64(masterNs.Nanoseconds())/n, "master-ns/cycle")
	b.ReportMetric(float64(allocCPU.Nanoseconds())/n, "alloc-cpu-ns/cycle")
	b.ReportMetric(float64(masterCPU.Nanoseconds())/n, "master-cpu-ns/cycle")
	b.ReportMetric(float64(offers)/n, "offers/cycle")
}

// threadCPU is the CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID);
// the caller locks its goroutine to the thread.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// discardStream is a master stream whose client reads and drops every
// frame, so its queue never fills and encoding is the only cost it adds.
func discardStream(tb testing.TB, c api.Codec) *api.Stream {
	s := api.NewStream(c, 4096)
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx)
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.Serve(discardWriter{http.Header{}}, r, true, nil)
	}()
	tb.Cleanup(func() {
		cancel()
		<-served
	})
	return s
}

type discardWriter struct{ h http.Header }

func (w discardWriter) Header() http.Header       { return w.h }
func (discardWriter) WriteHeader(int)             {}
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
