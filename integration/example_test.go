package integration

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/internal/testcluster"
)

// exampleModule is the nested module that pins mesos-go v0.0.11's example
// framework. It cannot be built inside allot's module: the example
// scheduler needs prometheus.Handler, which the client_golang allot uses
// no longer has. testdata keeps it out of ./... .
const exampleModule = "testdata/mesosgo-example"

// exampleBins builds example-scheduler and example-executor into the
// test's temporary directory and returns their paths. Only the tests that
// run them build them, so the rest of the suite does not pay for two more
// links. The test is skipped, saying so, when the nested module's
// dependencies are neither in the module cache nor reachable through the
// module proxy (an offline machine); a compile failure fails it.
func exampleBins(t *testing.T) (sched, executor string) {
	t.Helper()
	goCmd := func(args ...string) (string, error) {
		cmd := exec.Command(testcluster.GoTool(), args...)
		cmd.Dir = exampleModule
		// The nested module's go.mod and go.sum are complete: never let a
		// GOFLAGS=-mod=mod from the environment rewrite them.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly -buildvcs=false", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Downloading first tells "the modules cannot be had" (skip) from
	// "they do not compile" (fail).
	if out, err := goCmd("mod", "download"); err != nil {
		t.Skipf("skipping: mesos-go v0.0.11's example framework (%s) needs modules that are neither in the "+
			"module cache nor reachable through the Go module proxy (GOPROXY=%s): %v\n%s",
			exampleModule, goEnv("GOPROXY"), err, strings.TrimSpace(out))
	}
	dir := t.TempDir()
	const cmds = "github.com/mesos/mesos-go/api/v1/cmd/"
	if out, err := goCmd("build", "-o", dir+string(filepath.Separator), cmds+"example-scheduler", cmds+"example-executor"); err != nil {
		t.Fatalf("building mesos-go's example framework in %s: %v\n%s", exampleModule, err, out)
	}
	return filepath.Join(dir, "example-scheduler"), filepath.Join(dir, "example-executor")
}

func goEnv(name string) string {
	out, err := exec.Command(testcluster.GoTool(), "env", name).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// mesos-go's example framework, unmodified, given only a follower's address
// runs its tasks to the end: the follower forwards SUBSCRIBE's stream and
// every later call (ACCEPT, ACKNOWLEDGE, ...), the agents fetch the
// executor binary from the scheduler's own artifact server, and the
// example executor (a mesos-go custom executor) runs each task.
func TestForwardExampleFrameworkViaFollower(t *testing.T) {
	schedBin, execBin := exampleBins(t)
	c := newMCluster(t, 3, 2)
	lead := c.leader(10 * time.Second)
	f := c.masters[c.follower(lead)].http

	_, metricsPort, _ := net.SplitHostPort(testcluster.FreePort(t))
	s := testcluster.Start(t, "example-scheduler", nil, schedBin,
		"-url", "http://"+f+"/api/v1/scheduler",
		"-executor", execBin,
		// Port 0: the artifact server picks a free port itself and
		// puts it in the executor's URI.
		"-server.address", "127.0.0.1", "-server.port", "0",
		"-metrics.port", metricsPort,
		"-tasks", "3", "-cpu", "0.1", "-memory", "32",
		"-exec.cpu", "0.1", "-exec.memory", "32",
		"-name", "mesos-go-example",
	)
	select {
	case <-s.Done():
	case <-time.After(90 * time.Second):
		t.Fatalf("example-scheduler did not finish in 90 s; output:\n%s", testcluster.Tail(s.Out.String(), 6000))
	}
	out := s.Out.String()
	if !strings.Contains(out, "mission accomplished") {
		t.Fatalf("example-scheduler exited (%v) without \"mission accomplished\"; output:\n%s", s.Err(), testcluster.Tail(out, 6000))
	}
	if err := s.Err(); err != nil && !canceledAfterSuccess(err, out) {
		t.Fatalf("example-scheduler: %v; output:\n%s", err, testcluster.Tail(out, 6000))
	}
	// Every task ran through the example executor on an agent, not
	// merely reported: each sandbox holds the fetched executor binary.
	fetched, _ := filepath.Glob(filepath.Join(c.dir, "agent*", "slaves", "*", "frameworks", "*", "executors", "*", "runs", "*", "example-executor"))
	if len(fetched) == 0 {
		t.Errorf("no sandbox holds the fetched example-executor")
	}
}

// canceledAfterSuccess reports whether the example scheduler's exit is the
// one mesos-go v0.0.11 always makes after its last task finished: on
// "mission accomplished" it cancels its own context, controller.Run
// returns context.Canceled, and main log.Fatal's it (exit status 1, last
// line "context canceled"), whatever master it talked to. Any other
// failure (a task lost or failed, a call refused) ends differently.
func canceledAfterSuccess(err error, out string) bool {
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || strings.Contains(out, "Exiting because task") {
		return false
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.HasSuffix(lines[len(lines)-1], " context canceled")
}
