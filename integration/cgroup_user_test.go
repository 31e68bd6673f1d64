package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/internal/testcluster"
)

// moverShell, run as a task's user, tries to write its own pid into the
// cgroup.procs of every other container of the agent, in every hierarchy,
// and prints "DENIED <dir>: <error>" or "MOVED <dir>" for each.
const moverShell = `me=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup); parent=${me%/*}
for h in /sys/fs/cgroup/*; do
	for d in "$h$parent"/*/; do
		[ -d "$d" ] && [ "$d" != "$h$me/" ] || continue
		if err=$( (echo $$ > "${d}cgroup.procs") 2>&1 ); then echo "MOVED $d"; else echo "DENIED $d: ${err##*: }"; fi
	done
done`

// TestCgroupsTaskUserConfined: on cgroup v1 with gpu/nvidia (two fake
// GPUs), executors run as nobody. One whose program is cat
// /proc/self/cgroup finds itself, at its very first instruction, in its
// container's cgroup in every hierarchy the agent uses, devices included;
// a task as nobody cannot write its pid into another container of
// nobody's (Permission denied in cpu, cpuacct, memory, pids and devices),
// where the agent once gave those cgroup.procs to the user.
func TestCgroupsTaskUserConfined(t *testing.T) {
	for _, why := range []string{userMissing(), cgroupsMissing()} {
		if why != "" {
			t.Skip(why)
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		t.Skip("cgroup v1 test: this host has cgroup v2, where executors are cloned into their cgroup")
	}
	root, bin := t.TempDir(), t.TempDir()
	if why := fakeGPUTree(root, 2); why != "" {
		t.Skip(why)
	}
	smi := filepath.Join(bin, "nvidia-smi")
	if err := os.WriteFile(smi, []byte(fakeNvidiaSMI(root)), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1,
		AgentFlags: append(append([]string{}, agentFlags...), "--isolation", "cgroups/cpu,cgroups/mem,gpu/nvidia",
			"--nvidia-smi", smi, "--gpu-device-root", root)})}
	openToOthers(t, allotBin, c.Dir, root, bin)
	gpuCap := []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_GPU_RESOURCES}}
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "cg-users", Capabilities: gpuCap})
	nobody, cat := "nobody", "/bin/cat"
	o := fw.takeOffer(t, "")
	victim := cmdTask("victim", o, "sleep 60", 0.1, 32)
	victim.Command.User = &nobody
	victim.Resources = append(victim.Resources, scalar("gpus", 1))
	first := &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "first"}, Type: mesos.ExecutorInfo_CUSTOM,
		Command:   &mesos.CommandInfo{Value: &cat, Shell: boolPtr(false), Arguments: []string{"cat", "/proc/self/cgroup"}, User: &nobody},
		Resources: []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 32)}}
	probe := execTask("first-task", o, first, "")
	probe.Resources = append(probe.Resources, scalar("gpus", 1))
	if err := fw.call(launch(o, victim, probe)); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "victim", mesos.TASK_RUNNING)
	fw.waitTerminal(t, "first-task")
	lines := sandboxLines(c.Agents[0].Dir, "first", "")
	paths := map[string]string{}
	for _, l := range lines {
		if f := strings.SplitN(l, ":", 3); len(f) == 3 {
			paths[f[1]] = f[2]
		}
	}
	own := paths["memory"]
	if !strings.HasPrefix(own, "/allot/w") || strings.Count(own, "/") != 3 {
		t.Fatalf("the executor's first instruction ran in memory cgroup %q, want /allot/w<hash>/<container>:\n%s", own, strings.Join(lines, "\n"))
	}
	for _, h := range []string{"cpu", "cpuacct", "pids", "devices"} {
		if _, mounted := paths[h]; mounted && paths[h] != own {
			t.Errorf("the executor's first instruction ran in %s cgroup %q, want %q", h, paths[h], own)
		}
	}
	if paths["devices"] != own {
		t.Errorf("not in its devices cgroup at its first instruction: %q", paths["devices"])
	}

	o = fw.takeOfferFits(t, 0.1, 32)
	mover := cmdTask("mover", o, moverShell, 0.1, 32)
	mover.Command.User = &nobody
	if err := fw.call(launch(o, mover)); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "mover", mesos.TASK_FINISHED)
	tried := map[string]bool{}
	for _, l := range sandboxLines(c.Agents[0].Dir, "mover", "DENIED ", "MOVED ") {
		t.Log(l)
		hier := strings.Split(strings.TrimPrefix(strings.Fields(l)[1], "/sys/fs/cgroup/"), "/")[0]
		if !strings.HasPrefix(l, "DENIED ") || !strings.HasSuffix(l, "Permission denied") {
			t.Errorf("a task as nobody wrote into another container's cgroup: %s", l)
		}
		tried[hier] = true
	}
	for _, h := range []string{"cpu", "cpuacct", "memory", "pids", "devices"} {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", h)); err == nil && !tried[h] {
			t.Errorf("the mover found no other container in the %s hierarchy to try", h)
		}
	}
}
