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
	// The framework keeps at most maxInFlight tasks between ACCEPT and
	// FINISHED, as a real one paces itself; more only queues and inflates
	// the ACCEPT-to-RUNNING time without adding throughput.
	const maxInFlight, maxPerOffer = 64, 64
	// ALLOT_BENCH_ISOLATION=posix/cpu,posix/mem (or cgroups/cpu,cgroups/mem)
	// sets the agents' --isolation, to measure what isolation costs.
	// The agents serve their profiler only with --pprof.
	af := append([]string{}, agentFlags...)
	if iso := os.Getenv("ALLOT_BENCH_ISOLATION"); iso != "" {
		af = append(af, "--isolation", iso)
	}
	if os.Getenv("ALLOT_BENCH_PROFILE") != "" {
		af = append(af, "--pprof")
	}
	c := &cluster{testcluster.New(b, testcluster.Config{Bin: allotBin, Agents: 4,
		MasterFlags: []string{"--log-level", "debug", "--allocation-interval", "50ms"}, AgentFlags: af})}
	var (
		mu       sync.Mutex
		accepted = map[string]time.Time{}
		latency  []time.Duration
		finished int
		// underway closes when the first task finishes: the run is in
		// its steady state from then on.
		underway = make(chan struct{})
	)
	fw := subscribeDirect(b, c.MasterAddr, mesos.FrameworkInfo{Name: "bench", User: "root"}, func(st mesos.TaskStatus) {
		now := time.Now()
		mu.Lock()
		switch st.GetState() {
		case mesos.TASK_RUNNING:
			if t0, ok := accepted[st.TaskID.Value]; ok {
				latency = append(latency, now.Sub(t0))
			}
		case mesos.TASK_FINISHED:
			if finished++; finished == 1 {
				close(underway)
			}
		}
		mu.Unlock()
	})
	// ALLOT_BENCH_PROFILE=dir saves 3-second CPU profiles of the master and
	// the first agent, taken once the first task has finished.
	if dir := os.Getenv("ALLOT_BENCH_PROFILE"); dir != "" {
		ended := make(chan struct{})
		b.Cleanup(func() { close(ended) })
		for name, addr := range map[string]string{"master": c.MasterAddr, "agent": c.Agents[0].Addr} {
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
	executors := map[string]*mesos.ExecutorInfo{}
	launched := 0
	b.ResetTimer()
	start := time.Now()
	for {
		mu.Lock()
		done := finished >= b.N
		mu.Unlock()
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
				b.Fatalf("only %d of %d tasks finished", finished, b.N)
			}
			continue
		}
		for _, o := range offers {
			ex := executors[o.AgentID.Value]
			first := ex == nil
			if first {
				ex = execInfo("bench-" + o.AgentID.Value)
				executors[o.AgentID.Value] = ex
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
			mu.Lock()
			inflight := launched - finished
			mu.Unlock()
			for cpus >= 0.01 && mem >= 1 && launched < b.N && len(tasks) < maxPerOffer && inflight < maxInFlight {
				inflight++
				launched++
				ti := execTask(fmt.Sprintf("t%d", launched), o, ex, "")
				ti.Resources = []mesos.Resource{scalar("cpus", 0.01), scalar("mem", 1)}
				tasks = append(tasks, ti)
				cpus -= 0.01
				mem--
			}
			if len(tasks) == 0 {
				fw.call(declineCall(o))
				continue
			}
			now := time.Now()
			mu.Lock()
			for _, ti := range tasks {
				accepted[ti.TaskID.Value] = now
			}
			mu.Unlock()
			if err := fw.call(launch(o, tasks...)); err != nil {
				b.Fatalf("ACCEPT: %v", err)
			}
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(latency, func(i, j int) bool { return latency[i] < latency[j] })
	pct := func(p float64) float64 {
		if len(latency) == 0 {
			return 0
		}
		return float64(latency[int(p*float64(len(latency)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tasks/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
