package integration

import (
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// A task larger than every agent does not wait forever: allot run fails
// within seconds of subscribing, naming cpus and the largest agent, and
// allot explain FRAMEWORK (no agent) names the resource for a framework
// that declared such a task, as /state does once cycles pass.
func TestTooBigTaskSaysWhy(t *testing.T) {
	c := newCluster(t, 2) // two agents of cpus 4
	run := testcluster.StartSplit(t, "allot run", []string{"ALLOT_MASTER=" + c.MasterAddr}, allotBin, "run", "--cpus", "16", "--", "echo", "big")
	testcluster.WaitFor(t, 30*time.Second, "allot run to subscribe", func() bool {
		return strings.Contains(run.Stderr.String(), "subscribed") || run.Exited()
	})
	select {
	case <-run.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("allot run --cpus 16 on agents of 4 cpus still waits 10 s after subscribing; stderr:\n%s", run.Stderr.String())
	}
	errOut := run.Stderr.String()
	t.Logf("allot run said:\n%s", errOut)
	if code := run.Cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("allot run exited 0 for a task no agent can run")
	}
	for _, w := range []string{"needs cpus 16", "the largest agent has 4 cpus in total (2 agents)"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("allot run's stderr does not say %q:\n%s", w, errOut)
		}
	}

	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "too-big"})
	if err := fw.call(calls.Request(mesos.Request{Resources: []mesos.Resource{scalar("cpus", 16), scalar("mem", 32)}})); err != nil {
		t.Fatal(err)
	}
	fw.mu.Lock()
	id := fw.id
	fw.mu.Unlock()
	code, out, stderr := allotCLI(t, c.MasterAddr, "explain", id)
	if code != 0 || !strings.Contains(out, "needs cpus 16") || !strings.Contains(out, "reason: too_big (cpus)") {
		t.Errorf("allot explain %s: exit %d, stdout %q, stderr %q; want the reason too_big naming cpus", id, code, out, stderr)
	}
	testcluster.WaitFor(t, 30*time.Second, "/state to show why the framework gets no offers", func() bool {
		for _, f := range c.state().Frameworks {
			if f.ID == id && f.Unplaced != nil {
				return f.Unplaced.Reason == "too_big" && f.Unplaced.Dimension == "cpus" && f.Unplaced.Never
			}
		}
		return false
	})
}
