package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/internal/testcluster"
)

// cgroupsMissing names what this host lacks for cgroups isolation, or
// returns "" when an agent can create containers here.
func cgroupsMissing() string {
	if os.Geteuid() != 0 {
		return fmt.Sprintf("cgroups isolation needs root (running as uid %d)", os.Geteuid())
	}
	probe := ""
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		probe = "/sys/fs/cgroup"
	} else if st, err := os.Stat("/sys/fs/cgroup/memory"); err == nil && st.IsDir() {
		probe = "/sys/fs/cgroup/memory"
	} else {
		return "no cgroup v2 (/sys/fs/cgroup/cgroup.controllers) and no cgroup v1 memory hierarchy (/sys/fs/cgroup/memory)"
	}
	d := filepath.Join(probe, fmt.Sprintf("allot-probe-%d", os.Getpid()))
	if err := os.Mkdir(d, 0o755); err != nil {
		return "cgroups not writable: " + err.Error()
	}
	syscall.Rmdir(d)
	return ""
}

func isolatedCluster(t testing.TB, isolation string) *cluster {
	t.Helper()
	return &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1,
		MasterFlags: []string{"--log-level", "debug"},
		AgentFlags:  append(append([]string{}, agentFlags...), "--isolation", isolation)})}
}

// hogShell allocates 512 MB in the shell itself (a command substitution
// holds all of it) and keeps it.
const hogShell = `x=$(head -c 536870912 /dev/zero | tr '\0' a); sleep 60`

// oomAndNeighbour launches a 64 MB task that allocates 512 MB beside a
// neighbour, and checks the hog is failed by the agent for its memory
// while the neighbour runs on. It returns the hog's status.
func oomAndNeighbour(t *testing.T, c *cluster) mesos.TaskStatus {
	t.Helper()
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "isolated"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("neighbour", o, "sleep 60", 0.1, 32), cmdTask("hog", o, hogShell, 0.1, 64))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "neighbour", mesos.TASK_RUNNING)
	neighbour := sandboxPids(c.Dir, "neighbour")
	if len(neighbour) == 0 {
		t.Fatal("no process of the neighbour's executor found")
	}
	st := fw.waitState(t, "hog", mesos.TASK_FAILED)
	if st.GetSource() != mesos.SOURCE_AGENT || st.GetReason() != mesos.REASON_CONTAINER_LIMITATION_MEMORY {
		t.Errorf("hog failed with source %v reason %v, want SOURCE_AGENT, REASON_CONTAINER_LIMITATION_MEMORY (message %q)",
			st.GetSource(), st.GetReason(), st.GetMessage())
	}
	// 64 MB allocated plus the 32 MB executor overhead.
	if msg := st.GetMessage(); !strings.Contains(msg, "limit 96 MB") || !strings.Contains(msg, "peak ") {
		t.Errorf("hog's message %q does not give the limit (96 MB) and the peak", msg)
	}
	t.Logf("hog: %s", st.GetMessage())
	// The hog was killed before its TASK_FAILED was sent: the neighbour's
	// processes are still there after it, and the neighbour's first end is
	// the kill the scheduler sends now (an end caused by the hog's kill
	// would have been reported first).
	for _, pid := range neighbour {
		if !alive(pid) {
			t.Errorf("neighbour's process %d died when the hog was killed", pid)
		}
	}
	if err := fw.call(calls.Kill("neighbour", o.AgentID.Value)); err != nil {
		t.Fatal(err)
	}
	if end := firstTerminal(t, fw, "neighbour"); end != mesos.TASK_KILLED {
		t.Errorf("neighbour ended (%v) when the hog was killed; states %v", end, fw.states("neighbour"))
	}
	return st
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// isolationShown checks the agent's /state and the master's entry for it
// name the isolator.
func isolationShown(t *testing.T, c *cluster, want func(string) bool) {
	t.Helper()
	doc, err := agentState(c.Agents[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := doc["isolation"].(string); !want(got) {
		t.Errorf("agent /state isolation = %q (reason %q)", got, doc["isolation_reason"])
	}
	var ms operator.State
	resp, err := http.Get("http://" + c.MasterAddr + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(&ms)
	if len(ms.Slaves) != 1 || !want(ms.Slaves[0].Isolation) {
		t.Errorf("master /state slaves = %+v, want the agent's isolation", ms.Slaves)
	}
}

// A task allocated 64 MB that allocates 512 MB is OOM-killed in its
// cgroup and reported by the agent; its neighbour keeps running; usage
// comes from the container; no cgroup is left once the executors end.
func TestIsolationCgroupsOOMKill(t *testing.T) {
	if why := cgroupsMissing(); why != "" {
		t.Skip("skipping cgroups isolation test: " + why)
	}
	c := isolatedCluster(t, "cgroups/cpu,cgroups/mem")
	isolationShown(t, c, func(s string) bool { return strings.HasPrefix(s, "cgroups/v") })
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "measured"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("watched", o, "sleep 60", 0.5, 40))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "watched", mesos.TASK_RUNNING)
	// The limit /monitor/statistics shows is the container's own.
	testcluster.WaitFor(t, 30*time.Second, "the container's memory limit in /monitor/statistics", func() bool {
		return containerMemLimit(c.Agents[0].Addr, "watched") == (40+32)<<20
	})
	fw.call(calls.Kill("watched", o.AgentID.Value))
	fw.waitState(t, "watched", mesos.TASK_KILLED)
	fw.close()
	oomAndNeighbour(t, c)
	containersGone(t, c.Agents[0].Dir)
}

func containerMemLimit(agentAddr, executorID string) uint64 {
	var stats []struct {
		ExecutorID string `json:"executor_id"`
		Statistics struct {
			MemLimitBytes uint64 `json:"mem_limit_bytes"`
		} `json:"statistics"`
	}
	resp, err := http.Get("http://" + agentAddr + "/monitor/statistics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(&stats)
	for _, s := range stats {
		if s.ExecutorID == executorID {
			return s.Statistics.MemLimitBytes
		}
	}
	return 0
}

// With cgroups switched off by flag, the posix isolator samples /proc and
// kills the hog for its memory with the same reason; no cgroup is made.
func TestIsolationPosixFallback(t *testing.T) {
	c := isolatedCluster(t, "posix/cpu,posix/mem")
	isolationShown(t, c, func(s string) bool { return s == "posix" })
	oomAndNeighbour(t, c)
	if left := testcluster.AgentCgroups(c.Agents[0].Dir); len(left) != 0 {
		t.Errorf("posix isolation made cgroups: %v", left)
	}
}

// Two executors with cpus 1 and 3 get cpu shares in that ratio: their
// cgroups hold the shares the agent computed (cpus x 1024 on cgroup v1,
// runc's mapping of that to cpu.weight on v2). How the kernel then divides
// CPU time depends on what else the host runs, so it is measured by
// BenchmarkIsolationCgroupsCPUShares, not asserted here.
func TestIsolationCgroupsCPUShares(t *testing.T) {
	if why := cgroupsMissing(); why != "" {
		t.Skip("skipping cgroups isolation test: " + why)
	}
	c := isolatedCluster(t, "cgroups/cpu,cgroups/mem")
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "shares"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("one", o, "sleep 60", 1, 32), cmdTask("three", o, "sleep 60", 3, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "one", mesos.TASK_RUNNING)
	fw.waitState(t, "three", mesos.TASK_RUNNING)
	want := map[string]map[string]string{
		"cpu.shares": {"one": "1024", "three": "3072"},
		"cpu.weight": {"one": "39", "three": "118"},
	}
	var got map[string]string
	var file string
	testcluster.WaitFor(t, 30*time.Second, "both containers' cpu shares", func() bool {
		file, got = containerCPUShares(c.Agents[0].Dir)
		return got["one"] != "" && got["three"] != ""
	})
	if w := want[file]; got["one"] != w["one"] || got["three"] != w["three"] {
		t.Errorf("%s: cpus 1 holds %s, cpus 3 holds %s; want %s and %s", file, got["one"], got["three"], w["one"], w["three"])
	}
	fw.call(calls.Kill("one", o.AgentID.Value))
	fw.call(calls.Kill("three", o.AgentID.Value))
	fw.waitState(t, "one", mesos.TASK_KILLED)
	fw.waitState(t, "three", mesos.TASK_KILLED)
	containersGone(t, c.Agents[0].Dir)
}

// containerCPUShares reads each container's cpu shares (v1 cpu.shares, or
// v2 cpu.weight: file says which), keyed by the executor id of the
// processes in it.
func containerCPUShares(workDir string) (file string, out map[string]string) {
	out = map[string]string{}
	for _, d := range testcluster.AgentCgroups(workDir) {
		var v []byte
		for _, f := range []string{"cpu.shares", "cpu.weight"} {
			if b, err := os.ReadFile(filepath.Join(d, f)); err == nil {
				file, v = f, b
				break
			}
		}
		if v == nil {
			continue
		}
		for _, id := range containerExecutors(d) {
			out[id] = strings.TrimSpace(string(v))
		}
	}
	return file, out
}

// containerExecutors names the executors whose processes are in cgroup d.
func containerExecutors(d string) []string {
	var ids []string
	procs, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
	for _, p := range strings.Fields(string(procs)) {
		env, _ := os.ReadFile("/proc/" + p + "/environ")
		for _, kv := range strings.Split(string(env), "\x00") {
			if id, ok := strings.CutPrefix(kv, "MESOS_EXECUTOR_ID="); ok && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// containerCPU reads each container's CPU time (ns) from its cgroup
// counter (v1 cpuacct.usage, v2 cpu.stat usage_usec), keyed by the
// executor id of the processes in it.
func containerCPU(workDir string) map[string]uint64 {
	out := map[string]uint64{}
	for _, d := range testcluster.AgentCgroups(workDir) {
		var ns uint64
		if b, err := os.ReadFile(filepath.Join(d, "cpuacct.usage")); err == nil {
			fmt.Sscan(string(b), &ns)
		} else if b, err := os.ReadFile(filepath.Join(d, "cpu.stat")); err == nil {
			var us uint64
			fmt.Sscanf(string(b), "usage_usec %d", &us)
			ns = us * 1000
		} else {
			continue
		}
		procs, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, p := range strings.Fields(string(procs)) {
			env, _ := os.ReadFile("/proc/" + p + "/environ")
			for _, kv := range strings.Split(string(env), "\x00") {
				// v1's cpu hierarchy has a cpu.stat without usage_usec
				// (0 here); cpuacct's counter is the one that counts.
				if id, ok := strings.CutPrefix(kv, "MESOS_EXECUTOR_ID="); ok && ns > out[id] {
					out[id] = ns
				}
			}
		}
	}
	return out
}

// memCgroupOf returns the directory of pid's memory cgroup (v1 memory
// hierarchy, or v2's unified one) and the name of its limit file.
func memCgroupOf(pid int) (dir, limitFile string) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[1] == "memory" {
			return filepath.Join(testcluster.CgroupRoot, "memory", f[2]), "memory.limit_in_bytes"
		}
		if f[0] == "0" && f[1] == "" {
			dir, limitFile = filepath.Join(testcluster.CgroupRoot, f[2]), "memory.max"
		}
	}
	return dir, limitFile
}

// kill -9 an agent and start it again: a checkpointed executor stays in its
// container with its limits; a stale container under the agent's parent is
// removed at start; the recovered container goes when its executor ends.
func TestIsolationCgroupsAgentRestart(t *testing.T) {
	if why := cgroupsMissing(); why != "" {
		t.Skip("skipping cgroups isolation test: " + why)
	}
	c := isolatedCluster(t, "cgroups/cpu,cgroups/mem")
	a := c.Agents[0]
	fw := subscribe(t, c.MasterAddr, checkpointing("contained"))
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, execTask("long", o, execInfo("sleeper"), "sleep"))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "long", mesos.TASK_RUNNING)
	pids := sandboxPids(c.Dir, "sleeper")
	if len(pids) != 1 {
		t.Fatalf("executor processes = %v, want one", pids)
	}
	dir, limitFile := memCgroupOf(pids[0])
	if !strings.Contains(dir, testcluster.AgentCgroupParent(a.Dir)) {
		t.Fatalf("executor's memory cgroup %q is not under the agent's parent %s", dir, testcluster.AgentCgroupParent(a.Dir))
	}
	// executor 32 MB + task 16 MB + 32 MB overhead
	const want = "83886080"
	if got, _ := os.ReadFile(filepath.Join(dir, limitFile)); strings.TrimSpace(string(got)) != want {
		t.Fatalf("%s = %q, want %s", limitFile, got, want)
	}
	a.Kill(syscall.SIGKILL)
	stale := filepath.Join(filepath.Dir(dir), "stale-container")
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	c.StartAgent(a)
	c.WaitAgents(1)
	testcluster.WaitFor(t, 30*time.Second, "the stale container to be removed", func() bool {
		_, err := os.Stat(stale)
		return os.IsNotExist(err)
	})
	if got, _ := memCgroupOf(pids[0]); got != dir {
		t.Errorf("recovered executor's memory cgroup = %q, want still %q", got, dir)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, limitFile)); strings.TrimSpace(string(got)) != want {
		t.Errorf("after the restart %s = %q, want %s", limitFile, got, want)
	}
	// One KILL, once the restarted agent is registered with the master: the
	// agent holds it for the executor until that has re-subscribed.
	waitAgentRegistered(t, a.Addr)
	if err := fw.call(calls.Kill("long", o.AgentID.Value)); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "long", mesos.TASK_KILLED)
	// The executor outlives its last task until shut down.
	fw.call(calls.Shutdown("sleeper", o.AgentID.Value))
	testcluster.WaitFor(t, 15*time.Second, "the recovered executor's container to be removed", func() bool {
		return len(testcluster.AgentCgroups(a.Dir)) == 0
	})
}

// containersGone checks that the killed executors' cgroups go: every
// container is removed once its executor exits, and a command executor
// exits once its task's end is acknowledged (the agent shuts it down if
// not). On a loaded host the acknowledgement can beat the answer to the
// executor's update, which once made it miss its own exit. The wait is for
// the removal, not a timing; on failure it names what is still in each
// container.
func containersGone(t testing.TB, workDir string) {
	t.Helper()
	start := time.Now()
	for deadline := start.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if len(testcluster.AgentCgroups(workDir)) == 0 {
			t.Logf("containers removed within %v", time.Since(start).Round(time.Millisecond))
			return
		}
	}
	for _, d := range testcluster.AgentCgroups(workDir) {
		procs, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		var who []string
		for _, p := range strings.Fields(string(procs)) {
			stat, _ := os.ReadFile("/proc/" + p + "/stat")
			who = append(who, strings.TrimSpace(string(stat)))
		}
		t.Errorf("container %s still there 30 s after its tasks were killed; processes in it: %q", d, who)
	}
	t.Logf("executor processes still running: %v", sandboxPids(filepath.Dir(workDir), ""))
}

// Command executors held to 1 ms of CPU per 100 ms (a CFS quota) exit once
// their killed tasks' ends are acknowledged. Throttled, an executor often
// reads the acknowledgement before the answer to its own update; it used
// to miss its exit then and wait for an event that never came (a race,
// so not every run shows it). The agent's shutdown grace is set far
// beyond the wait, so that the executors end by themselves rather than by
// the agent's kill.
func TestIsolationCgroupsThrottledExecutorsExit(t *testing.T) {
	if why := cgroupsMissing(); why != "" {
		t.Skip("skipping cgroups isolation test: " + why)
	}
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1,
		AgentFlags: []string{"--isolation", "cgroups/cpu,cgroups/mem", "--cgroups-enable-cfs",
			"--executor-registration-timeout", "60s", "--shutdown-grace", "60s"}})}
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "throttled"})
	o := fw.takeOffer(t, "")
	var ids []string
	var tasks []mesos.TaskInfo
	for i := 0; i < 8; i++ {
		ids = append(ids, fmt.Sprintf("throttled-%d", i))
		tasks = append(tasks, cmdTask(ids[i], o, "sleep 120", 0.01, 32))
	}
	if err := fw.call(launch(o, tasks...)); err != nil {
		t.Fatal(err)
	}
	waitAll := func(want mesos.TaskState) {
		testcluster.WaitFor(t, 90*time.Second, "every task to reach "+want.String(), func() bool {
			for _, id := range ids {
				if !sawState(fw, id, want) {
					return false
				}
			}
			return true
		})
	}
	waitAll(mesos.TASK_RUNNING)
	for _, id := range ids {
		fw.call(calls.Kill(id, o.AgentID.Value))
	}
	waitAll(mesos.TASK_KILLED)
	start := time.Now()
	running := func() (out []string) {
		for _, id := range ids {
			if len(sandboxPids(c.Dir, id)) > 0 {
				out = append(out, id)
			}
		}
		return out
	}
	for time.Since(start) < 20*time.Second && len(running()) > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	if left := running(); len(left) > 0 {
		t.Fatalf("executors %v still running 20 s after their tasks were reported KILLED", left)
	}
	t.Logf("every executor exited within %v of its task's KILLED", time.Since(start).Round(time.Millisecond))
	containersGone(t, c.Agents[0].Dir)
}
