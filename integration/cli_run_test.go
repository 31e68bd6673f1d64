package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/allot-sched/allot/internal/testcluster"
)

// allot run prints the task's output while the task runs: the task writes
// a line, then waits for a file the test creates only once that line has
// reached allot run's stdout. --name and --env reach the task.
func TestAllotRunStreamsOutput(t *testing.T) {
	c := newCluster(t, 1)
	gate := filepath.Join(t.TempDir(), "go-on")
	run := testcluster.StartSplit(t, "allot run", nil, allotBin, "run", "--master", c.MasterAddr, "--name", "streamer",
		"--env", "GREETING=hello from env", "--shell", "--",
		`echo "first: $GREETING"; while [ ! -e `+gate+` ]; do sleep 0.05; done; echo second; echo to stderr >&2; exit 4`)
	testcluster.WaitFor(t, 30*time.Second, "the task's first line on allot run's stdout", func() bool {
		return strings.Contains(run.Out.String(), "first: hello from env\n")
	})
	if strings.Contains(run.Out.String(), "second") || run.Exited() {
		t.Fatalf("the task went on before the gate opened: %q", run.Out.String())
	}
	st := c.state()
	if len(st.Frameworks) != 1 || st.Frameworks[0].Name != "allot run: streamer" || len(st.Frameworks[0].Tasks) != 1 || st.Frameworks[0].Tasks[0].Name != "streamer" {
		t.Errorf("--name streamer: want framework \"allot run: streamer\" with task \"streamer\", the master has %+v", st.Frameworks)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("allot run did not end with its task")
	}
	if code := run.Cmd.ProcessState.ExitCode(); code != 4 {
		t.Errorf("allot run exited %d, want the task's 4", code)
	}
	if out := run.Out.String(); out != "first: hello from env\nsecond\n" {
		t.Errorf("stdout %q, want the task's two lines once each", out)
	}
	if !strings.Contains(run.Stderr.String(), "to stderr") {
		t.Errorf("stderr lacks the task's stderr:\n%s", run.Stderr.String())
	}
}

// allot run --detach prints the task id and returns while the task runs;
// allot logs ID --follow then prints the task's output to its end, and the
// background allot run tears its framework down when the task ends.
func TestAllotRunDetach(t *testing.T) {
	c := newCluster(t, 1)
	gate := filepath.Join(t.TempDir(), "go-on")
	code, out, errOut := allotCLI(t, c.MasterAddr, "run", "--detach", "--name", "bg", "--shell", "--",
		"echo started; while [ ! -e "+gate+" ]; do sleep 0.05; done; echo finished")
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "allot-run-") || strings.Contains(id, "\n") {
		t.Fatalf("allot run --detach: exit %d, stdout %q (want the task id alone), stderr:\n%s", code, out, errOut)
	}
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o644) }) // lets the background run end
	follow := testcluster.Start(t, "logs", []string{"ALLOT_MASTER=" + c.MasterAddr}, allotBin, "logs", id, "--follow")
	testcluster.WaitFor(t, 30*time.Second, "allot logs to print the first line", func() bool { return strings.Contains(follow.Out.String(), "started") })
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-follow.Done():
	case <-time.After(60 * time.Second):
		t.Fatalf("allot logs --follow did not end with the task; output:\n%s", follow.Out.String())
	}
	if out := follow.Out.String(); out != "started\nfinished\n" || follow.Err() != nil {
		t.Errorf("allot logs --follow: %v, output %q", follow.Err(), out)
	}
	testcluster.WaitFor(t, 30*time.Second, "the background allot run to tear its framework down", func() bool {
		for _, f := range c.state().Frameworks {
			if f.Name == "allot run: bg" {
				return false
			}
		}
		return true
	})
	m := regexp.MustCompile(`kept if it fails: (\S+)\)`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("allot run --detach names no log file:\n%s", errOut)
	}
	testcluster.WaitFor(t, 30*time.Second, "the background allot run to remove its log "+m[1]+" after a clean end", func() bool {
		_, err := os.Stat(m[1])
		return os.IsNotExist(err)
	})
}

// allot run gives up on a master that stops answering: SIGSTOP keeps the
// connection open and silent, so only missed HEARTBEATs (every 2s here)
// tell; it then says so within --reconnect-timeout instead of waiting.
func TestAllotRunNoticesSilentMaster(t *testing.T) {
	c := newCluster(t, 1)
	run := testcluster.StartSplit(t, "allot run", nil, allotBin, "run", "--master", c.MasterAddr, "--reconnect-timeout", "2s", "--", "sleep", "300")
	testcluster.WaitFor(t, 30*time.Second, "the task to run", func() bool { return strings.Contains(run.Stderr.String(), "TASK_RUNNING") })
	syscall.Kill(c.Master.Cmd.Process.Pid, syscall.SIGSTOP)
	t.Cleanup(func() { syscall.Kill(c.Master.Cmd.Process.Pid, syscall.SIGCONT) })
	stopped := time.Now()
	select {
	case <-run.Done():
	case <-time.After(60 * time.Second):
		t.Fatalf("allot run still waits on a silent master after 60s; stderr:\n%s", run.Stderr.String())
	}
	// 3 missed heartbeats and a second, then 2s of re-subscribing: far
	// below Mesos's 15s heartbeats' 46s; the bound is loose for a loaded host.
	t.Logf("allot run gave up %v after the master stopped", time.Since(stopped).Round(100*time.Millisecond))
	if code := run.Cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(run.Stderr.String(), "lost the masters") ||
		!strings.Contains(run.Stderr.String(), "not even a heartbeat") {
		t.Errorf("allot run: exit %d, want 1 saying it missed heartbeats and lost the masters; stderr:\n%s", code, run.Stderr.String())
	}
}

// An agent started with a relative --work-dir runs tasks: the directory is
// made absolute at start, so the executor (which runs in its sandbox)
// finds its sandbox.
func TestAgentRelativeWorkDir(t *testing.T) {
	c := newCluster(t, 0)
	cwd := t.TempDir()
	addr := testcluster.FreePort(t)
	testcluster.Start(t, "agent", nil, "sh", "-c", "cd "+cwd+" && exec "+allotBin+" agent --master "+c.MasterAddr+
		" --listen "+addr+" --work-dir rel/agent --resources 'cpus:1;mem:256;disk:100' --shutdown-grace 1s")
	t.Cleanup(func() { testcluster.KillSandboxProcesses(cwd) })
	c.WaitAgents(1)
	code, out, errOut := allotCLI(t, c.MasterAddr, "run", "--timeout", "50s", "--", "echo", "ran in my sandbox")
	if code != 0 || out != "ran in my sandbox\n" {
		t.Fatalf("allot run on an agent with --work-dir rel/agent: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(cwd, "rel", "agent", "slaves")); err != nil {
		t.Errorf("the sandboxes are not under the relative work dir: %v", err)
	}
}
