package integration

import (
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/internal/testcluster"
	"github.com/allot-sched/allot/master"
)

// follower returns the index of a live master that does not lead.
func (c *mcluster) follower(lead int) int {
	for i := range c.masters {
		if i != lead && c.alive(i) {
			return i
		}
	}
	c.t.Fatal("no live follower")
	return -1
}

// runMsh runs mesos-go's msh against addr and returns its exit code.
func runMsh(t *testing.T, addr string, args ...string) int {
	t.Helper()
	cmd := exec.Command(mshBin, append([]string{"-master", addr, "-cpus", "0.1", "-memory", "32", "--"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("msh did not finish; output:\n%s", out)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatalf("msh: %v\n%s", err, out)
	}
	return 0
}

// Unmodified mesos-go tools given a follower's address work: the follower
// forwards scheduler calls (SUBSCRIBE's stream and every later call) and
// the operator API (mwatch's SUBSCRIBE stream) to the leader.
func TestForwardToolsViaFollower(t *testing.T) {
	c := newMCluster(t, 3, 1)
	lead := c.leader(10 * time.Second)
	f := c.masters[c.follower(lead)].http

	resp, err := noRedirect.Get("http://" + f + "/state")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get(master.ForwardedHeader) != c.masters[lead].http {
		t.Fatalf("follower /state: %d, %s %q; want 200 forwarded from %s", resp.StatusCode, master.ForwardedHeader,
			resp.Header.Get(master.ForwardedHeader), c.masters[lead].http)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"echo", []string{"echo", "hi"}, 0},
		{"false", []string{"sh", "-c", "exit 3"}, 3},
	} {
		t.Run("msh/"+tc.name, func(t *testing.T) {
			if code := runMsh(t, f, tc.args...); code != tc.code {
				t.Fatalf("msh via follower: exit code %d, want %d", code, tc.code)
			}
		})
	}

	t.Run("mwatch", func(t *testing.T) {
		host, port, _ := net.SplitHostPort(f)
		w := testcluster.Start(t, "mwatch", nil, mwatchBin, "-master", host, "-port", port)
		testcluster.WaitFor(t, 10*time.Second, "mwatch to subscribe through the follower", func() bool {
			return c.metric(lead, "allot_master_operator_subscribers") == 1
		})
		fw := subscribe(t, f, mesos.FrameworkInfo{Name: "watched"})
		testcluster.WaitFor(t, 10*time.Second, "mwatch to print FRAMEWORK_ADDED", func() bool { return strings.Contains(w.Out.String(), "FRAMEWORK_ADDED") })
		o := fw.takeOffer(t, "")
		if err := fw.call(launch(o, cmdTask("watched-1", o, "true", 0.1, 32))); err != nil {
			t.Fatal(err)
		}
		fw.waitState(t, "watched-1", mesos.TASK_FINISHED)
		testcluster.WaitFor(t, 10*time.Second, "mwatch to print TASK_ADDED and TASK_UPDATED ... TASK_FINISHED", func() bool {
			out := w.Out.String()
			return strings.Contains(out, "TASK_ADDED") && strings.Contains(out, "TASK_UPDATED") && strings.Contains(out, "TASK_FINISHED")
		})
	})
}

// A framework and an agent that only know one follower's address (no
// /redirect lookup, no other seeds) keep running tasks across a kill -9 of the
// leader: the follower ends the forwarded stream when the leader changes
// (or becomes the leader itself), and the framework's re-SUBSCRIBE
// reaches the new leader through it with the same framework id.
func TestForwardFrameworkSurvivesLeaderKill9(t *testing.T) {
	c := newMCluster(t, 3, 2)
	old := c.leader(10 * time.Second)
	f := c.follower(old)
	// A third agent knows only the follower: the agent protocol is
	// forwarded too, and its stream ends and comes back the same way.
	c.addAgentVia("cpus:2;mem:2048;disk:10000;ports:[31000-32000]", []string{c.masters[f].http})
	c.waitAgents(3)
	fw := startRSchedVia(t, []string{c.masters[f].http}, "sleep 0.3", true)
	fw.setLaunching(true)
	testcluster.WaitFor(t, 30*time.Second, "10 tasks launched through the follower", func() bool { return fw.launchedCount() >= 10 })
	before, subs := fw.launchedCount(), fw.subscriptions()
	c.kill9(old)
	if lead := c.leader(30 * time.Second); lead == old {
		t.Fatalf("master %d still leads after kill -9", old)
	}
	testcluster.WaitFor(t, 30*time.Second, "10 more tasks launched under the new leader", func() bool { return fw.launchedCount() >= before+10 })
	if fw.subscriptions() <= subs {
		t.Errorf("the framework did not re-subscribe after the leader died (%d subscriptions)", fw.subscriptions())
	}
	fw.setLaunching(false)
	testcluster.WaitFor(t, 60*time.Second, "every launched task to be finished or reported lost", func() bool {
		return len(fw.unaccounted(true)) == 0
	})
	t.Logf("framework: %s", fw.summary())
	for _, id := range fw.lost() {
		// No agent died: a task reported lost must never have run (the
		// old leader took its ACCEPT and died before the launch left it).
		runs, _ := filepath.Glob(filepath.Join(c.dir, "agent*", "slaves", "*", "frameworks", "*", "executors", id, "runs", "*"))
		if len(runs) > 0 {
			t.Errorf("task %s was reported lost but ran: %v", id, runs)
		}
	}
	fw.checkStableID(t)
	c.waitAgents(3)
	c.checkInvariants()
}

// With --redirect a follower answers leader-only calls with 307 to the
// leader, as before forwarding existed; /redirect answers 307 either way.
func TestForwardRedirectFlag(t *testing.T) {
	c := newMCluster(t, 3, 0, "--redirect")
	lead := c.leader(10 * time.Second)
	f := c.masters[c.follower(lead)].http
	for _, path := range []string{"/state", "/redirect"} {
		resp, err := noRedirect.Get("http://" + f + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTemporaryRedirect || !strings.HasPrefix(resp.Header.Get("Location"), "//"+c.masters[lead].http) {
			t.Errorf("follower %s with --redirect: %d Location %q, want 307 to %s", path, resp.StatusCode, resp.Header.Get("Location"), c.masters[lead].http)
		}
		if h := resp.Header.Get(master.ForwardedHeader); h != "" {
			t.Errorf("follower %s with --redirect was forwarded (%s)", path, h)
		}
	}
}
