package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/rs/zerolog"
)

// fakeSMI writes an nvidia-smi that prints out (or fails with exit 9 when
// out is "FAIL") and returns its path.
func fakeSMI(t *testing.T, out string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "nvidia-smi")
	body := "#!/bin/sh\ncat <<'EOF'\n" + out + "EOF\n"
	if out == "FAIL" {
		body = "#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n"
	}
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeDevRoot makes root/dev/nvidia<minor> for each minor and, for those in
// listed, root/proc/driver/nvidia/gpus/<bus>/information.
func fakeDevRoot(t *testing.T, minors []int, listed []int) string {
	t.Helper()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "dev"), 0o755)
	os.WriteFile(filepath.Join(root, "dev", "nvidiactl"), nil, 0o644)
	for _, m := range minors {
		os.WriteFile(filepath.Join(root, "dev", "nvidia"+itoa(m)), nil, 0o644)
	}
	for _, m := range listed {
		d := filepath.Join(root, "proc", "driver", "nvidia", "gpus", "0000:0"+itoa(m)+":00.0")
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "information"), []byte("Model: \t\t Fake GPU\nIRQ: 1\nDevice Minor: \t "+itoa(m)+"\n"), 0o644)
	}
	return root
}

func itoa(i int) string { return string(rune('0' + i)) }

const twoGPUs = "0, GPU-aaaa, NVIDIA H100 80GB HBM3, 81559\n1, GPU-bbbb, NVIDIA H100 80GB HBM3, 81559\n"

func TestDetectGPUs(t *testing.T) {
	noSMI := filepath.Join(t.TempDir(), "absent-nvidia-smi")
	tests := []struct {
		name    string
		smi     string
		root    string
		want    []int
		wantHow string
	}{
		{"nvidia-smi", fakeSMI(t, twoGPUs), fakeDevRoot(t, nil, nil), []int{0, 1}, "nvidia-smi"},
		{"nvidia-smi says none", fakeSMI(t, ""), fakeDevRoot(t, []int{0}, nil), nil, "nvidia-smi"},
		{"no nvidia-smi: device files", noSMI, fakeDevRoot(t, []int{0, 1, 2}, nil), []int{0, 1, 2}, "device files"},
		{"failing nvidia-smi: listed devices only", fakeSMI(t, "FAIL"), fakeDevRoot(t, []int{0, 1, 3}, []int{1, 3, 4}), []int{1, 3}, "device files"},
		{"nothing", noSMI, fakeDevRoot(t, nil, nil), nil, "no NVIDIA GPUs found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gpus, how := detectGPUs(smiDetector{bin: tc.smi, timeout: time.Minute}, devfsDetector{root: tc.root})
			var got []int
			for _, g := range gpus {
				got = append(got, g.Index)
			}
			if !reflect.DeepEqual(got, tc.want) || !strings.HasPrefix(how, tc.wantHow) {
				t.Errorf("detected %v by %q, want %v by %q", got, how, tc.want, tc.wantHow)
			}
		})
	}
}

func TestParseSMI(t *testing.T) {
	gpus, err := parseSMI([]byte("1, GPU-b, Tesla T4, 15360 MiB\n0, GPU-a, Tesla T4, 15360 MiB\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []gpuInfo{{Index: 0, UUID: "GPU-a", Name: "Tesla T4", MemoryMB: 15360, Device: "/dev/nvidia0"},
		{Index: 1, UUID: "GPU-b", Name: "Tesla T4", MemoryMB: 15360, Device: "/dev/nvidia1"}}
	if !reflect.DeepEqual(gpus, want) {
		t.Errorf("got %+v, want %+v", gpus, want)
	}
	for _, bad := range []string{"x, GPU-a, T4, 1\n", "0, GPU-a\n"} {
		if _, err := parseSMI([]byte(bad)); err == nil {
			t.Errorf("parseSMI(%q) took it", bad)
		}
	}
}

// TestAgentGPUResources: detected GPUs are advertised unless --resources
// names gpus; under gpu/nvidia an override beyond what was found, or a
// fraction, is refused with an error naming it.
func TestAgentGPUResources(t *testing.T) {
	smi := fakeSMI(t, twoGPUs)
	tests := []struct {
		name, res, iso string
		want           float64
		wantErr        string
	}{
		{"detected", "cpus:1;mem:64;disk:64", "posix", 2, ""},
		{"detected, gpu/nvidia", "cpus:1;mem:64;disk:64", "posix,gpu/nvidia", 2, ""},
		{"fewer than detected", "cpus:1;mem:64;disk:64;gpus:1", "posix,gpu/nvidia", 1, ""},
		{"more than detected", "cpus:1;mem:64;disk:64;gpus:3", "posix,gpu/nvidia", 0, "only 2 NVIDIA GPUs were detected"},
		{"fraction", "cpus:1;mem:64;disk:64;gpus:0.5", "posix,gpu/nvidia", 0, "whole devices"},
		{"opaque without gpu/nvidia", "cpus:1;mem:64;disk:64;gpus:8", "posix", 8, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(Config{Masters: []string{"127.0.0.1:1"}, WorkDir: t.TempDir(), Resources: tc.res, Isolation: tc.iso,
				NvidiaSMI: smi, GPUDeviceRoot: t.TempDir(), Log: zerolog.Nop()})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := a.total.Scalar("gpus").Units(); got != tc.want {
				t.Errorf("gpus %v, want %v", got, tc.want)
			}
			if !strings.Contains(a.static, "gpus:") {
				t.Errorf("REGISTER's resources %q lack gpus", a.static)
			}
		})
	}
}

func TestGPUPool(t *testing.T) {
	p := newGPUPool([]gpuInfo{{Index: 0}, {Index: 1}, {Index: 2}})
	a, err := p.assign("c1", 2)
	if err != nil || !reflect.DeepEqual(a, []int{0, 1}) {
		t.Fatalf("assign c1: %v %v", a, err)
	}
	if _, err := p.assign("c2", 2); err == nil || !strings.Contains(err.Error(), "2 GPUs asked for, 1 of 3 free") {
		t.Fatalf("over-assign: %v", err)
	}
	if b, err := p.assign("c2", 1); err != nil || !reflect.DeepEqual(b, []int{2}) {
		t.Fatalf("assign c2: %v %v", b, err)
	}
	p.free("c1")
	if b, err := p.assign("c3", 2); err != nil || !reflect.DeepEqual(b, []int{0, 1}) {
		t.Fatalf("assign after free: %v %v", b, err)
	}
	p.free("c3")
	p.claim("c4", []int{1}) // a recovered container keeps its GPU
	if b, _ := p.assign("c5", 1); !reflect.DeepEqual(b, []int{0}) {
		t.Fatalf("assign after claim: %v", b)
	}
	if u := p.used(); !reflect.DeepEqual(u, map[string][]int{"c2": {2}, "c4": {1}, "c5": {0}}) {
		t.Errorf("used %v", u)
	}
	if b, err := p.assign("c6", 0); b != nil || err != nil {
		t.Errorf("assign 0: %v %v", b, err)
	}
}

func TestGPUsWantedAndEnv(t *testing.T) {
	ex := &executor{info: mesos.ExecutorInfo{Resources: []mesos.Resource{scalarRes("cpus", 0.1)}},
		tasks: map[string]*agentTask{"t1": {info: mesos.TaskInfo{Resources: []mesos.Resource{scalarRes("gpus", 1)}}},
			"t2": {info: mesos.TaskInfo{Resources: []mesos.Resource{scalarRes("gpus", 1)}}}}}
	if n, err := gpusWanted(ex); n != 2 || err != nil {
		t.Errorf("gpusWanted = %d, %v; want 2", n, err)
	}
	ex.tasks["t2"].info.Resources[0].Scalar.Value = 0.5
	if _, err := gpusWanted(ex); err == nil || !strings.Contains(err.Error(), "gpus:1.5") {
		t.Errorf("fractional gpus: %v", err)
	}
	envs := []struct {
		name       string
		gs         []gpuInfo
		renumbered bool
		want       []string
	}{
		{"indices", []gpuInfo{{Index: 1}, {Index: 3}}, false, []string{"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_VISIBLE_DEVICES=1,3"}},
		{"renumbered by the devices cgroup", []gpuInfo{{Index: 1}, {Index: 3}}, true, []string{"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_VISIBLE_DEVICES=0,1"}},
		{"uuids", []gpuInfo{{Index: 1, UUID: "GPU-b"}, {Index: 3, UUID: "GPU-d"}}, true, []string{"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_VISIBLE_DEVICES=GPU-b,GPU-d"}},
		{"one uuid unknown", []gpuInfo{{Index: 1, UUID: "GPU-b"}, {Index: 3}}, false, []string{"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_VISIBLE_DEVICES=1,3"}},
		{"none", nil, true, []string{"NVIDIA_VISIBLE_DEVICES=void", "CUDA_VISIBLE_DEVICES="}},
	}
	for _, tc := range envs {
		if got := gpuEnv(tc.gs, tc.renumbered); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: gpuEnv = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestGPUsSurviveAgentRestart: a checkpointed executor that is still alive
// keeps its GPU after the agent restarts, and the GPU is not given to
// another container; one whose process is gone frees its GPU.
func TestGPUsSurviveAgentRestart(t *testing.T) {
	smi, work := fakeSMI(t, twoGPUs), t.TempDir()
	cfg := Config{Masters: []string{"127.0.0.1:1"}, WorkDir: work, Resources: "cpus:1;mem:64;disk:64",
		Isolation: "posix,gpu/nvidia", NvidiaSMI: smi, GPUDeviceRoot: t.TempDir(), Log: zerolog.Nop()}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fwID := "fw1"
	ex := &executor{fw: fwID, id: "live", checkpoint: true, containerID: "c-live", pid: os.Getpid(), gpus: []int{1},
		fwInfo: mesos.FrameworkInfo{ID: &mesos.FrameworkID{Value: fwID}, Name: "f", User: "u"},
		info:   mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "live"}}, tasks: map[string]*agentTask{}}
	a.mu.Lock()
	a.checkpointLocked(ex)
	a.mu.Unlock()

	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer close(b.stop)
	b.recover()
	b.recoverContainers()
	if got := b.gpu.pool.used(); !reflect.DeepEqual(got, map[string][]int{"c-live": {1}}) {
		t.Fatalf("after restart GPUs in use %v, want c-live holding 1", got)
	}
	if _, err := b.gpu.pool.assign("c-new", 2); err == nil {
		t.Error("a new container got both GPUs while the recovered one holds one")
	}
	if got, _ := b.gpu.pool.assign("c-new", 1); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("new container got %v, want [0]", got)
	}
}
