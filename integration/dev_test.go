package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/allot-sched/allot/internal/testcluster"
)

// allot dev starts a master and agents in one command, runs what it says to
// try, and on Ctrl-C or SIGTERM (a supervisor, kill) stops everything
// (executors too) and removes its work dirs.
func TestAllotDevStartsAndStopsCleanly(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { devStartsAndStops(t, sig) })
	}
}

func devStartsAndStops(t *testing.T, sig os.Signal) {
	addr := testcluster.FreePort(t)
	dev := testcluster.Start(t, "allot dev", nil, allotBin, "dev", "--listen", addr, "--agents", "2")
	var workDir string
	re := regexp.MustCompile(`work dirs in (\S+)`)
	testcluster.WaitFor(t, 30*time.Second, "allot dev to print what to try", func() bool {
		m := re.FindStringSubmatch(dev.Out.String())
		if m != nil {
			workDir = m[1]
		}
		return m != nil && strings.Contains(dev.Out.String(), "allot run --master "+addr)
	})
	c := &cluster{&testcluster.Cluster{T: t, MasterAddr: addr}}
	c.WaitAgents(2)
	// A task still running when Ctrl-C comes must not outlive allot dev.
	run := exec.Command(allotBin, "run", "--master", addr, "--", "sleep", "300")
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-run.Process.Pid, syscall.SIGKILL); run.Wait() })
	testcluster.WaitFor(t, 20*time.Second, "the sleep task to run", func() bool { return len(sandboxPids(workDir, "")) > 0 || anyTaskRunning(c) })
	dev.Cmd.Process.Signal(sig)
	select {
	case <-dev.Done():
	case <-time.After(20 * time.Second):
		t.Fatalf("allot dev did not stop within 20s of %v", sig)
	}
	if code := dev.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("allot dev exited %d, want 0", code)
	}
	if _, err := os.Stat(workDir); !os.IsNotExist(err) {
		t.Errorf("work dir %s still exists", workDir)
	}
	testcluster.WaitFor(t, 10*time.Second, "executors of allot dev to be gone", func() bool { return len(sandboxPids(workDir, "")) == 0 })
}

// Under `go run`, SIGTERM goes to the go command alone: allot dev notices
// its death and stops as on Ctrl-C, removing its work dirs. A copy of sh
// named "go" plays the go command.
func TestAllotDevStopsWithGoRun(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	fakeGo := filepath.Join(t.TempDir(), "go")
	if b, err := os.ReadFile(sh); err != nil || os.WriteFile(fakeGo, b, 0o755) != nil {
		t.Fatalf("copying sh: %v", err)
	}
	addr := testcluster.FreePort(t)
	goRun := testcluster.Start(t, "go run allot dev", nil, fakeGo, "-c", allotBin+" dev --listen "+addr+" --agents 1; true")
	var workDir string
	re := regexp.MustCompile(`work dirs in (\S+)`)
	testcluster.WaitFor(t, 30*time.Second, "allot dev to start", func() bool {
		m := re.FindStringSubmatch(goRun.Out.String())
		if m != nil {
			workDir = m[1]
		}
		return m != nil
	})
	goRun.Cmd.Process.Signal(syscall.SIGKILL) // the go command alone
	testcluster.WaitFor(t, 30*time.Second, "allot dev to stop and remove "+workDir, func() bool {
		_, err := os.Stat(workDir)
		return os.IsNotExist(err)
	})
}

func anyTaskRunning(c *cluster) bool {
	for _, f := range c.state().Frameworks {
		for _, tk := range f.Tasks {
			if tk.State == "TASK_RUNNING" {
				return true
			}
		}
	}
	return false
}
