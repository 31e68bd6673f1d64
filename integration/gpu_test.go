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

// TestGPUsWithFakeDriver runs an agent whose "driver" is a fake
// nvidia-smi listing two GPUs (no real GPU is used): the agent advertises
// gpus:2, a framework without GPU_RESOURCES is offered nothing of it, and a
// GPU_RESOURCES framework's two gpus:1 tasks each see a different one of
// the two in CUDA_VISIBLE_DEVICES (by UUID) and NVIDIA_VISIBLE_DEVICES
// (by index).
func TestGPUsWithFakeDriver(t *testing.T) {
	bin := t.TempDir()
	smi := filepath.Join(bin, "nvidia-smi")
	script := "#!/bin/sh\nprintf '0, GPU-fake-0, Fake GPU, 1024\\n1, GPU-fake-1, Fake GPU, 1024\\n'\n"
	if err := os.WriteFile(smi, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1,
		MasterFlags: []string{"--log-level", "debug"},
		AgentFlags: append(append([]string{}, agentFlags...), "--isolation", "posix,gpu/nvidia",
			"--nvidia-smi", smi, "--gpu-device-root", t.TempDir())})}
	if st := c.state(); len(st.Slaves) != 1 || st.Slaves[0].Resources["gpus"] != 2 {
		t.Fatalf("master /state slaves = %+v, want one agent with gpus 2", st.Slaves)
	}
	plain := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "no-gpus"})
	testcluster.WaitFor(t, 20*time.Second, "a decision filtered for the GPU agent", func() bool {
		return c.Metric("allot_master_gpu_filtered_offers_total") > 0
	})
	plain.mu.Lock()
	if n := len(plain.offers); n != 0 {
		t.Errorf("framework without GPU_RESOURCES holds %d offers: %+v", n, plain.offers)
	}
	plain.mu.Unlock()

	gpuCap := []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_GPU_RESOURCES}}
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "gpus", Capabilities: gpuCap})
	o := fw.takeOffer(t, "")
	if g := offered(o, "gpus"); g != 2 {
		t.Fatalf("GPU_RESOURCES framework offered gpus %v, want 2", g)
	}
	var tasks []mesos.TaskInfo
	for _, id := range []string{"g1", "g2"} {
		ti := cmdTask(id, o, `echo "CUDA=$CUDA_VISIBLE_DEVICES NV=$NVIDIA_VISIBLE_DEVICES"; sleep 60`, 0.1, 32)
		ti.Resources = append(ti.Resources, scalar("gpus", 1))
		tasks = append(tasks, ti)
	}
	if err := fw.call(launch(o, tasks...)); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{} // the device each task saw, which allot task must name (checkTaskGPU)
	for _, id := range []string{"g1", "g2"} {
		fw.waitState(t, id, mesos.TASK_RUNNING)
		testcluster.WaitFor(t, 20*time.Second, id+" to print its GPUs", func() bool {
			seen[id] = gpuLine(c.Agents[0].Dir, id)
			return seen[id] != ""
		})
	}
	if seen["g1"] == seen["g2"] || !oneOf(seen["g1"], "CUDA=GPU-fake-0 NV=0", "CUDA=GPU-fake-1 NV=1") || !oneOf(seen["g2"], "CUDA=GPU-fake-0 NV=0", "CUDA=GPU-fake-1 NV=1") {
		t.Errorf("tasks saw %q and %q, want one GPU each, different", seen["g1"], seen["g2"])
	}
	st := c.state()
	for _, f := range st.Frameworks {
		for _, tk := range f.Tasks {
			if tk.Resources["gpus"] != 1 {
				t.Errorf("master /state task %s gpus = %v, want 1", tk.ID, tk.Resources["gpus"])
			}
		}
	}
	doc, err := agentState(c.Agents[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	gs, _ := doc["gpus"].(map[string]any)
	if as, _ := gs["assigned"].(map[string]any); gs["isolation"] != "gpu/nvidia" || len(as) != 2 {
		t.Errorf("agent /state gpus = %v, want gpu/nvidia with two containers assigned", gs)
	}
	checkTaskGPU(t, c.MasterAddr, "g1", strings.Fields(strings.TrimPrefix(seen["g1"], "CUDA="))[0])
	for _, id := range []string{"g1", "g2"} {
		if err := fw.call(calls.Kill(id, o.AgentID.Value)); err != nil {
			t.Fatal(err)
		}
		fw.waitState(t, id, mesos.TASK_KILLED)
	}
	testcluster.WaitFor(t, 20*time.Second, "the agent to free both GPUs", func() bool {
		doc, err := agentState(c.Agents[0].Addr)
		gs, _ := doc["gpus"].(map[string]any)
		as, _ := gs["assigned"].(map[string]any)
		return err == nil && gs != nil && len(as) == 0
	})
}

// gpuLine is the CUDA= line task id printed to its sandbox's stdout.
func gpuLine(agentDir, id string) string {
	out, _ := filepath.Glob(filepath.Join(agentDir, "slaves", "*", "frameworks", "*", "executors", id, "runs", "*", "stdout"))
	for _, f := range out {
		for _, l := range readLines(f) {
			if strings.HasPrefix(l, "CUDA=") {
				return l
			}
		}
	}
	return ""
}

func oneOf(s string, want ...string) bool {
	for _, w := range want {
		if s == w {
			return true
		}
	}
	return false
}
