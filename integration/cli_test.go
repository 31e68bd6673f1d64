package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/internal/shortid"
	"github.com/allot-sched/allot/internal/testcluster"
)

// allotCLI runs one allot CLI verb against the cluster's master and returns
// its exit code, stdout and stderr.
func allotCLI(t *testing.T, master string, args ...string) (int, string, string) {
	t.Helper()
	return allotCLIEnv(t, []string{"ALLOT_MASTER=" + master}, args...)
}

// The operator CLI against a real master and agents: every verb prints its
// table and its JSON, `allot logs --follow` prints a line the task writes
// after the command started, and bad ids get an answer that says what to do.
func TestOperatorCLI(t *testing.T) {
	c := newCluster(t, 2)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "cli-fw", Labels: &mesos.Labels{}})
	o := fw.takeOffer(t, "")
	// The task prints one line, waits for a marker file the test creates
	// once `allot logs --follow` runs, then prints a second line and ends.
	marker := t.TempDir() + "/go"
	script := "echo first line; while [ ! -e " + marker + " ]; do sleep 0.1; done; echo later line; echo oops >&2"
	if err := fw.call(launch(o, cmdTask("cli-task-1", o, script, 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "cli-task-1", mesos.TASK_RUNNING)
	agentID := o.GetAgentID().Value
	fwID := fw.ID()
	fwShort := cliTables(t, c, fwID, agentID)

	follow := testcluster.Start(t, "logs", []string{"ALLOT_MASTER=" + c.MasterAddr}, allotBin, "logs", "cli-task", "--follow")
	testcluster.WaitFor(t, 20*time.Second, "allot logs to print the first line", func() bool { return strings.Contains(follow.Out.String(), "first line") })
	if err := exec.Command("touch", marker).Run(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-follow.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("allot logs --follow did not end with its task; output:\n%s", follow.Out.String())
	}
	if out := follow.Out.String(); !strings.Contains(out, "later line") || follow.Err() != nil {
		t.Errorf("allot logs --follow: %v, output %q; want the line written after it started", follow.Err(), out)
	}
	fw.waitState(t, "cli-task-1", mesos.TASK_FINISHED)
	if code, out, _ := allotCLI(t, c.MasterAddr, "logs", "cli-task-1", "--stderr"); code != 0 || out != "oops\n" {
		t.Errorf("allot logs --stderr: exit %d, %q", code, out)
	}
	if code, out, _ := allotCLI(t, c.MasterAddr, "tasks", "--state", "finished"); code != 0 || !strings.Contains(out, "cli-task-1") {
		t.Errorf("allot tasks --state finished: exit %d:\n%s", code, out)
	}

	bad := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"logs", "cli-task-2"}, 1, `did you mean "cli-task-1"`},
		{[]string{"explain", fwID, "no-such-agent"}, 1, "no agent"},
		{[]string{"explain", fwShort, agentID[:8]}, 1, "agent \"" + agentID[:8] + "\" is ambiguous: it could be"},
		{[]string{"tasks", "--state", "sleepy"}, 2, "not a task state"},
		{[]string{"status", "--master", "127.0.0.1:1"}, 1, "is a master running?"},
		{[]string{"logs"}, 2, "usage: allot logs TASK"},
	}
	for _, tc := range bad {
		code, out, errOut := allotCLI(t, c.MasterAddr, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("allot %v: exit %d, stdout %q stderr %q; want exit %d with %q", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
}

// cliTables checks every list verb's table and JSON while task
// cli-task-1 of framework fwID runs on agent agentID: the tables show ids
// in their short form, the one the UI shows, and every verb takes it;
// --full-ids shows them whole. It returns the framework's short form.
func cliTables(t *testing.T, c *cluster, fwID, agentID string) string {
	st := c.state()
	var agentIDs []string
	for _, a := range st.Slaves {
		agentIDs = append(agentIDs, a.ID)
	}
	agentShort, fwShort := shortid.Short(agentID, agentIDs), shortid.Short(fwID, []string{fwID})
	if agentShort == agentID || fwShort == fwID {
		t.Fatalf("short forms %q and %q are the whole ids", agentShort, fwShort)
	}

	tables := []struct {
		verb []string
		want []string
	}{
		{[]string{"status"}, []string{"Leader", "sorter drf, agent selection rrr, mode oblivious", "Agents        2 (2 active)", "cpus"}},
		{[]string{"agents"}, []string{"ID", "CPUS", "\n" + agentShort + " ", "active"}},
		{[]string{"agents", "--full-ids"}, []string{"\n" + agentID + " "}},
		{[]string{"frameworks"}, []string{"cli-fw", "\n" + fwShort + " ", "TASKS"}},
		{[]string{"tasks"}, []string{"cli-task-1", "RUNNING", " " + agentShort + " ", " " + fwShort + " "}},
		{[]string{"tasks", "--full-ids"}, []string{" " + agentID + " ", " " + fwID + " "}},
		{[]string{"tasks", "--state", "running", "--framework", fwID[:len(fwID)-1]}, []string{"cli-task-1"}},
		{[]string{"tasks", "--state", "running", "--framework", fwShort}, []string{"cli-task-1"}},
		{[]string{"explain", fwID, agentID}, []string{fwID, agentID}},
		{[]string{"explain", fwShort, agentShort}, []string{fwID, agentID}},
	}
	for _, tc := range tables {
		code, out, errOut := allotCLI(t, c.MasterAddr, tc.verb...)
		for _, w := range tc.want {
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("allot %v: exit %d, stdout:\n%s\nstderr: %s\nwant %q", tc.verb, code, out, errOut, w)
			}
		}
		code, out, _ = allotCLI(t, c.MasterAddr, append(tc.verb, "--json")...)
		var v any
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
			t.Errorf("allot %v --json: exit %d, not JSON:\n%s", tc.verb, code, out)
		}
	}

	return fwShort
}

// The master fronts the agents' sandbox files: a path that leaves the
// sandbox is refused 403 (the agent decides), an unknown agent is 404, and
// an agent that went away answers 502 quickly rather than hanging.
func TestFilesThroughMaster(t *testing.T) {
	c := newCluster(t, 1)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "files"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("files-1", o, "echo hello files", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "files-1", mesos.TASK_FINISHED)
	agent := o.GetAgentID().Value
	sandbox := "/frameworks/" + fw.ID() + "/executors/files-1/runs/latest"
	get := func(path string, q url.Values) (int, string) {
		resp, err := http.Get("http://" + c.MasterAddr + path + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		name, path string
		q          url.Values
		code       int
		want       string
	}{
		{"read", "/files/read", url.Values{"agent_id": {agent}, "path": {sandbox + "/stdout"}, "offset": {"0"}}, 200, "hello files"},
		{"browse", "/files/browse", url.Values{"agent_id": {agent}, "path": {sandbox}}, 200, sandbox + "/stdout"},
		{"download", "/files/download", url.Values{"agent_id": {agent}, "path": {sandbox + "/stdout"}}, 200, "hello files"},
		{"escape", "/files/read", url.Values{"agent_id": {agent}, "path": {sandbox + "/../../../../../../../../etc/passwd"}}, 403, "leaves the sandbox"},
		{"unknown agent", "/files/read", url.Values{"agent_id": {"nope"}, "path": {sandbox + "/stdout"}}, 404, "not registered"},
		{"no agent", "/files/read", url.Values{"path": {sandbox + "/stdout"}}, 400, "missing agent_id"},
	}
	for _, tc := range tests {
		if code, body := get(tc.path, tc.q); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %s answered %d %q, want %d with %q", tc.name, tc.path, code, body, tc.code, tc.want)
		}
	}
	c.Agents[0].Kill(syscall.SIGKILL)
	start := time.Now()
	code, body := get("/files/read", url.Values{"agent_id": {agent}, "path": {sandbox + "/stdout"}, "offset": {"0"}})
	if code != http.StatusBadGateway || !strings.Contains(body, "did not answer") {
		t.Errorf("agent gone: answered %d %q, want 502 saying the agent did not answer", code, body)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("agent gone: the answer took %v", d)
	}
}

// `allot operator sorter set` switches the allocator's policy on a 3-master
// cluster through any master's address; the leader replicates the choice,
// so after the leader is killed -9 the new leader runs the switched policy
// (`allot status` and /state say so).
func TestSorterSwitchSurvivesLeaderKill9(t *testing.T) {
	c := newMCluster(t, 3, 1)
	old := c.leader(10 * time.Second)
	follower := c.masters[(old+1)%3].http // a follower: the call is redirected to the leader
	all := c.masters[0].http + "," + c.masters[1].http + "," + c.masters[2].http
	code, out, errOut := allotCLI(t, follower, "operator", "sorter", "set", "--master", follower, "--sorter", "psdsf", "--mode", "characterized")
	if code != 0 || !strings.Contains(out, "switched to: sorter psdsf, agent selection rrr, mode characterized") {
		t.Fatalf("sorter set: exit %d, %q %q", code, out, errOut)
	}
	if st := c.state(); st.Allocator.Sorter != "psdsf" {
		t.Fatalf("/state after the switch: allocator %v", st.Allocator)
	}
	c.kill9(old)
	lead := c.leader(30 * time.Second)
	if lead == old {
		t.Fatalf("master %d still leads after kill -9", old)
	}
	code, out, errOut = allotCLI(t, all, "status", "--master", all)
	if code != 0 || !strings.Contains(out, "sorter psdsf, agent selection rrr, mode characterized") {
		t.Errorf("allot status on the new leader: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = allotCLI(t, all, "operator", "sorter", "get", "--master", all)
	if code != 0 || !strings.Contains(out, "in force: sorter psdsf") {
		t.Errorf("sorter get on the new leader: exit %d %q", code, out)
	}
	// The web UI on a follower shows the leader's data (proxied, no redirect).
	for i := range c.masters {
		if i == lead || i == old {
			continue
		}
		resp, err := noRedirect.Get("http://" + c.masters[i].http + "/ui/data/state")
		if err != nil {
			t.Fatal(err)
		}
		var st operator.State
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil || st.Allocator.Sorter != "psdsf" {
			t.Errorf("follower %d's /ui/data/state: %d %v, allocator %v; want the leader's state", i, resp.StatusCode, err, st.Allocator)
		}
	}
}
