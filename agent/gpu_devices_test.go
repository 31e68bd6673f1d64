package agent

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/allot-sched/allot/agent/nslaunch"
)

// fakeDriverFiles puts a fake driver's files under root as a Debian host
// has them: nvidia-smi in /usr/bin (smi, a script), libcuda and
// libnvidia-ml in /usr/lib/x86_64-linux-gnu as a file and versioned
// links, and a 32-bit libcuda in /usr/lib that must not be taken.
func fakeDriverFiles(t *testing.T, root, smi string) {
	t.Helper()
	bin, lib := filepath.Join(root, "usr", "bin"), filepath.Join(root, "usr", "lib", "x86_64-linux-gnu")
	for _, d := range []string{bin, lib} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte(smi), 0o755)
	for _, l := range []string{"libcuda", "libnvidia-ml"} {
		os.WriteFile(filepath.Join(lib, l+".so.550.1"), []byte("fake "+l+"\n"), 0o644)
		os.Symlink(l+".so.550.1", filepath.Join(lib, l+".so.1"))
	}
	os.WriteFile(filepath.Join(root, "usr", "lib", "libcuda.so.1"), []byte("32-bit\n"), 0o644)
}

// gpuSpecAgent is an agent with gpu/nvidia over two GPUs whose device
// files (not made: gpuSpec only names them) and driver are under root.
func gpuSpecAgent(root string, dev *gpuDevices) *Agent {
	found := []gpuInfo{{Index: 0, UUID: "GPU-a"}, {Index: 1, UUID: "GPU-b"}}
	if dev == nil {
		dev = &gpuDevices{gpus: map[int]devNode{0: {Path: root + "/dev/nvidia0", Major: 195}, 1: {Path: root + "/dev/nvidia1", Major: 195, Minor: 1}},
			control: []devNode{{Path: root + "/dev/nvidiactl", Major: 195, Minor: 255}}, driver: findDriverFiles(root)}
	}
	return &Agent{gpu: agentGPUs{found: found, pool: newGPUPool(found), dev: dev}}
}

func TestGPUSpec(t *testing.T) {
	root := t.TempDir()
	fakeDriverFiles(t, root, "#!/bin/sh\n")
	a := gpuSpecAgent(root, nil)
	lib := filepath.Join(root, "usr", "lib", "x86_64-linux-gnu")
	image := func() *nslaunch.Spec {
		return &nslaunch.Spec{Rootfs: "/rootfs", Argv: []string{"nvidia-smi"}, Env: []string{"PATH=/img/bin", "A=1"}}
	}

	s := image()
	if err := a.gpuSpec(&executor{gpus: []int{1}}, s); err != nil {
		t.Fatal(err)
	}
	wantDev := []nslaunch.Device{{Path: "/dev/nvidia1", HostPath: root + "/dev/nvidia1", Major: 195, Minor: 1, Access: "rwm"},
		{Path: "/dev/nvidiactl", HostPath: root + "/dev/nvidiactl", Major: 195, Minor: 255, Access: "rwm"}}
	if !slices.Equal(s.Devices, wantDev) {
		t.Errorf("devices %+v, want %+v", s.Devices, wantDev)
	}
	wantMounts := []nslaunch.Mount{
		{Source: filepath.Join(root, "usr", "bin", "nvidia-smi"), Target: "/usr/local/nvidia/bin/nvidia-smi", ReadOnly: true},
		{Source: filepath.Join(lib, "libnvidia-ml.so.550.1"), Target: "/usr/local/nvidia/lib64/libnvidia-ml.so.1", ReadOnly: true},
		{Source: filepath.Join(lib, "libnvidia-ml.so.550.1"), Target: "/usr/local/nvidia/lib64/libnvidia-ml.so.550.1", ReadOnly: true},
		{Source: filepath.Join(lib, "libcuda.so.550.1"), Target: "/usr/local/nvidia/lib64/libcuda.so.1", ReadOnly: true},
		{Source: filepath.Join(lib, "libcuda.so.550.1"), Target: "/usr/local/nvidia/lib64/libcuda.so.550.1", ReadOnly: true},
	}
	if !slices.Equal(s.Mounts, wantMounts) {
		t.Errorf("mounts\n%+v\nwant\n%+v", s.Mounts, wantMounts)
	}
	wantEnv := []string{"PATH=/img/bin:/usr/local/nvidia/bin", "A=1", "NVIDIA_VISIBLE_DEVICES=1", "CUDA_VISIBLE_DEVICES=GPU-b",
		"LD_LIBRARY_PATH=/usr/local/nvidia/lib64"}
	if !slices.Equal(s.Env, wantEnv) {
		t.Errorf("env %q, want %q", s.Env, wantEnv)
	}

	for name, tc := range map[string]struct {
		ex *executor
		s  *nslaunch.Spec
	}{
		"host filesystem": {&executor{gpus: []int{1}}, &nslaunch.Spec{Argv: []string{"x"}}},
		"no GPU":          {&executor{}, image()},
	} {
		before := *tc.s
		if err := a.gpuSpec(tc.ex, tc.s); err != nil || len(tc.s.Devices) > 0 || len(tc.s.Mounts) > 0 || !slices.Equal(tc.s.Env, before.Env) {
			t.Errorf("%s: %v, spec %+v: want it unchanged", name, err, tc.s)
		}
	}
	a.gpu.dev.why = "environment only: GPU 1 has no device file"
	delete(a.gpu.dev.gpus, 1)
	if err := a.gpuSpec(&executor{gpus: []int{1}}, image()); err == nil || !strings.Contains(err.Error(), "GPU 1 has no device file") {
		t.Errorf("GPU without a device file: %v", err)
	}
}

func TestWithDir(t *testing.T) {
	for _, tc := range []struct {
		env       []string
		def, want string
	}{
		{[]string{"PATH=/a:/b"}, "/d", "PATH=/a:/b:/x"},
		{[]string{"PATH=/x:/b"}, "/d", "PATH=/x:/b"},
		{nil, "/d", "PATH=/d:/x"},
		{nil, "", "PATH=/x"},
		{[]string{"PATH="}, "/d", "PATH=/x"},
	} {
		if got := withDir(tc.env, "PATH", tc.def, "/x"); got != tc.want {
			t.Errorf("withDir(%q, %q) = %q, want %q", tc.env, tc.def, got, tc.want)
		}
	}
}

// The test binary is the launcher of TestGPUSpecInImage: run with
// gpuLaunchSpecEnv naming a Spec file, this "test" becomes
// `allot container-launch --spec FILE`.
const gpuLaunchSpecEnv = "ALLOT_TEST_GPU_LAUNCH_SPEC"

func TestGPULaunchHelper(t *testing.T) {
	spec := os.Getenv(gpuLaunchSpecEnv)
	if spec == "" {
		t.Skip("the launcher of TestGPUSpecInImage, not a test of its own")
	}
	os.Stderr.WriteString(nslaunch.Main([]string{"--spec", spec}, os.Stderr).Error() + "\n")
	os.Exit(3)
}

// TestGPUSpecInImage: a container in a busybox image given GPU 1 of two
// (mknod-made) sees /dev/nvidia1 and the control devices but no
// /dev/nvidia0, runs
// the (fake) driver's nvidia-smi from /usr/local/nvidia/bin on its PATH,
// which lists one GPU, reads libcuda under /usr/local/nvidia/lib64 and
// cannot write it.
func TestGPUSpecInImage(t *testing.T) {
	if why := nslaunch.Check(); why != "" {
		t.Skip("no container here: " + why)
	}
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Skip("needs Debian's busybox-static at /bin/busybox: " + err.Error())
	}
	devRoot := fakeCharDevRoot(t, unusedCharMajor(t), 2)
	fakeDriverFiles(t, devRoot, "#!/bin/sh\nfor f in /dev/nvidia[0-9]*; do echo \"GPU ${f#/dev/nvidia}: Fake GPU\"; done\n")
	rootfs := t.TempDir()
	os.MkdirAll(filepath.Join(rootfs, "bin"), 0o755)
	if err := os.WriteFile(filepath.Join(rootfs, "bin", "busybox"), bb, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"sh", "ls", "cat", "echo"} {
		os.Symlink("busybox", filepath.Join(rootfs, "bin", n))
	}
	a := gpuSpecAgent(devRoot, newGPUDevices(t.TempDir(), "allot/wtest", devRoot, []gpuInfo{{Index: 0}, {Index: 1}}))
	s := &nslaunch.Spec{Rootfs: rootfs, Env: []string{"PATH=/bin"}, Argv: []string{"/bin/sh", "-c",
		`ls /dev | grep nvidia; nvidia-smi -L; cat /usr/local/nvidia/lib64/libcuda.so.1; echo x > /usr/local/nvidia/lib64/libcuda.so.1 || echo read-only; echo "CUDA=$CUDA_VISIBLE_DEVICES"`}}
	if err := a.gpuSpec(&executor{gpus: []int{1}}, s); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "spec.json")
	f, _ := os.Create(p)
	s.Encode(f)
	f.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGPULaunchHelper$")
	cmd.Env = append(os.Environ(), gpuLaunchSpecEnv+"="+p)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	want := "nvidia-uvm\nnvidia1\nnvidiactl\nGPU 1: Fake GPU\nfake libcuda\n"
	if got := out.String(); err != nil || !strings.HasPrefix(got, want) || !strings.Contains(got, "read-only\nCUDA=GPU-b\n") ||
		strings.Contains(got, "nvidia0") {
		t.Errorf("in the image: %v\n%s\nwant it to start with\n%s", err, got, want)
	}
}
