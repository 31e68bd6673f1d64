package integration

import (
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/internal/testcluster"
)

// mesos-go's msh (api/v1/cmd/msh at v0.0.11), unmodified, runs echo to exit
// code 0 and a failing command to its exit code.
func TestMshRunsEcho(t *testing.T) {
	c := newCluster(t, 1)
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"echo", []string{"echo", "hi"}, 0},
		{"false", []string{"sh", "-c", "exit 3"}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(mshBin, append([]string{"-master", c.MasterAddr, "-cpus", "0.1", "-memory", "32", "--"}, tc.args...)...)
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
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("msh: %v\n%s", err, out)
			}
			if code != tc.code {
				t.Fatalf("msh exit code = %d, want %d; output:\n%s", code, tc.code, out)
			}
		})
	}
}

// mesos-go's mwatch, unmodified, sees the tasks a framework runs as
// TASK_ADDED and TASK_UPDATED events on the operator API.
func TestMwatchSeesTaskEvents(t *testing.T) {
	c := newCluster(t, 1)
	host, port, _ := net.SplitHostPort(c.MasterAddr)
	w := testcluster.Start(t, "mwatch", nil, mwatchBin, "-master", host, "-port", port)
	testcluster.WaitFor(t, 10*time.Second, "mwatch to subscribe", func() bool { return c.Metric("allot_master_operator_subscribers") == 1 })
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "watched"})
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
}
