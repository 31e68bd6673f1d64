package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/agent/nslaunch"
)

// unusedCharMajor is a character major no driver of this host registered
// (from the local/experimental ranges), so that device files the test
// makes with it reach nothing real.
func unusedCharMajor(t *testing.T) uint32 {
	t.Helper()
	b, err := os.ReadFile("/proc/devices")
	if err != nil {
		t.Skipf("no /proc/devices: %v", err)
	}
	used := map[uint32]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Block") {
			break
		}
		if f := strings.Fields(line); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				used[uint32(n)] = true
			}
		}
	}
	for _, m := range []uint32{60, 61, 62, 63, 120, 121, 122, 123, 124, 125, 126, 127, 240, 241, 242, 243, 244} {
		if !used[m] {
			return m
		}
	}
	t.Skip("every experimental character major is in use")
	return 0
}

// fakeCharDevRoot makes root/dev/nvidia<i> (major:i) for each GPU,
// nvidiactl (major:255) and nvidia-uvm (major+1:0) with mknod, and skips
// where the host cannot (not root, or a nodev filesystem).
func fakeCharDevRoot(t *testing.T, major uint32, gpus int) string {
	t.Helper()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "dev"), 0o755)
	mk := func(name string, maj, min uint32) {
		p := filepath.Join(root, "dev", name)
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(maj<<8|min)); err != nil {
			t.Skipf("cannot make device files (needs root): mknod %s: %v", p, err)
		}
	}
	for i := 0; i < gpus; i++ {
		mk("nvidia"+strconv.Itoa(i), major, uint32(i))
	}
	mk("nvidiactl", major, 255)
	mk("nvidia-uvm", major+1, 0)
	// A device without a driver answers ENXIO; a nodev mount EACCES.
	if f, err := os.Open(filepath.Join(root, "dev", "nvidia0")); err == nil {
		f.Close()
	} else if !strings.Contains(err.Error(), "no such device or address") {
		t.Skipf("device files under %s cannot be opened (%v): a nodev filesystem?", root, err)
	}
	return root
}

// v1Devices is the host's cgroup v1 devices hierarchy's root, or a skip.
func v1Devices(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/sys/fs/cgroup/devices/devices.allow"); err != nil || os.Geteuid() != 0 {
		t.Skipf("needs root and a cgroup v1 devices hierarchy at /sys/fs/cgroup/devices (%v)", err)
	}
	return "/sys/fs/cgroup"
}

func TestGPUDeviceRules(t *testing.T) {
	g := &gpuDevices{majors: map[uint32]bool{195: true},
		gpus:    map[int]devNode{0: {Major: 195, Minor: 0}, 1: {Major: 195, Minor: 1}, 2: {Major: 195, Minor: 2}},
		control: []devNode{{Major: 195, Minor: 255}, {Major: 510, Minor: 0}}}
	tests := []struct {
		name      string
		idx       []int
		want, not []string
	}{
		{"one GPU", []int{1}, []string{"c 195:1 rwm", "c 195:255 rwm", "c 510:0 rwm", "c 1:* rwm", "b *:* rwm"},
			[]string{"c 195:0 rwm", "c 195:2 rwm", "c 195:* rwm", "a *:* rwm"}},
		{"two GPUs", []int{2, 0}, []string{"c 195:0 rwm", "c 195:2 rwm", "c 195:255 rwm"}, []string{"c 195:1 rwm", "c 195:* rwm"}},
		{"none", nil, []string{"c 195:255 rwm", "c 511:* rwm"}, []string{"c 195:0 rwm", "c 195:1 rwm", "c 195:2 rwm", "c 195:* rwm"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.rules(tc.idx)
			for _, w := range tc.want {
				if !slices.Contains(r, w) {
					t.Errorf("rules lack %q", w)
				}
			}
			for _, n := range tc.not {
				if slices.Contains(r, n) {
					t.Errorf("rules have %q", n)
				}
			}
			if want := 1 + (charMajors - 1) + 2 + len(tc.idx); len(r) != want {
				t.Errorf("%d rules, want %d", len(r), want)
			}
		})
	}
}

// TestNewGPUDevicesSaysWhatIsEnforced: device files found and a writable
// v1 devices hierarchy enforce; a GPU without a character device, cgroup
// v2 or no devices hierarchy say "environment only" and why.
func TestNewGPUDevicesSaysWhatIsEnforced(t *testing.T) {
	major := unusedCharMajor(t)
	devRoot := fakeCharDevRoot(t, major, 2)
	two := []gpuInfo{{Index: 0, Device: "/dev/nvidia0"}, {Index: 1, Device: "/dev/nvidia1"}}
	v2 := t.TempDir()
	os.WriteFile(filepath.Join(v2, "cgroup.controllers"), []byte("cpu memory pids\n"), 0o644)
	tests := []struct {
		name, cgRoot, devRoot string
		enforced              bool
		why                   string
	}{
		{"cgroup v2", v2, devRoot, false, "cgroup v2 has no devices list"},
		{"no devices hierarchy", t.TempDir(), devRoot, false, "no cgroup v1 devices hierarchy"},
		{"regular files, not devices", v2, fakeDevRoot(t, []int{0, 1}, nil), false, "GPU 0 has no device file"},
		{"no device files", v2, t.TempDir(), false, "GPU 0 has no device file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGPUDevices(tc.cgRoot, "allot/wtest", tc.devRoot, two)
			if g.enforced() != tc.enforced || !strings.Contains(g.why, tc.why) || !strings.Contains(g.why, "not restricted") {
				t.Errorf("enforced %v, why %q; want %v and %q", g.enforced(), g.why, tc.enforced, tc.why)
			}
		})
	}
	g := newGPUDevices(v2, "allot/wtest", devRoot, two)
	if len(g.control) != 2 || g.control[0].rule() != fmt.Sprintf("c %d:255 rwm", major) || g.control[1].rule() != fmt.Sprintf("c %d:0 rwm", major+1) {
		t.Errorf("control devices %+v, want nvidiactl %d:255 and nvidia-uvm %d:0", g.control, major, major+1)
	}
	if g.gpus[1].rule() != fmt.Sprintf("c %d:1 rwm", major) || !g.majors[major] || g.majors[major+1] {
		t.Errorf("GPU 1 %+v, majors %v", g.gpus[1], g.majors)
	}
}

// TestGPUDevicesCgroup: on this host's cgroup v1 devices hierarchy, a
// container given GPU 0 of two fake ones has exactly the allow-list read
// back from devices.list, and a process that joined it through wrap
// cannot open GPU 1's device file (EPERM) while GPU 0's and the control
// device pass the cgroup (the fake major has no driver: ENXIO).
func TestGPUDevicesCgroup(t *testing.T) {
	cgRoot := v1Devices(t)
	major := unusedCharMajor(t)
	devRoot := fakeCharDevRoot(t, major, 2)
	parent := containerParent(t.TempDir())
	g := newGPUDevices(cgRoot, parent, devRoot, []gpuInfo{{Index: 0, Device: "/dev/nvidia0"}, {Index: 1, Device: "/dev/nvidia1"}})
	if !g.enforced() {
		t.Fatalf("not enforced on a v1 host: %s", g.why)
	}
	if err := g.prepare("c1", []int{0}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.destroy("c1"); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(g.dir); !os.IsNotExist(err) {
			t.Errorf("parent %s left behind: %v", g.dir, err)
		}
	})
	list := strings.Split(strings.TrimSpace(readCg(filepath.Join(g.leaf("c1"), "devices.list"))), "\n")
	if !slices.Equal(list, g.rules([]int{0})) {
		t.Errorf("devices.list (%d lines) is not the allow-list written (%d)", len(list), len(g.rules([]int{0})))
	}
	for _, l := range list {
		if strings.HasPrefix(l, fmt.Sprintf("c %d:", major)) && l != fmt.Sprintf("c %d:0 rwm", major) && l != fmt.Sprintf("c %d:255 rwm", major) {
			t.Errorf("devices.list allows %q", l)
		}
	}
	probe := `for f in "$@"; do err=$( (exec 3<"$f") 2>&1 ); echo "$(basename "$f"): $err"; done`
	argv := g.wrap("c1", []string{"/bin/sh", "-c", probe, "probe",
		filepath.Join(devRoot, "dev", "nvidia0"), filepath.Join(devRoot, "dev", "nvidia1"), filepath.Join(devRoot, "dev", "nvidiactl")})
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := probed(string(out))
	for dev, want := range map[string]string{"nvidia0": "No such device or address", "nvidia1": "Operation not permitted",
		"nvidiactl": "No such device or address"} {
		if !strings.HasSuffix(got[dev], want) {
			t.Errorf("opening %s in the container: want %q, got %q", dev, want, got[dev])
		}
	}
}

// probed reads the probe's "name: error" lines.
func probed(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			m[k] = v
		}
	}
	return m
}

// TestAgentGPUDevicesWrap: under gpu/nvidia on a v1 host the executor's
// argv joins its devices cgroup (innermost, after the cgroups wrapper),
// the cgroup allows its GPU, and the container's removal removes it.
func TestAgentGPUDevicesWrap(t *testing.T) {
	cgRoot := v1Devices(t)
	major := unusedCharMajor(t)
	devRoot := fakeCharDevRoot(t, major, 2)
	a, err := New(Config{Masters: []string{"127.0.0.1:1"}, WorkDir: t.TempDir(), Resources: "cpus:1;mem:64;disk:64",
		Isolation: "posix,gpu/nvidia", NvidiaSMI: fakeSMI(t, twoGPUs), GPUDeviceRoot: devRoot, CgroupsRoot: cgRoot, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer close(a.stop)
	if st := a.gpuState(); st["devices_cgroup"] != true || !strings.HasPrefix(st["enforcement"].(string), "devices cgroup (v1)") {
		t.Fatalf("/state gpus %v", st)
	}
	ex := &executor{containerID: "c-wrap", gpus: []int{1}}
	path, argv, err := a.gpuDeviceWrap(ex, "/bin/true", []string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	leaf := a.gpu.dev.leaf("c-wrap")
	if path != "/bin/sh" || !strings.Contains(argv[2], leaf+"/cgroup.procs") || argv[len(argv)-1] != "/bin/true" {
		t.Errorf("wrapped to %s %q", path, argv)
	}
	if l := readCg(filepath.Join(leaf, "devices.list")); !strings.Contains(l, fmt.Sprintf("c %d:1 rwm", major)) || strings.Contains(l, fmt.Sprintf("c %d:0 rwm", major)) {
		t.Errorf("devices.list of the container given GPU 1:\n%s", l)
	}
	a.destroyContainer("c-wrap", 0)
	if _, err := os.Stat(leaf); !os.IsNotExist(err) {
		t.Errorf("devices cgroup %s still there after destroy: %v", leaf, err)
	}
	if env := a.executorGPUEnv(ex); !slices.Equal(env, []string{"NVIDIA_VISIBLE_DEVICES=1", "CUDA_VISIBLE_DEVICES=GPU-bbbb"}) {
		t.Errorf("env %v", env)
	}
}

// TestGPUDevicesCgroupAsUser: an executor that runs as another user is
// put into its devices cgroup by the launcher, as root, before it drops to
// the user (whose cgroup.procs stays root's: no process of that user may
// move itself into another container's GPUs), and is kept to its GPU as
// root is.
func TestGPUDevicesCgroupAsUser(t *testing.T) {
	cgRoot := v1Devices(t)
	major := unusedCharMajor(t)
	devRoot := fakeCharDevRoot(t, major, 2)
	for d := devRoot; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755) // t.TempDir's 0700 would stop the user first
	}
	g := newGPUDevices(cgRoot, containerParent(t.TempDir()), devRoot, []gpuInfo{{Index: 0}, {Index: 1}})
	const nobody = 65534
	if err := g.prepare("c-user", []int{1}); err != nil {
		t.Fatal(err)
	}
	defer g.destroy("c-user")
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(g.leaf("c-user"), "cgroup.procs"), &st); err != nil || st.Uid != 0 {
		t.Errorf("cgroup.procs owned by uid %d (%v), want root", st.Uid, err)
	}
	probe := `id -u; for f in "$@"; do err=$( (exec 3<"$f") 2>&1 ); echo "$(basename "$f"): $err"; done`
	cmd, pipes, err := nslaunch.Command([]string{os.Args[0], "container-launch"}, &nslaunch.Spec{
		Argv: []string{"/bin/sh", "-c", probe, "probe", filepath.Join(devRoot, "dev", "nvidia0"), filepath.Join(devRoot, "dev", "nvidia1")},
		User: &nslaunch.User{UID: nobody, GID: nobody}, Cgroups: []string{filepath.Join(g.leaf("c-user"), "cgroup.procs")}})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := pipes.Started(cmd.Start()); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	got := probed(out.String())
	if err != nil || !strings.HasPrefix(out.String(), "65534\n") || !strings.HasSuffix(got["nvidia0"], "Operation not permitted") ||
		!strings.HasSuffix(got["nvidia1"], "No such device or address") {
		t.Errorf("as uid %d given GPU 1: %v\n%s", nobody, err, out.String())
	}
}
