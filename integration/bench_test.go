package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/internal/testcluster"
)

// BenchmarkLaunchThroughput measures the control plane: one master, four
// agents, one mesos-go framework that accepts every offer and launches as
// many tiny tasks as fit onto a custom executor (testexec) that finishes
// each task in process at once. It reports tasks/s (launch to FINISHED,
// acknowledged) and the p50/p99 time from ACCEPT to TASK_RUNNING as the
// framework sees it.
//
//	go test ./integration -run '^$' -bench LaunchThroughput -benchtime 5000x
func BenchmarkLaunchThroughput(b *testing.B) {
	c := &cluster{testcluster.New(b, testcluster.Config{Bin: allotBin, Agents: 4,
		MasterFlags: []string{"--log-level", "debug", "--allocation-interval", "50ms"}, AgentFlags: benchAgentFlags()})}
	lb := &launchBench{accepted: map[string]time.Time{}, underway: make(chan struct{}), executors: map[string]*mesos.ExecutorInfo{}}
	fw := subscribeDirect(b, c.MasterAddr, mesos.FrameworkInfo{Name: "bench", User: "root"}, lb.onStatus)
	// ALLOT_BENCH_PROFILE=dir saves 3-second CPU profiles of the master and
	// the first agent, taken once the first task has finished.
	if dir := os.Getenv("ALLOT_BENCH_PROFILE"); dir != "" {
		profileWhenUnderway(b, dir, map[string]string{"master": c.MasterAddr, "agent": c.Agents[0].Addr}, lb.underway)
	}
	b.ResetTimer()
	start := time.Now()
	for {
		lb.mu.Lock()
		done := lb.finished >= b.N
		lb.mu.Unlock()
		if done {
			break
		}
		fw.mu.Lock()
		offers := fw.offers
		fw.offers = nil
		fw.mu.Unlock()
		if len(offers) == 0 {
			time.Sleep(time.Millisecond)
			if time.Since(start) > 4*time.Minute {
				b.Fatalf("only %d of %d tasks finished", lb.finished, b.N)
			}
			continue
		}
		for _, o := range offers {
			lb.fill(b, fw, o)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	lb.mu.Lock()
	defer lb.mu.Unlock()
	sort.Slice(lb.latency, func(i, j int) bool { return lb.latency[i] < lb.latency[j] })
	pct := func(p float64) float64 {
		if len(lb.latency) == 0 {
			return 0
		}
		return float64(lb.latency[int(p*float64(len(lb.latency)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tasks/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// The framework keeps at most maxInFlight tasks between ACCEPT and
// FINISHED, as a real one paces itself; more only queues and inflates
// the ACCEPT-to-RUNNING time without adding throughput.
const maxInFlight, maxPerOffer = 64, 64

// benchAgentFlags are the agents' flags for the launch benchmark.
// ALLOT_BENCH_ISOLATION=posix/cpu,posix/mem (or cgroups/cpu,cgroups/mem)
// sets the agents' --isolation, to measure what isolation costs.
// The agents serve their profiler only with --pprof.
func benchAgentFlags() []string {
	af := append([]string{}, agentFlags...)
	if iso := os.Getenv("ALLOT_BENCH_ISOLATION"); iso != "" {
		af = append(af, "--isolation", iso)
	}
	if os.Getenv("ALLOT_BENCH_PROFILE") != "" {
		af = append(af, "--pprof")
	}
	return af
}

// launchBench is the benchmark framework's bookkeeping: when each task was
// accepted, the ACCEPT-to-RUNNING latencies, and how many tasks were
// launched and finished.
type launchBench struct {
	mu       sync.Mutex
	accepted map[string]time.Time
	latency  []time.Duration
	finished int
	// underway closes when the first task finishes: the run is in
	// its steady state from then on.
	underway chan struct{}

	// Only the benchmark's loop touches these.
	executors map[string]*mesos.ExecutorInfo
	launched  int
}

// onStatus records a task's RUNNING latency and counts FINISHED.
func (lb *launchBench) onStatus(st mesos.TaskStatus) {
	now := time.Now()
	lb.mu.Lock()
	switch st.GetState() {
	case mesos.TASK_RUNNING:
		if t0, ok := lb.accepted[st.TaskID.Value]; ok {
			lb.latency = append(lb.latency, now.Sub(t0))
		}
	case mesos.TASK_FINISHED:
		if lb.finished++; lb.finished == 1 {
			close(lb.underway)
		}
	}
	lb.mu.Unlock()
}

// fill launches as many tiny tasks as offer o holds, up to b.N launched,
// maxPerOffer per offer and maxInFlight unfinished, on the agent's bench
// executor (whose resources come out of the first offer); it declines
// an offer it uses none of.
func (lb *launchBench) fill(b *testing.B, fw *sched, o mesos.Offer) {
	ex := lb.executors[o.AgentID.Value]
	first := ex == nil
	if first {
		ex = execInfo("bench-" + o.AgentID.Value)
		lb.executors[o.AgentID.Value] = ex
	}
	var cpus, mem float64
	for _, r := range o.Resources {
		switch r.Name {
		case "cpus":
			cpus += r.GetScalar().GetValue()
		case "mem":
			mem += r.GetScalar().GetValue()
		}
	}
	if first {
		cpus, mem = cpus-0.1, mem-32
	}
	var tasks []mesos.TaskInfo
	lb.mu.Lock()
	inflight := lb.launched - lb.finished
	lb.mu.Unlock()
	for cpus >= 0.01 && mem >= 1 && lb.launched < b.N && len(tasks) < maxPerOffer && inflight < maxInFlight {
		inflight++
		lb.launched++
		ti := execTask(fmt.Sprintf("t%d", lb.launched), o, ex, "")
		ti.Resources = []mesos.Resource{scalar("cpus", 0.01), scalar("mem", 1)}
		tasks = append(tasks, ti)
		cpus -= 0.01
		mem--
	}
	if len(tasks) == 0 {
		fw.call(declineCall(o))
		return
	}
	now := time.Now()
	lb.mu.Lock()
	for _, ti := range tasks {
		lb.accepted[ti.TaskID.Value] = now
	}
	lb.mu.Unlock()
	if err := fw.call(launch(o, tasks...)); err != nil {
		b.Fatalf("ACCEPT: %v", err)
	}
}

// profileWhenUnderway saves a 3-second CPU profile of each named server
// into dir once underway closes (or not at all if the benchmark ends first).
func profileWhenUnderway(b *testing.B, dir string, servers map[string]string, underway <-chan struct{}) {
	ended := make(chan struct{})
	b.Cleanup(func() { close(ended) })
	for name, addr := range servers {
		go func(name, addr string) {
			select {
			case <-underway:
			case <-ended:
				return
			}
			resp, err := http.Get("http://" + addr + "/debug/pprof/profile?seconds=3")
			if err != nil {
				return
			}
			defer resp.Body.Close()
			f, err := os.Create(filepath.Join(dir, name+".prof"))
			if err == nil {
				io.Copy(f, resp.Body)
				f.Close()
			}
		}(name, addr)
	}
}
