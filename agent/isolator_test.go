package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func TestParseIsolation(t *testing.T) {
	tests := []struct {
		in      string
		want    isolation
		wantErr bool
	}{
		{"", isolation{auto: true, cpu: true, mem: true}, false},
		{"auto", isolation{auto: true, cpu: true, mem: true}, false},
		{"cgroups/cpu,cgroups/mem", isolation{cgroups: true, cpu: true, mem: true}, false},
		{"cgroups/mem", isolation{cgroups: true, mem: true}, false},
		{"posix/cpu,posix/mem", isolation{cpu: true, mem: true}, false},
		{"posix", isolation{cpu: true, mem: true}, false},
		{"cgroups/cpu,posix/mem", isolation{}, true},
		{"docker/volume", isolation{}, true},
		{"cgroups,filesystem/linux,docker/runtime", isolation{cgroups: true, cpu: true, mem: true, fsLinux: true, dockerRuntime: true}, false},
		{"filesystem/linux", isolation{fsLinux: true}, false},
		{"cgroups/gpu", isolation{}, true},
		{"cgroups/cpu,cgroups/mem,disk/du", isolation{cgroups: true, cpu: true, mem: true, disk: true}, false},
		{"posix,disk/du", isolation{cpu: true, mem: true, disk: true}, false},
		{"disk/du", isolation{disk: true}, false},
		{"disk/xfs", isolation{}, true},
		{"cgroups,gpu/nvidia", isolation{cgroups: true, cpu: true, mem: true, gpu: true}, false},
		{"auto,gpu/nvidia", isolation{auto: true, cpu: true, mem: true, gpu: true}, false},
		{"auto,cgroups/cpu", isolation{}, true},
	}
	for _, tc := range tests {
		got, err := parseIsolation(tc.in)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("parseIsolation(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func scalarRes(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

func TestExecutorLimits(t *testing.T) {
	task := func(id string, cpus, mem float64) *agentTask {
		return &agentTask{info: mesos.TaskInfo{TaskID: mesos.TaskID{Value: id}, Resources: []mesos.Resource{scalarRes("cpus", cpus), scalarRes("mem", mem)}}}
	}
	tests := []struct {
		name string
		ex   *executor
		want limits
	}{
		{"command task", &executor{tasks: map[string]*agentTask{"a": task("a", 1, 64)}}, limits{cpus: 1, memBytes: 64<<20 + executorOverheadMem}},
		{"executor and two tasks", &executor{info: mesos.ExecutorInfo{Resources: []mesos.Resource{scalarRes("cpus", 0.5), scalarRes("mem", 32)}},
			tasks: map[string]*agentTask{"a": task("a", 1, 64), "b": task("b", 2, 128)}}, limits{cpus: 3.5, memBytes: 224<<20 + executorOverheadMem}},
		{"no mem: no memory limit", &executor{tasks: map[string]*agentTask{"a": task("a", 1, 0)}}, limits{cpus: 1}},
	}
	for _, tc := range tests {
		if got := executorLimits(tc.ex); got != tc.want {
			t.Errorf("%s: executorLimits = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// fakeCgroupRoot lays out a cgroup mount in a temporary directory: v2 is
// marked by cgroup.controllers, v1 by per-controller directories. Control
// files are plain files there, so prepare's writes can be read back.
func fakeCgroupRoot(t *testing.T, v2 bool) string {
	root := t.TempDir()
	if v2 {
		os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu memory pids"), 0o644)
		return root
	}
	for _, c := range []string{"cpu", "cpuacct", "memory", "pids"} {
		os.MkdirAll(filepath.Join(root, c), 0o755)
	}
	return root
}

func TestCgroupsPrepareAndLimited(t *testing.T) {
	tests := []struct {
		v2      bool
		files   map[string]string // file under the container (v1: controller/file) -> want
		oomFile string
		oom     string
		peak    string
	}{
		{true, map[string]string{"cpu.weight": "118", "cpu.max": "300000 100000", "memory.max": "100663296", "pids.max": "4096"},
			"memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n", "memory.peak"},
		{false, map[string]string{"cpu/cpu.shares": "3072", "cpu/cpu.cfs_quota_us": "300000", "memory/memory.limit_in_bytes": "100663296",
			"memory/memory.memsw.limit_in_bytes": "100663296", "pids/pids.max": "4096"},
			"memory/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "memory/memory.max_usage_in_bytes"},
	}
	for _, tc := range tests {
		root := fakeCgroupRoot(t, tc.v2)
		cg, err := newCgroups(root, "allot/wtest", true, true, true)
		if err != nil {
			t.Fatalf("v2=%v: newCgroups: %v", tc.v2, err)
		}
		l := limits{cpus: 3, memBytes: 96 << 20}
		if err := cg.prepare("c1", l); err != nil {
			t.Fatalf("v2=%v: prepare: %v", tc.v2, err)
		}
		at := func(f string) string {
			if tc.v2 {
				return filepath.Join(root, "allot/wtest/c1", f)
			}
			ctl, file, _ := strings.Cut(f, "/")
			return filepath.Join(root, ctl, "allot/wtest/c1", file)
		}
		for f, want := range tc.files {
			if got := readCg(at(f)); got != want {
				t.Errorf("%s: %s = %q, want %q", cg.kind(), f, got, want)
			}
		}
		if lim := cg.limited("c1", 1, l); lim != nil {
			t.Errorf("%s: limited before any OOM kill: %+v", cg.kind(), lim)
		}
		os.WriteFile(at(tc.oomFile), []byte(tc.oom), 0o644)
		os.WriteFile(at(tc.peak), []byte("104857600"), 0o644)
		lim := cg.limited("c1", 1, l)
		if lim == nil || lim.reason != mesos.REASON_CONTAINER_LIMITATION_MEMORY ||
			!strings.Contains(lim.message, "limit 96 MB") || !strings.Contains(lim.message, "peak 100 MB") {
			t.Errorf("%s: limited after an OOM kill = %+v, want REASON_CONTAINER_LIMITATION_MEMORY naming limit 96 MB and peak 100 MB", cg.kind(), lim)
		}
		if ids := cg.containers(); len(ids) != 1 || ids[0] != "c1" {
			t.Errorf("%s: containers = %v, want [c1]", cg.kind(), ids)
		}
	}
}

func TestNewIsolatorFallsBack(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-cgroups")
	iso, why, err := newIsolator(isolation{auto: true, cpu: true, mem: true}, missing, t.TempDir(), false)
	if err != nil || iso.kind() != "posix" || !strings.Contains(why, "posix fallback") {
		t.Errorf("auto without cgroups = %v, %q, %v; want posix with a reason", iso, why, err)
	}
	if _, _, err := newIsolator(isolation{cgroups: true, cpu: true, mem: true}, missing, t.TempDir(), false); err == nil {
		t.Error("cgroups requested without cgroups: no error")
	}
	iso, _, err = newIsolator(isolation{cgroups: true, cpu: true, mem: true}, fakeCgroupRoot(t, true), t.TempDir(), false)
	if err != nil || iso.kind() != "cgroups/v2" {
		t.Errorf("cgroups on a v2 root = %v, %v; want cgroups/v2", iso, err)
	}
}

// realCgroups returns the host's cgroups isolator under a parent of the
// test's own, or skips naming what is missing.
func realCgroups(t *testing.T) *cgroupsIsolator {
	if os.Geteuid() != 0 {
		t.Skip("cgroups isolation needs root to create cgroups; running as uid", os.Geteuid())
	}
	cg, err := newCgroups("/sys/fs/cgroup", fmt.Sprintf("allot-test/%d", os.Getpid()), true, true, false)
	if err != nil {
		t.Skip("host cannot do cgroups isolation: ", err)
	}
	t.Cleanup(func() {
		for _, d := range cg.dirs {
			syscall.Rmdir(filepath.Join(d, cg.parent))
			syscall.Rmdir(filepath.Dir(filepath.Join(d, cg.parent)))
		}
	})
	return cg
}

// On the host's real cgroups: a process that allocates past its limit is
// OOM-killed inside its container, the isolator reports it with the limit
// and the peak, and destroy leaves no cgroup behind.
func TestCgroupsOOMKillReal(t *testing.T) {
	cg := realCgroups(t)
	l := limits{cpus: 0.5, memBytes: 32 << 20}
	if err := cg.prepare("oom", l); err != nil {
		t.Fatal(err)
	}
	argv := cg.wrap("oom", []string{"/bin/sh", "-c", `x=$(head -c 200000000 /dev/zero | tr '\0' a); sleep 30`})
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("the allocating process ended with %v, want an OOM kill", err)
		}
		if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("exit status %v, want killed by SIGKILL", ws)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("a process allocating 200 MB in a 32 MB container was not killed in 20s")
	}
	lim := cg.limited("oom", cmd.Process.Pid, l)
	if lim == nil || lim.reason != mesos.REASON_CONTAINER_LIMITATION_MEMORY || !strings.Contains(lim.message, "limit 32 MB") {
		t.Errorf("limited = %+v, want a memory limitation naming limit 32 MB", lim)
	} else {
		t.Log(lim.message)
	}
	if err := cg.destroy("oom", 0); err != nil {
		t.Fatal(err)
	}
	for _, d := range cg.leaves("oom") {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", d, err)
		}
	}
}

// The posix isolator notices a process tree over its memory from /proc.
func TestPosixLimitedReal(t *testing.T) {
	p := &posixIsolator{mem: true}
	cmd := exec.Command("/bin/sh", "-c", `x=$(head -c 100000000 /dev/zero | tr '\0' a); sleep 30`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { killTree(cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	l := limits{memBytes: 48 << 20}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if lim := p.limited("", cmd.Process.Pid, l); lim != nil {
			if lim.reason != mesos.REASON_CONTAINER_LIMITATION_MEMORY || !strings.Contains(lim.message, "limit 48 MB") {
				t.Errorf("limitation = %+v", lim)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("posix isolator did not notice 100 MB resident against a 48 MB limit in 20s")
}

// internal/testcluster finds an agent's cgroups by this name and pins the
// same value (TestAgentCgroupParent): change both together.
func TestContainerParentPinned(t *testing.T) {
	if got, want := containerParent("/tmp/allot-work"), "allot/w3c4714a6"; got != want {
		t.Errorf("containerParent = %q, want %q", got, want)
	}
}

// recordingIsolator records the limits it is given.
type recordingIsolator struct {
	posixIsolator
	mu       sync.Mutex
	prepared []limits
}

func (r *recordingIsolator) prepare(_ string, l limits) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prepared = append(r.prepared, l)
	return nil
}

// Tasks joining a running executor grow its container; the memory limit
// never shrinks while it lives, the cpu share follows the tasks.
func TestSetLimitsGrowsContainer(t *testing.T) {
	rec := &recordingIsolator{}
	a := &Agent{iso: rec}
	task := func(id string, cpus, mem float64) *agentTask {
		return &agentTask{info: mesos.TaskInfo{TaskID: mesos.TaskID{Value: id}, Resources: []mesos.Resource{scalarRes("cpus", cpus), scalarRes("mem", mem)}}}
	}
	ex := &executor{containerID: "c", pid: 1, tasks: map[string]*agentTask{"a": task("a", 1, 64)}}
	settle := func() limits {
		testWait(t, func() bool { a.mu.Lock(); defer a.mu.Unlock(); return !ex.resizing })
		a.mu.Lock()
		defer a.mu.Unlock()
		return ex.applied
	}
	steps := []struct {
		change func()
		want   limits
	}{
		{func() {}, limits{cpus: 1, memBytes: 64<<20 + executorOverheadMem}},
		{func() { ex.tasks["b"] = task("b", 2, 128) }, limits{cpus: 3, memBytes: 192<<20 + executorOverheadMem}},
		{func() { delete(ex.tasks, "b"); ex.tasks["c"] = task("c", 0.5, 16) }, limits{cpus: 1.5, memBytes: 192<<20 + executorOverheadMem}},
	}
	for i, s := range steps {
		a.mu.Lock()
		s.change()
		a.setLimitsLocked(ex, true)
		a.mu.Unlock()
		if got := settle(); got != s.want {
			t.Errorf("step %d: container limits %+v, want %+v", i, got, s.want)
		}
	}
}

// testWait polls cond until it holds; the deadline is generous because a
// loaded host may be slow, and it costs only when the test fails.
func testWait(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 30s")
}

// On the host's real cgroups: kill reaches every process in the container,
// also one that left the executor's process tree (an orphan in a session of
// its own, reparented to init), which signalling the tree from the
// executor's pid misses; destroy then leaves nothing behind.
func TestCgroupsKillReachesOrphans(t *testing.T) {
	cg := realCgroups(t)
	if err := cg.prepare("orphans", limits{cpus: 0.1}); err != nil {
		t.Fatal(err)
	}
	defer cg.destroy("orphans", 0)
	pidFile := filepath.Join(t.TempDir(), "orphan")
	argv := cg.wrap("orphans", []string{"/bin/sh", "-c", `(setsid sleep 60 & echo $! > ` + pidFile + `); sleep 60`})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	var orphan int
	testWait(t, func() bool {
		b, _ := os.ReadFile(pidFile)
		orphan, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return orphan > 0
	})
	alive := func(pid int) bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err == nil && !strings.Contains(string(b), ") Z ")
	}
	testWait(t, func() bool { return alive(orphan) })
	// Out of the tree once the subshell that started it has exited.
	testWait(t, func() bool { return !slices.Contains(treePids(cmd.Process.Pid, readProcs()), orphan) })
	cg.kill("orphans", cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the container's main process survived kill")
	}
	testWait(t, func() bool { return !alive(orphan) })
	if err := cg.destroy("orphans", 0); err != nil {
		t.Fatal(err)
	}
	for _, d := range cg.leaves("orphans") {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", d, err)
		}
	}
}

// killRecorder records the signals its containers get.
type killRecorder struct {
	posixIsolator
	mu   sync.Mutex
	sigs []syscall.Signal
}

func (k *killRecorder) kill(_ string, _ int, sig syscall.Signal) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sigs = append(k.sigs, sig)
}

func (k *killRecorder) got() []syscall.Signal {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.sigs)
}

// Once a plain command task's terminal update is acknowledged, the agent
// shuts its command executor down and, as it does not exit here, kills its
// container after the grace period (SIGTERM, then SIGKILL half a grace
// later, neither sooner); an executor that may run more tasks, or a task
// not yet over, is left alone: no timer is even armed.
func TestAckedCommandExecutorShutDown(t *testing.T) {
	tests := []struct {
		name        string
		commandTask bool
		state       mesos.TaskState
		want        []syscall.Signal
	}{
		{"command task killed", true, mesos.TASK_KILLED, []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}},
		{"command task running", true, mesos.TASK_RUNNING, nil},
		{"task group executor", false, mesos.TASK_FINISHED, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &killRecorder{}
			clock := newManualClock()
			grace := 40 * time.Second
			a := &Agent{iso: rec, executors: map[string]*executor{}, cfg: Config{ShutdownGrace: grace, Clock: clock}}
			st := &mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t"}, State: tc.state.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: []byte("u1")}
			ex := &executor{fw: "f", id: "t", command: true, commandTask: tc.commandTask, containerID: "c", pid: 1 << 22,
				tasks: map[string]*agentTask{"t": {info: mesos.TaskInfo{TaskID: st.TaskID}, state: tc.state, latest: st, pending: []*mesos.TaskStatus{st}}}}
			a.executors[exKey("f", "t")] = ex
			a.acknowledged("f", "t", []byte("u1"))
			a.mu.Lock()
			killing := ex.killing
			a.mu.Unlock()
			if killing != (tc.want != nil) {
				t.Fatalf("executor shut down = %v, want %v", killing, tc.want != nil)
			}
			// Each wait, armed and then passed but for a nanosecond, then
			// passed: the signals come at its end.
			for i, wait := range []time.Duration{grace, grace / 2}[:len(tc.want)] {
				clock.waitPending(t, 1)
				clock.Advance(wait - 1)
				if got := rec.got(); len(got) != i {
					t.Fatalf("container got %v a nanosecond before wait %d ended", got, i+1)
				}
				clock.Advance(1)
				testWait(t, func() bool { return len(rec.got()) > i })
			}
			if n := clock.pending(); tc.want == nil && n != 0 {
				t.Errorf("%d timers armed for an executor left alone", n)
			}
			if got := rec.got(); !slices.Equal(got, tc.want) {
				t.Errorf("container got %v, want %v", got, tc.want)
			}
		})
	}
}
