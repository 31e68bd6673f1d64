package agent

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rs/zerolog"
)

// kernelFiles makes what the kernel makes in a new cgroup directory (the
// fake root's mkdir makes nothing) for container cid in every hierarchy
// under root, owned by root as the kernel's are.
func kernelFiles(t *testing.T, root, parent, cid string, v2 bool) {
	t.Helper()
	dirs := []string{filepath.Join(root, parent, cid)}
	if !v2 {
		ctls, _ := os.ReadDir(root) // one directory per hierarchy
		dirs = dirs[:0]
		for _, c := range ctls {
			dirs = append(dirs, filepath.Join(root, c.Name(), parent, cid))
		}
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"cgroup.procs", "tasks", "devices.allow", "devices.deny"} {
			os.WriteFile(filepath.Join(d, f), nil, 0o644)
		}
	}
}

// TestUserExecutorOwnsNoCgroupFile: an executor that runs as a task's user
// (nobody) starts with no file of its container's cgroups given to that
// user. On v1 (the cgroups isolator, gpu/nvidia's devices cgroup, or both)
// it starts through the launcher, which writes its own pid into every
// cgroup.procs of the container as root before it drops to the user; on
// v2 the agent clones it into its cgroup; under posix alone it is the
// plain executor as the user. The cgroup roots are plain directories, so
// the launcher's writes stay in the files for the test to read.
func TestUserExecutorOwnsNoCgroupFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching to another user needs root")
	}
	const nobody = 65534
	major := unusedCharMajor(t)
	devRoot := fakeCharDevRoot(t, major, 1)
	tests := []struct {
		name, iso   string
		v2, gpu     bool
		wantJoins   int // cgroup.procs files the launcher joins; 0: no launcher
		wantCloneFD bool
	}{
		{"cgroups v1", "cgroups", false, false, 4, false},
		{"cgroups v1 and gpu/nvidia", "cgroups,gpu/nvidia", false, true, 5, false},
		{"posix and gpu/nvidia", "posix,gpu/nvidia", false, true, 1, false},
		{"cgroups v2", "cgroups", true, false, 0, true},
		{"posix", "posix", false, false, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, work := fakeCgroupRoot(t, tc.v2), t.TempDir()
			a := userTestAgent(t, root, work, tc.iso, tc.gpu, devRoot)
			cid := "c-" + strings.NewReplacer(" ", "-", "/", "-").Replace(tc.name)
			kernelFiles(t, root, containerParent(work), cid, tc.v2)
			sandbox := filepath.Join(work, "sandbox")
			os.Mkdir(sandbox, 0o755)
			for d := sandbox; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
				os.Chmod(d, 0o755) // the launcher enters it as nobody
			}
			os.Chown(sandbox, nobody, nobody) // as the agent gives it
			ex := &executor{containerID: cid, sandbox: sandbox}
			if tc.gpu {
				ex.gpus = []int{0}
			}
			lc := &containerLaunch{path: "/bin/sh", argv: []string{"sh", "-c", "id -u > id"}, cred: &syscall.Credential{Uid: nobody, Gid: nobody}}
			cmd, err := a.containedCommand(ex, lc)
			if err != nil {
				t.Fatal(err)
			}
			if fd := cmd.SysProcAttr.CgroupFD; cmd.SysProcAttr.UseCgroupFD {
				syscall.Close(fd)
			}
			if cmd.SysProcAttr.UseCgroupFD != tc.wantCloneFD {
				t.Errorf("clone into cgroup %v, want %v", cmd.SysProcAttr.UseCgroupFD, tc.wantCloneFD)
			}
			joins := a.userCgroupProcs(cid)
			if len(joins) != tc.wantJoins || (lc.pipes != nil) != (tc.wantJoins > 0) {
				t.Errorf("launcher %v joining %q, want %d cgroups", lc.pipes != nil, joins, tc.wantJoins)
			}
			if !tc.wantCloneFD {
				runAsUser(t, cmd, lc, sandbox, nobody, joins)
			}
			noFileOwnedBy(t, root, nobody)
		})
	}
}

// An executor recovered from an agent that gave its v1 cgroup.procs and
// tasks to its user gets them taken back: its user can no longer move
// processes in or out.
func TestCgroupsReclaimRecoveredFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	root := fakeCgroupRoot(t, false)
	cg, err := newCgroups(root, "allot/wtest", true, true, false)
	if err != nil {
		t.Fatal(err)
	}
	kernelFiles(t, root, "allot/wtest", "c1", false)
	for _, d := range cg.leaves("c1") {
		os.Lchown(filepath.Join(d, "cgroup.procs"), 65534, 65534)
		os.Lchown(filepath.Join(d, "tasks"), 65534, 65534)
	}
	cg.reclaim("c1")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		var st syscall.Stat_t
		if err == nil && syscall.Lstat(p, &st) == nil && st.Uid != 0 {
			t.Errorf("%s still owned by uid %d", p, st.Uid)
		}
		return nil
	})
}

// userTestAgent is an agent with isolation iso on the fake cgroup root
// (plus a devices hierarchy and one fake GPU under devRoot when gpu),
// launching through this test binary.
func userTestAgent(t *testing.T, root, work, iso string, gpu bool, devRoot string) *Agent {
	t.Helper()
	cfg := Config{Masters: []string{"127.0.0.1:1"}, WorkDir: work, Resources: "cpus:1;mem:64;disk:64", Isolation: iso,
		CgroupsRoot: root, LauncherCommand: []string{os.Args[0], "container-launch"}, Log: zerolog.Nop()}
	if gpu {
		os.Mkdir(filepath.Join(root, "devices"), 0o755)
		os.WriteFile(filepath.Join(root, "devices", "devices.allow"), nil, 0o200)
		cfg.NvidiaSMI, cfg.GPUDeviceRoot = fakeSMI(t, "0, GPU-aaaa, Fake GPU, 1024\n"), devRoot
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(a.stop) })
	return a
}

// runAsUser starts cmd as launchExecutor does and checks that the
// executor ran as uid, its pid written into each of joins first.
func runAsUser(t *testing.T, cmd *exec.Cmd, lc *containerLaunch, sandbox string, uid int, joins []string) {
	t.Helper()
	cmd.Dir, cmd.ExtraFiles = sandbox, lc.extraFiles
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := lc.start(cmd); err != nil {
		t.Fatalf("start: %v\n%s", err, out.String())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(sandbox, "id")); strings.TrimSpace(string(b)) != strconv.Itoa(uid) {
		t.Errorf("executor ran as uid %q, want %d", b, uid)
	}
	for _, p := range joins {
		if b, _ := os.ReadFile(p); string(b) != strconv.Itoa(cmd.Process.Pid) {
			t.Errorf("%s holds %q, want the executor's pid %d, written before it ran", p, b, cmd.Process.Pid)
		}
	}
}

// noFileOwnedBy fails t for every file under root that uid owns.
func noFileOwnedBy(t *testing.T, root string, uid uint32) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		var st syscall.Stat_t
		if err == nil && syscall.Lstat(p, &st) == nil && st.Uid == uid {
			t.Errorf("%s is owned by uid %d", p, uid)
		}
		return nil
	})
}

// An executor run as the agent's own user (root) keeps its sh wrappers,
// which write their own pid: no launcher on its path.
func TestRootExecutorKeepsWrappers(t *testing.T) {
	root, work := fakeCgroupRoot(t, false), t.TempDir()
	a, err := New(Config{Masters: []string{"127.0.0.1:1"}, WorkDir: work, Resources: "cpus:1;mem:64;disk:64", Isolation: "cgroups",
		CgroupsRoot: root, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer close(a.stop)
	lc := &containerLaunch{path: "/bin/true", argv: []string{"true"}}
	cmd, err := a.containedCommand(&executor{containerID: "c-root", sandbox: work}, lc)
	if err != nil {
		t.Fatal(err)
	}
	if lc.pipes != nil || cmd.Path != "/bin/sh" || !strings.Contains(cmd.Args[2], "echo $$ > ") || cmd.Args[len(cmd.Args)-1] != "/bin/true" ||
		cmd.SysProcAttr.Credential != nil {
		t.Errorf("root executor started as %q (launcher %v, credential %v), want the sh wrapper", cmd.Args, lc.pipes != nil, cmd.SysProcAttr.Credential)
	}
}
