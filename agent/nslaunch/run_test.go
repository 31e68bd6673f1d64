package nslaunch

import (
	"bytes"
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

func launch(t *testing.T, s *Spec) (string, error) {
	t.Helper()
	cmd, write, err := Command([]string{os.Args[0], "container-launch"}, s)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	return out.String(), err
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
	out, err := launch(t, &Spec{Rootfs: root, Argv: []string{"sh", "-c", script},
		Env: []string{"PATH=/bin", "X=1", "X=2"}, Dir: SandboxPath,
		Mounts: []Mount{{Source: sandbox, Target: SandboxPath}}, User: &User{UID: 65534, GID: 65534}})
	if err != nil {
		t.Fatalf("launch: %v\n%s", err, out)
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

// A program that cannot be found fails the launcher with a message naming
// it, and nothing runs on the host.
func TestRunMissingProgram(t *testing.T) {
	root := busyboxRootfs(t)
	out, err := launch(t, &Spec{Rootfs: root, Argv: []string{"no-such-program"}, Env: []string{"PATH=/bin"}})
	if err == nil || !strings.Contains(out, `"no-such-program" not found`) {
		t.Fatalf("launch = %v, %q; want a failure naming the program", err, out)
	}
}

// The Spec arrives on a pipe: nothing of it is in the launcher's argv.
func TestCommandPassesSpecOnAPipe(t *testing.T) {
	cmd, write, err := Command([]string{"/bin/allot", "container-launch"}, &Spec{Argv: []string{"secret-program"}, Env: []string{"TOKEN=x"}})
	if err != nil {
		t.Fatal(err)
	}
	defer write()
	if got := strings.Join(cmd.Args, " "); got != "/bin/allot container-launch --spec-fd 3" || len(cmd.ExtraFiles) != 1 {
		t.Fatalf("args %q, %d extra files", got, len(cmd.ExtraFiles))
	}
}
