package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// spinShell keeps four processes spinning, so that two such tasks on a
// two-core host are both always runnable and the shares decide.
const spinShell = `for i in 1 2 3 4; do (while :; do :; done) & done; wait`

// BenchmarkIsolationCgroupsCPUShares measures what the shares of
// TestIsolationCgroupsCPUShares do: two executors with cpus 1 and 3 both
// spin, and each iteration reads their cgroups' CPU time counters over a
// window that ends when the two together have had windowCPU. It reports the ratio of the two (3 if the shares alone
// decide; about 1 without working shares; other work on the host, which
// the shares do not govern, moves it too) and the CPU seconds each got.
//
//	sudo go test ./integration -run '^$' -bench IsolationCgroupsCPUShares -benchtime 3x
func BenchmarkIsolationCgroupsCPUShares(b *testing.B) {
	if why := cgroupsMissing(); why != "" {
		b.Skip("skipping cgroups isolation benchmark: " + why)
	}
	c := isolatedCluster(b, "cgroups/cpu,cgroups/mem")
	fw := subscribe(b, c.MasterAddr, mesos.FrameworkInfo{Name: "spinners"})
	o := fw.takeOffer(b, "")
	if err := fw.call(launch(o, cmdTask("one", o, spinShell, 1, 32), cmdTask("three", o, spinShell, 3, 32))); err != nil {
		b.Fatal(err)
	}
	fw.waitState(b, "one", mesos.TASK_RUNNING)
	fw.waitState(b, "three", mesos.TASK_RUNNING)
	testcluster.WaitFor(b, 30*time.Second, "all eight spinners in their containers", func() bool {
		n := spinners(c.Agents[0].Dir)
		return n["one"] == 5 && n["three"] == 5 // the shell and its four
	})
	b.ResetTimer()
	var one, three uint64
	for i := 0; i < b.N; i++ {
		d1, d3, wall := cpuWindow(b, c.Agents[0].Dir)
		b.Logf("window %d, %v: cpus 1: %.2fs CPU, cpus 3: %.2fs CPU, ratio %.2f", i+1, wall.Round(time.Millisecond),
			float64(d1)/1e9, float64(d3)/1e9, float64(d3)/float64(d1))
		one, three = one+d1, three+d3
	}
	b.StopTimer()
	b.ReportMetric(float64(three)/float64(one), "cpu3/cpu1")
	b.ReportMetric(float64(one)/1e9/float64(b.N), "cpu1-s/window")
	b.ReportMetric(float64(three)/1e9/float64(b.N), "cpu3-s/window")
	fw.call(calls.Kill("one", o.AgentID.Value))
	fw.call(calls.Kill("three", o.AgentID.Value))
	fw.waitState(b, "one", mesos.TASK_KILLED)
	fw.waitState(b, "three", mesos.TASK_KILLED)
	containersGone(b, c.Agents[0].Dir)
}

// windowCPU is the CPU time a measured window gives the two spinners
// together: a window of work, not of wall time, so a loaded host makes it
// longer rather than emptier.
const windowCPU = 4 * time.Second

// cpuWindow waits until the containers of executors one and three have
// had windowCPU together since it was called, and returns what each had
// and how long that took.
func cpuWindow(b *testing.B, workDir string) (one, three uint64, wall time.Duration) {
	start, before := time.Now(), containerCPU(workDir)
	for deadline := start.Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		after := containerCPU(workDir)
		one, three = after["one"]-before["one"], after["three"]-before["three"]
		if one+three >= uint64(windowCPU) {
			return one, three, time.Since(start)
		}
		if time.Now().After(deadline) {
			b.Fatalf("the spinners had %v of CPU in 2 minutes", time.Duration(one+three))
		}
	}
}

// spinners counts, per executor, the processes running spinShell in the
// agent's containers.
func spinners(workDir string) map[string]int {
	out := map[string]int{}
	for _, d := range testcluster.AgentCgroups(workDir) {
		if _, err := os.Stat(filepath.Join(d, "cpu.shares")); err != nil {
			if _, err := os.Stat(filepath.Join(d, "cpu.weight")); err != nil {
				continue // v1: count each container once, in its cpu cgroup
			}
		}
		ids := containerExecutors(d)
		if len(ids) != 1 {
			continue
		}
		procs, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, p := range strings.Fields(string(procs)) {
			if cmd, _ := os.ReadFile("/proc/" + p + "/cmdline"); strings.Contains(string(cmd), "while :; do :; done") {
				out[ids[0]]++
			}
		}
	}
	return out
}
