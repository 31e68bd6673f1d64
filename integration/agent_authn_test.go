package integration

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/internal/testcluster"
)

// The agent's own HTTP endpoints on real processes, with every agent
// authentication flag on and access_sandboxes on the agent only (the
// master has no ACLs and leaves reads open, so every answer about a
// sandbox is the agent's): a task's stdout is read through the master's
// proxy by alice, whose credential the master forwards; bob is refused 403
// by the agent's ACL; a caller without a credential gets the agent's 401,
// through the master and directly. Directly on the agent, /state, /monitor and the profiler
// are closed to a caller without a credential, and an id pattern names
// nobody's sandbox.
func TestAgentHTTPAuthentication(t *testing.T) {
	dir := t.TempDir()
	creds, acls := filepath.Join(dir, "credentials.json"), filepath.Join(dir, "acls.json")
	if err := os.WriteFile(creds, []byte(`{"credentials":[{"principal":"alice","secret":"alice-secret"},{"principal":"bob","secret":"bob-secret"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(acls, []byte(`{"permissive": false, "access_sandboxes": [
		{"principals": {"values": ["alice"]}, "users": {"type": "ANY"}},
		{"principals": {"type": "ANY"}, "users": {"type": "NONE"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1,
		MasterFlags: []string{"--log-level", "debug", "--credentials", creds},
		AgentFlags: append(append([]string{}, agentFlags...), "--http-credentials", creds, "--acls", acls,
			"--authenticate-http-readonly", "--authenticate-http-readwrite")})}

	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "sandbox-authn"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("authn-1", o, "echo hello from the sandbox", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "authn-1", mesos.TASK_FINISHED)
	sandbox := "/frameworks/" + fw.ID() + "/executors/authn-1/runs/latest"
	read := url.Values{"agent_id": {o.GetAgentID().Value}, "path": {sandbox + "/stdout"}, "offset": {"0"}}.Encode()
	direct := url.Values{"path": {sandbox + "/stdout"}, "offset": {"0"}}.Encode()
	master, agent := "http://"+c.MasterAddr, "http://"+c.Agents[0].Addr

	for _, tc := range []struct {
		name, url, principal, secret string
		code                         int
		want                         string
	}{
		{"alice through the master", master + "/files/read?" + read, "alice", "alice-secret", 200, "hello from the sandbox"},
		{"bob through the master", master + "/files/read?" + read, "bob", "bob-secret", 403, "access_sandboxes[1]"},
		{"nobody through the master", master + "/files/read?" + read, "", "", 401, "the agent runs with --authenticate-http-readonly"},
		{"alice on the agent", agent + "/files/read?" + direct, "alice", "alice-secret", 200, "hello from the sandbox"},
		{"bob on the agent", agent + "/files/read?" + direct, "bob", "bob-secret", 403, "access_sandboxes[1]"},
		{"wrong secret on the agent", agent + "/files/read?" + direct, "alice", "nope", 401, "wrong secret"},
		{"nobody on the agent", agent + "/files/read?" + direct, "", "", 401, "--authenticate-http-readonly"},
		{"nobody's sandbox file", agent + "/files/sandbox?framework_id=" + fw.ID() + "&executor_id=authn-1&file=stdout", "", "", 401, ""},
		{"bob's sandbox file", agent + "/files/sandbox?framework_id=" + fw.ID() + "&executor_id=authn-1&file=stdout", "bob", "bob-secret", 403, "access_sandboxes"},
		{"alice's sandbox file", agent + "/files/sandbox?framework_id=" + fw.ID() + "&executor_id=authn-1&file=stdout", "alice", "alice-secret", 200, "hello from the sandbox"},
		{"a pattern for the ids", agent + "/files/sandbox?framework_id=*&executor_id=*&file=stdout", "alice", "alice-secret", 400, "not accepted"},
		{"nobody's /state", agent + "/state", "", "", 401, ""},
		{"nobody's /monitor", agent + "/monitor/statistics", "", "", 401, ""},
		{"alice's /state", agent + "/state", "alice", "alice-secret", 200, ""},
		{"profiler without --pprof", agent + "/debug/pprof/heap", "alice", "alice-secret", 404, ""},
		{"/health stays open", agent + "/health", "", "", 200, ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, tc.url, nil)
		if tc.principal != "" {
			req.SetBasicAuth(tc.principal, tc.secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %q, want %d with %q", tc.name, resp.StatusCode, b, tc.code, tc.want)
		}
	}
}
