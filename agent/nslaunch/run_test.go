package nslaunch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The test binary is its own launcher: started with childEnv set, it runs
// Main on its arguments instead of the tests.
const childEnv = "NSLAUNCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		fmt.Fprintln(os.Stderr, Main(os.Args[2:], os.Stderr))
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// busyboxRootfs builds a root filesystem of Debian's busybox-static with
// sh, cat, ls and id linked to it and an /etc/os-release of its own, or
// skips the test saying what the host lacks.
func busyboxRootfs(t *testing.T) string {
	t.Helper()
	if why := Check(); why != "" {
		t.Skip("no container here: " + why)
	}
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Skip("needs Debian's busybox-static at /bin/busybox: " + err.Error())
	}
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "bin"), 0o755)
	os.MkdirAll(filepath.Join(root, "etc"), 0o755)
	if err := os.WriteFile(filepath.Join(root, "bin", "busybox"), bb, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"sh", "cat", "ls", "id", "echo", "pwd", "hostname"} {
		os.Symlink("busybox", filepath.Join(root, "bin", n))
	}
	os.WriteFile(filepath.Join(root, "etc", "os-release"), []byte("ID=nslaunch-test\n"), 0o644)
	return root
}

// launch runs s and returns its output, the launch's error (Started's:
// the launcher failed before its exec) and the program's exit.
func launch(t *testing.T, s *Spec) (out string, launchErr, exitErr error) {
	t.Helper()
	cmd, pipes, err := Command([]string{os.Args[0], "container-launch"}, s)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	launchErr = pipes.Started(cmd.Start())
	exitErr = cmd.Wait()
	return buf.String(), launchErr, exitErr
}

// A program launched in a rootfs sees the image's files, not the host's,
// its bound sandbox (written there, read outside), /proc and a /dev of its
// own, the environment and working directory of its Spec, and its user.
func TestRunInRootfs(t *testing.T) {
	root := busyboxRootfs(t)
	sandbox := t.TempDir()
	os.Chmod(sandbox, 0o777) // written by uid 65534 inside
	os.WriteFile(filepath.Join(sandbox, "in"), []byte("from-host"), 0o644)
	script := `cat /etc/os-release; cat in; echo written > out; echo "dir=$(pwd) x=$X"; ` +
		`ls /dev; test -e /proc/self/status && echo proc-ok; id -u; test -e /host-only || echo no-host`
	out, launchErr, err := launch(t, &Spec{Rootfs: root, Argv: []string{"sh", "-c", script},
		Env: []string{"PATH=/bin", "X=1", "X=2"}, Dir: SandboxPath,
		Mounts: []Mount{{Source: sandbox, Target: SandboxPath}}, User: &User{UID: 65534, GID: 65534}})
	if launchErr != nil || err != nil {
		t.Fatalf("launch: %v, %v\n%s", launchErr, err, out)
	}
	for _, want := range []string{"ID=nslaunch-test", "from-host", "dir=/mnt/mesos/sandbox x=2", "null", "urandom", "proc-ok", "65534", "no-host"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "nvidia") {
		t.Errorf("the container's /dev shows host devices:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(sandbox, "out")); err != nil || string(b) != "written\n" {
		t.Errorf("sandbox file written inside reads %q, %v outside", b, err)
	}
}

// A launch that fails before its exec (a program the image lacks, a
// mount source that is not there) says why to its caller and on stderr;
// nothing runs.
func TestRunFailureReported(t *testing.T) {
	root := busyboxRootfs(t)
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{Rootfs: root, Argv: []string{"no-such-program"}, Env: []string{"PATH=/bin"}}, `"no-such-program" not found on PATH /bin`},
		{Spec{Rootfs: root, Argv: []string{"sh"}, Mounts: []Mount{{Source: "/no/such/dir", Target: "/x"}}}, "mount source"},
	} {
		out, launchErr, exitErr := launch(t, &tc.s)
		if launchErr == nil || !strings.Contains(launchErr.Error(), tc.want) || exitErr == nil || !strings.Contains(out, tc.want) {
			t.Errorf("launch = %v (exit %v), output %q; want a failure saying %q", launchErr, exitErr, out, tc.want)
		}
	}
}

// The Spec arrives on a pipe: nothing of it is in the launcher's argv.
func TestCommandPassesSpecOnAPipe(t *testing.T) {
	cmd, pipes, err := Command([]string{"/bin/allot", "container-launch"}, &Spec{Argv: []string{"secret-program"}, Env: []string{"TOKEN=x"}})
	if err != nil {
		t.Fatal(err)
	}
	defer pipes.Started(errors.New("not started"))
	if got := strings.Join(cmd.Args, " "); got != "/bin/allot container-launch --spec-fd 3 --err-fd 4" || len(cmd.ExtraFiles) != 2 {
		t.Fatalf("args %q, %d extra files", got, len(cmd.ExtraFiles))
	}
}

// A Spec's cgroups are joined by the launcher, as root, before it drops to
// the program's user: the program (cat, reading its own cgroups as its
// first act) runs as nobody inside a cgroup whose cgroup.procs is root's.
// A cgroup that cannot be joined fails the launch, and nothing runs.
func TestRunJoinsCgroupsFirst(t *testing.T) {
	out, launchErr, exitErr := launch(t, &Spec{Argv: []string{"/bin/echo", "ran"}, Cgroups: []string{filepath.Join(t.TempDir(), "gone", "cgroup.procs")}})
	if launchErr == nil || !strings.Contains(launchErr.Error(), "joining cgroup") || exitErr == nil || strings.Contains(out, "ran") {
		t.Errorf("launch into a missing cgroup = %v (exit %v), output %q; want a failure before the program", launchErr, exitErr, out)
	}
	hier := "/sys/fs/cgroup/pids"
	if _, err := os.Stat(filepath.Join(hier, "cgroup.procs")); err != nil || os.Geteuid() != 0 {
		t.Skipf("needs root and a cgroup v1 pids hierarchy at %s (%v)", hier, err)
	}
	dir := filepath.Join(hier, fmt.Sprintf("allot-nslaunch-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cgroup not writable: %v", err)
	}
	defer os.Remove(dir)
	out, launchErr, exitErr = launch(t, &Spec{Argv: []string{"/bin/cat", "/proc/self/cgroup"}, User: &User{UID: 65534, GID: 65534},
		Cgroups: []string{filepath.Join(dir, "cgroup.procs")}})
	if launchErr != nil || exitErr != nil || !strings.Contains(out, ":pids:/"+filepath.Base(dir)+"\n") {
		t.Errorf("launch = %v (exit %v); /proc/self/cgroup of the program:\n%s\nwant pids:/%s", launchErr, exitErr, out, filepath.Base(dir))
	}
}
