package integration

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/internal/testcluster"
)

// diskCluster runs one agent with posix isolation plus disk/du, measuring
// sandboxes every 200 ms; extra flags follow.
func diskCluster(t *testing.T, extra ...string) *cluster {
	t.Helper()
	flags := append(append([]string{}, agentFlags...), "--isolation", "posix/cpu,posix/mem,disk/du",
		"--container-disk-watch-interval", "200ms")
	return &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1,
		AgentFlags: append(flags, extra...)})}
}

// writer50 writes 50 MB into its sandbox and stays.
const writer50 = `head -c 52428800 /dev/zero > big && sleep 60`

func diskTask(id string, o mesos.Offer, shell string, diskMB float64) mesos.TaskInfo {
	ti := cmdTask(id, o, shell, 0.1, 32)
	ti.Resources = append(ti.Resources, scalar("disk", diskMB))
	return ti
}

// A task allocated 10 MB of disk that writes 50 MB is killed by the agent
// with REASON_CONTAINER_LIMITATION_DISK and the usage and quota in its
// message. Needs no root: disk/du is a sandbox walk.
func TestIsolationDiskQuotaKill(t *testing.T) {
	c := diskCluster(t)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "disk"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, diskTask("writer", o, writer50, 10))); err != nil {
		t.Fatal(err)
	}
	st := fw.waitState(t, "writer", mesos.TASK_FAILED)
	if st.GetSource() != mesos.SOURCE_AGENT || st.GetReason() != mesos.REASON_CONTAINER_LIMITATION_DISK {
		t.Errorf("writer failed with source %v reason %v, want SOURCE_AGENT, REASON_CONTAINER_LIMITATION_DISK (message %q)",
			st.GetSource(), st.GetReason(), st.GetMessage())
	}
	if msg := st.GetMessage(); !strings.Contains(msg, "quota (10 MB)") || !strings.Contains(msg, "Disk usage (") {
		t.Errorf("writer's message %q does not give the usage and the 10 MB quota", msg)
	}
	t.Logf("writer: %s", st.GetMessage())
}

// With --enforce-container-disk-quota=false the same task keeps running;
// the agent counts the excess in /state.
func TestIsolationDiskQuotaWarnOnly(t *testing.T) {
	c := diskCluster(t, "--enforce-container-disk-quota=false")
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "disk-warn"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, diskTask("writer", o, writer50, 10))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "writer", mesos.TASK_RUNNING)
	var checks float64
	testcluster.WaitFor(t, 15*time.Second, "the agent's /state to count the disk excess", func() bool {
		doc, err := agentState(c.Agents[0].Addr)
		n, _ := doc["disk_quota_exceeded"].(float64)
		checks, _ = doc["disk_checks"].(float64)
		return err == nil && n == 1
	})
	// Five more passes over the sandbox ended after the one that counted
	// it (which may still have been under way): none of them killed the
	// writer, or its TASK_FAILED would come before the kill's answer.
	testcluster.WaitFor(t, 15*time.Second, "five more disk checks", func() bool {
		doc, err := agentState(c.Agents[0].Addr)
		n, _ := doc["disk_checks"].(float64)
		return err == nil && n >= checks+6
	})
	if err := fw.call(calls.Kill("writer", o.AgentID.Value)); err != nil {
		t.Fatal(err)
	}
	if end := firstTerminal(t, fw, "writer"); end != mesos.TASK_KILLED {
		t.Fatalf("writer ended %v with a warn-only quota, want TASK_KILLED by the scheduler; states %v", end, fw.states("writer"))
	}
}

// firstTerminal waits for task id to end and returns its first terminal
// state.
func firstTerminal(t *testing.T, s *sched, id string) mesos.TaskState {
	t.Helper()
	var end mesos.TaskState
	testcluster.WaitFor(t, 30*time.Second, "task "+id+" to end", func() bool {
		for _, st := range s.states(id) {
			if taskstate.IsTerminal(st) {
				end = st
				return true
			}
		}
		return false
	})
	return end
}

// userMissing names what a user-switching test lacks here, or "".
func userMissing() string {
	if os.Geteuid() != 0 {
		return "switching users needs the agent to run as root (running as uid " + strconv.Itoa(os.Geteuid()) + ")"
	}
	if _, err := user.Lookup("nobody"); err != nil {
		return "no user nobody on this host: " + err.Error()
	}
	return ""
}

// openToOthers lets another user reach what the agent gives it: the
// executor binary and the work dirs live under 0700 temporary directories.
func openToOthers(t testing.TB, paths ...string) {
	t.Helper()
	tmp := filepath.Clean(os.TempDir())
	for _, p := range paths {
		for d := filepath.Clean(p); strings.HasPrefix(d, tmp+"/"); d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// taskStdout reads the stdout of command task id's sandbox.
func taskStdout(agentDir, id string) string {
	m, _ := filepath.Glob(filepath.Join(agentDir, "slaves", "*", "frameworks", "*", "executors", id, "runs", "*", "stdout"))
	if len(m) == 0 {
		return ""
	}
	b, _ := os.ReadFile(m[0])
	return string(b)
}

// A task whose CommandInfo names nobody runs as nobody (it prints id -u),
// with nobody's HOME, USER and LOGNAME, in a sandbox nobody owns; a task
// naming a user the host does not know fails with a message naming it,
// and the agent runs on. Under posix, and
// under cgroups when the host can (the executor then enters its container
// as nobody).
func TestIsolationTaskUser(t *testing.T) {
	if why := userMissing(); why != "" {
		t.Skip("skipping task user test: " + why)
	}
	nobody, _ := user.Lookup("nobody")
	isolations := []string{"posix/cpu,posix/mem"}
	if cgroupsMissing() == "" {
		isolations = append(isolations, "cgroups/cpu,cgroups/mem")
	} else {
		t.Logf("cgroups variant not run: %s", cgroupsMissing())
	}
	for _, iso := range isolations {
		t.Run(strings.ReplaceAll(iso, "/", "-"), func(t *testing.T) {
			c := isolatedCluster(t, iso)
			openToOthers(t, allotBin, c.Dir)
			fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "users"})
			o := fw.takeOffer(t, "")
			as := cmdTask("as-nobody", o, `id -u; stat -c %u .; echo "home=$HOME user=$USER logname=$LOGNAME"`, 0.1, 32)
			as.Command.User = &nobody.Username
			ghost := cmdTask("ghost", o, "id -u", 0.1, 32)
			ghostUser := "allot-no-such-user-15"
			ghost.Command.User = &ghostUser
			if err := fw.call(launch(o, as, ghost)); err != nil {
				t.Fatal(err)
			}
			st := fw.waitState(t, "ghost", mesos.TASK_FAILED)
			if !strings.Contains(st.GetMessage(), ghostUser) || st.GetSource() != mesos.SOURCE_AGENT {
				t.Errorf("ghost failed with source %v message %q, want the agent naming %q", st.GetSource(), st.GetMessage(), ghostUser)
			}
			t.Logf("ghost: %s", st.GetMessage())
			fw.waitState(t, "as-nobody", mesos.TASK_FINISHED)
			stdout := taskStdout(c.Agents[0].Dir, "as-nobody")
			out := strings.Fields(stdout)
			if len(out) < 2 || out[0] != nobody.Uid || out[1] != nobody.Uid {
				t.Errorf("as-nobody printed uid and sandbox owner %q, want %s and %s (nobody)", out, nobody.Uid, nobody.Uid)
			}
			// The environment names the task's user, not the agent's root.
			if want := fmt.Sprintf("home=%s user=%s logname=%s", nobody.HomeDir, nobody.Username, nobody.Username); !strings.Contains(stdout, want) {
				t.Errorf("as-nobody printed %q, want %q", stdout, want)
			}
			if _, err := agentState(c.Agents[0].Addr); err != nil {
				t.Errorf("agent gone after an unknown user: %v", err)
			}
		})
	}
}
