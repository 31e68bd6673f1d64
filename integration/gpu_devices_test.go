package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/internal/testcluster"
)

// fakeNvidiaSMI is a stand-in for the driver's nvidia-smi over a fake
// device tree under root: --query-gpu lists every GPU (what the agent
// asks), -L lists those whose device file the caller may open, as NVML
// does inside a devices cgroup (a denied open is EPERM; an allowed one of
// a fake major with no driver behind it is ENXIO).
func fakeNvidiaSMI(root string) string {
	return `#!/bin/sh
root='` + root + `'
if [ "$1" = -L ]; then
	for f in "$root"/dev/nvidia[0-9]*; do
		n=${f##*nvidia}
		case "$( (exec 3<"$f") 2>&1 )" in
		*"not permitted"*) ;;
		*) echo "GPU $n: Fake GPU (UUID: GPU-fake-$n)" ;;
		esac
	done
	exit 0
fi
for f in "$root"/dev/nvidia[0-9]*; do n=${f##*nvidia}; echo "$n, GPU-fake-$n, Fake GPU, 1024"; done
`
}

// fakeGPUTree makes root/dev/nvidia0..n-1, nvidiactl and nvidia-uvm as
// character devices of a major no driver of this host registered, or says
// why it cannot.
func fakeGPUTree(root string, n int) string {
	if os.Geteuid() != 0 {
		return "device files need root (running as uid " + strconv.Itoa(os.Geteuid()) + ")"
	}
	if _, err := os.Stat("/sys/fs/cgroup/devices/devices.allow"); err != nil {
		return "no cgroup v1 devices hierarchy at /sys/fs/cgroup/devices"
	}
	b, _ := os.ReadFile("/proc/devices")
	major := 0
	for _, m := range []int{60, 61, 62, 63, 120, 121, 122, 123, 240, 241, 242} {
		if !strings.Contains(string(b), "\n"+strconv.Itoa(m)+" ") && !strings.Contains(string(b), "\n "+strconv.Itoa(m)+" ") {
			major = m
			break
		}
	}
	if major == 0 {
		return "no unused character major for fake GPUs"
	}
	os.MkdirAll(filepath.Join(root, "dev"), 0o755)
	nodes := map[string]int{"nvidiactl": major<<8 | 255, "nvidia-uvm": (major+1)<<8 | 0}
	for i := 0; i < n; i++ {
		nodes["nvidia"+strconv.Itoa(i)] = major<<8 | i
	}
	for name, dev := range nodes {
		if err := syscall.Mknod(filepath.Join(root, "dev", name), syscall.S_IFCHR|0o666, dev); err != nil {
			return fmt.Sprintf("mknod %s: %v", name, err)
		}
	}
	if f, err := os.Open(filepath.Join(root, "dev", "nvidia0")); err == nil {
		f.Close()
	} else if !strings.Contains(err.Error(), "no such device or address") {
		return fmt.Sprintf("device files under %s cannot be opened (%v): a nodev filesystem?", root, err)
	}
	return ""
}

// TestGPUDeviceFilesWithFakeDriver: with gpu/nvidia on a cgroup v1 host,
// two gpus:1 tasks on an agent with two (fake, mknod-made) GPUs each open
// only their own GPU's device file: the fake nvidia-smi -L inside each
// lists exactly one GPU, a different one, and opening the other's device
// file is "Operation not permitted" (g2 runs as nobody where the host
// has it). The agent's /state says the devices cgroup enforces it.
func TestGPUDeviceFilesWithFakeDriver(t *testing.T) {
	root, bin := t.TempDir(), t.TempDir()
	if why := fakeGPUTree(root, 2); why != "" {
		t.Skip(why)
	}
	smi := filepath.Join(bin, "nvidia-smi")
	if err := os.WriteFile(smi, []byte(fakeNvidiaSMI(root)), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1,
		// auto: the cgroups isolator's wrapper and the devices cgroup's
		// together where cgroups are writable (TestGPUsWithFakeDriver
		// runs posix).
		AgentFlags: append(append([]string{}, agentFlags...), "--isolation", "auto,gpu/nvidia",
			"--nvidia-smi", smi, "--gpu-device-root", root)})}
	gpuCap := []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_GPU_RESOURCES}}
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "gpus", Capabilities: gpuCap})
	o := fw.takeOffer(t, "")
	var tasks []mesos.TaskInfo
	probe := `echo "UID $(id -un)"; echo "CUDA=$CUDA_VISIBLE_DEVICES NV=$NVIDIA_VISIBLE_DEVICES"; ` + smi + ` -L | sed 's/^/SMI /'; ` +
		`for f in ` + root + `/dev/nvidia0 ` + root + `/dev/nvidia1; do echo "OPEN $(basename $f) $( (exec 3<$f) 2>&1 | sed 's/.*: //')"; done; sleep 60`
	for _, id := range []string{"g1", "g2"} {
		ti := cmdTask(id, o, probe, 0.1, 32)
		ti.Resources = append(ti.Resources, scalar("gpus", 1))
		if nobody := "nobody"; id == "g2" && userMissing() == "" {
			// The executor as a task's user: the agent moves it in.
			openToOthers(t, allotBin, c.Dir, root, bin)
			ti.Command.User = &nobody
		}
		tasks = append(tasks, ti)
	}
	if err := fw.call(launch(o, tasks...)); err != nil {
		t.Fatal(err)
	}
	seen := map[string][]string{}
	for _, id := range []string{"g1", "g2"} {
		fw.waitState(t, id, mesos.TASK_RUNNING)
		testcluster.WaitFor(t, 20*time.Second, id+" to try both device files", func() bool {
			seen[id] = sandboxLines(c.Agents[0].Dir, id, "UID ", "CUDA=", "SMI ", "OPEN ")
			return len(seen[id]) >= 5
		})
	}
	mine := func(lines []string) (own string) {
		smiGPUs, denied, allowed := 0, "", ""
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "SMI GPU "):
				smiGPUs++
				own = strings.Fields(l)[2]
			case strings.HasPrefix(l, "OPEN ") && strings.HasSuffix(l, "Operation not permitted"):
				denied += strings.Fields(l)[1]
			case strings.HasPrefix(l, "OPEN ") && strings.HasSuffix(l, "No such device or address"):
				allowed += strings.Fields(l)[1]
			}
		}
		if smiGPUs != 1 || denied == "" || allowed == "" || allowed == denied || "nvidia"+strings.TrimSuffix(own, ":") != allowed {
			t.Errorf("task output %q: want nvidia-smi -L to list one GPU, its own device file allowed and the other's denied", lines)
		}
		return own
	}
	if userMissing() == "" && seen["g2"][0] != "UID nobody" {
		t.Errorf("g2 ran as %q, want nobody", seen["g2"][0])
	}
	if a, b := mine(seen["g1"]), mine(seen["g2"]); a == b {
		t.Errorf("both tasks saw GPU %s", a)
	}
	doc, err := agentState(c.Agents[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	gs, _ := doc["gpus"].(map[string]any)
	if gs["devices_cgroup"] != true || !strings.HasPrefix(fmt.Sprint(gs["enforcement"]), "devices cgroup (v1)") {
		t.Errorf("agent /state gpus = %v, want the devices cgroup enforcing", gs)
	}
}

// sandboxLines are the lines of task id's sandbox stdout that start with
// one of prefixes.
func sandboxLines(agentDir, id string, prefixes ...string) []string {
	out, _ := filepath.Glob(filepath.Join(agentDir, "slaves", "*", "frameworks", "*", "executors", id, "runs", "*", "stdout"))
	var got []string
	for _, f := range out {
		for _, l := range readLines(f) {
			for _, p := range prefixes {
				if strings.HasPrefix(l, p) {
					got = append(got, l)
					break
				}
			}
		}
	}
	return got
}

// TestGPUCheckScriptFake runs tools/gpu-check.sh --fake (the real-GPU
// check, over its own fake driver) with the allot binary under test: every
// check passes, the binary is not rebuilt, and it prints what it saw.
func TestGPUCheckScriptFake(t *testing.T) {
	if why := fakeGPUTree(t.TempDir(), 1); why != "" {
		t.Skip(why)
	}
	_, port, _ := strings.Cut(testcluster.FreePort(t), ":")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "../tools/gpu-check.sh", "--fake", allotBin)
	cmd.Env = append(os.Environ(), "DEV_PORT="+port, "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	got := string(out)
	for _, c := range []string{"advertise", "task-env", "task-sees-one", "filter"} {
		if !strings.Contains(got, "PASS "+c+":") {
			t.Errorf("no PASS %s", c)
		}
	}
	if err != nil || strings.Contains(got, "FAIL") || !strings.Contains(got, "GPU 0: Fake GPU") {
		t.Errorf("gpu-check.sh --fake: %v\n%s", err, got)
	}
}
