package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/allot-sched/allot/internal/testcluster"
)

// allot run through a follower outlives a kill -9 of the leader: it
// re-subscribes with its framework id, finds its task again, and exits
// with the task's code and output. The task waits for a file the test
// creates only once the new leader has taken allot run back, so the
// failover happens while the task runs, whatever the host's speed.
func TestAllotRunSurvivesLeaderKill9(t *testing.T) {
	c := newMCluster(t, 3, 1)
	lead := c.leader(30 * time.Second)
	follower := c.masters[(lead+1)%len(c.masters)].http
	gate := filepath.Join(t.TempDir(), "go-on")
	run := exec.Command(allotBin, "run", "--master", follower, "--shell", "--",
		"while [ ! -e "+gate+" ]; do sleep 0.05; done; echo ran to the end")
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, stderr := &testcluster.Buffer{}, &testcluster.Buffer{}
	run.Stdout, run.Stderr = stdout, stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	t.Cleanup(func() { syscall.Kill(-run.Process.Pid, syscall.SIGKILL); <-exited })
	defer func() {
		if t.Failed() {
			t.Logf("allot run stderr:\n%s", stderr.String())
		}
	}()
	testcluster.WaitFor(t, 30*time.Second, "the task to run", func() bool { return strings.Contains(stderr.String(), "TASK_RUNNING") })
	subs := strings.Count(stderr.String(), "subscribed as framework")
	c.kill9(lead)
	if nl := c.leader(30 * time.Second); nl == lead {
		t.Fatalf("master %d still leads after kill -9", lead)
	}
	testcluster.WaitFor(t, 60*time.Second, "allot run to re-subscribe to the new leader", func() bool {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("allot run exited during the failover (%v)", err)
		default:
		}
		return strings.Count(stderr.String(), "subscribed as framework") > subs
	})
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
		exited <- err
	case <-time.After(60 * time.Second):
		t.Fatal("allot run did not exit within 60s of its task's end")
	}
	if err != nil {
		t.Fatalf("allot run: %v, want exit 0", err)
	}
	if !strings.Contains(stdout.String(), "ran to the end") {
		t.Errorf("allot run stdout %q, want the task's output", stdout.String())
	}
}
