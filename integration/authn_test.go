package integration

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/testcluster"
	"github.com/allot-sched/allot/master"
)

// Authentication (docs/security.md) on real processes: the credentials
// files are written as an operator would, in Mesos's JSON and text forms.

const (
	fwPrincipal, fwSecret       = "fw", "fw-secret"
	agentPrincipal, agentSecret = "agent", "agent-secret"
	opPrincipal, opSecret       = "ops", "ops-secret"
)

// authnFiles writes the master's credentials (JSON) and the agent's
// credential (Mesos's text form) and returns their paths.
func authnFiles(t *testing.T) (creds, agentCred string) {
	t.Helper()
	dir := t.TempDir()
	creds, agentCred = filepath.Join(dir, "credentials.json"), filepath.Join(dir, "agent-credential")
	json := `{"credentials":[{"principal":"` + fwPrincipal + `","secret":"` + fwSecret + `"},
  {"principal":"` + agentPrincipal + `","secret":"` + agentSecret + `"},
  {"principal":"` + opPrincipal + `","secret":"` + opSecret + `"}]}`
	if err := os.WriteFile(creds, []byte(json), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agentCred, []byte(agentPrincipal+" "+agentSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return creds, agentCred
}

// basicCaller is mesos-go's httpsched with mesos-go's own httpcli.BasicAuth,
// unmodified, as a Mesos framework authenticates (no credential when
// principal is ""). It retries a failed SUBSCRIBE once, as
// framework/sched's does: httpsched's default retries any SUBSCRIBE error,
// a 401 included, 9 times with backoff up to 13 s (about a minute) before
// reporting it, since it cannot tell a refusal from a leader change.
func basicCaller(addr, principal, secret string) calls.Caller {
	do := []httpcli.ConfigOpt{httpcli.Timeout(10 * time.Second)}
	if principal != "" {
		do = append(do, httpcli.BasicAuth(principal, secret))
	}
	return httpsched.NewCaller(httpcli.New(
		httpcli.Endpoint("http://"+addr+"/api/v1/scheduler"),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(do...)),
	), httpsched.MaxRedirects(1))
}

// Schedulers through mesos-go's client: none and a wrong secret are
// refused with 401 at once; the right credential runs tasks on an agent
// that authenticated itself and whose executors hold tokens (allot's
// command executor and a mesos-go executor); one executor's token is
// refused (403) on another's calls, and an executor that sends no token
// never subscribes.
func TestSchedulerAndExecutorAuthentication(t *testing.T) {
	creds, agentCred := authnFiles(t)
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1,
		MasterFlags: []string{"--log-level", "debug", "--credentials", creds, "--authenticate-frameworks", "--authenticate-agents"},
		AgentFlags:  append(append([]string{}, agentFlags...), "--credential", agentCred, "--authenticate-http-executors")})}

	for _, tt := range []struct{ name, principal, secret string }{{"no credential", "", ""}, {"wrong secret", fwPrincipal, "nope"}} {
		caller := basicCaller(c.MasterAddr, tt.principal, tt.secret)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		start := time.Now()
		resp, err := caller.Call(ctx, calls.Subscribe(&mesos.FrameworkInfo{User: "root", Name: "intruder"}))
		cancel()
		if resp != nil {
			resp.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "not authenticated") {
			t.Errorf("%s: SUBSCRIBE err = %v, want mesos-go's 401 (call not authenticated)", tt.name, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: refusal took %v: a 401 must come at once", tt.name, d)
		}
	}
	code, body := postRaw(t, c.MasterAddr, "/api/v1/scheduler", "application/json", []byte(`{"type":"SUBSCRIBE"}`), nil)
	if code != 401 || !strings.Contains(body, "--authenticate-frameworks") {
		t.Errorf("raw SUBSCRIBE without a credential: %d %q, want 401 naming the flag", code, body)
	}
	if n := len(c.state().Frameworks); n != 0 {
		t.Errorf("%d frameworks registered by unauthenticated schedulers", n)
	}

	// A FrameworkInfo.principal other than the authenticated one is refused.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	other := opPrincipal
	resp, err := basicCaller(c.MasterAddr, fwPrincipal, fwSecret).Call(ctx, calls.Subscribe(&mesos.FrameworkInfo{User: "root", Name: "x", Principal: &other}))
	cancel()
	if resp != nil {
		resp.Close()
	}
	if err == nil {
		t.Error("a framework claiming another principal was admitted")
	}

	fw := subscribeWith(t, basicCaller(c.MasterAddr, fwPrincipal, fwSecret), mesos.FrameworkInfo{Name: "authn-fw"})
	o := fw.takeOffer(t, "")
	exA, exB, exC := execInfo("ex-a"), execInfo("ex-b"), execInfo("ex-c")
	exC.Command.Environment = &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: "TESTEXEC_NO_TOKEN", Value: strp("1")}}}
	if err := fw.call(launch(o,
		cmdTask("cmd-1", o, "true", 0.1, 32),
		execTask("b-sleeps", o, exB, "sleep"),
		execTask("a-impersonates-b", o, exA, "impersonate:ex-b"),
		execTask("c-no-token", o, exC, ""),
	)); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "cmd-1", mesos.TASK_FINISHED) // allot's command executor presented its token
	fw.waitState(t, "b-sleeps", mesos.TASK_RUNNING)
	st := fw.waitState(t, "a-impersonates-b", mesos.TASK_FINISHED)
	if !strings.Contains(st.GetMessage(), "answered 403") || !strings.Contains(st.GetMessage(), "the token is executor ex-a's") {
		t.Errorf("impersonation: %q, want a 403 naming the token's executor", st.GetMessage())
	}
	// The executor without its token cannot subscribe; the agent kills it
	// at the registration timeout (3s here) and its task fails.
	if s := fw.waitState(t, "c-no-token", mesos.TASK_FAILED); s.GetSource() != mesos.SOURCE_AGENT {
		t.Errorf("c-no-token failed from %v, want the agent", s.GetSource())
	}
	if got := fw.states("c-no-token"); len(got) != 1 {
		t.Errorf("c-no-token went through %v: it must never have run", got)
	}
}

// An agent without its credential cannot register and says why; with it,
// it registers.
func TestAgentAuthentication(t *testing.T) {
	creds, agentCred := authnFiles(t)
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 0,
		MasterFlags: []string{"--log-level", "debug", "--credentials", creds, "--authenticate-agents"},
		AgentFlags:  agentFlags})}
	bare := &testcluster.Agent{Addr: testcluster.FreePort(t), Dir: filepath.Join(c.Dir, "agent-bare"), Resources: testcluster.DefaultResources}
	testcluster.StartAgent(t, allotBin, c.MasterAddr, bare, agentFlags...)
	testcluster.WaitFor(t, 20*time.Second, "the agent without a credential to log why it cannot register", func() bool {
		return strings.Contains(bare.Out.String(), "401") && strings.Contains(bare.Out.String(), "start this agent with --credential FILE")
	})
	if n := len(c.state().Slaves); n != 0 {
		t.Fatalf("%d agents registered without a credential", n)
	}
	good := &testcluster.Agent{Addr: testcluster.FreePort(t), Dir: filepath.Join(c.Dir, "agent-good"), Resources: testcluster.DefaultResources}
	c.Agents = append(c.Agents, good)
	testcluster.StartAgent(t, allotBin, c.MasterAddr, good, append(append([]string{}, agentFlags...), "--credential", agentCred)...)
	c.WaitAgents(1)
	if n := len(c.state().Slaves); n != 1 {
		t.Errorf("%d agents registered, want only the one with its credential", n)
	}
}

// allotCLIEnv runs the allot binary with env added to the test's
// environment (bounded to 60 s) and returns its exit code, stdout and
// stderr.
func allotCLIEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(allotBin, args...)
	cmd.Env = append(cmd.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("allot %v did not finish; output:\n%s\n%s", args, out.String(), errb.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// authnMaster starts a lone master with every HTTP endpoint authenticated.
// It has no agents: the harness's own wait for agents reads /state
// without a credential.
func authnMaster(t *testing.T) string {
	t.Helper()
	creds, _ := authnFiles(t)
	addr := testcluster.FreePort(t)
	testcluster.StartMaster(t, "master", allotBin, addr, "--work-dir", filepath.Join(t.TempDir(), "master"), "--log-level", "debug",
		"--credentials", creds, "--authenticate-http-readonly", "--authenticate-http-readwrite", "--authenticate-frameworks")
	return addr
}

// The operator CLI with and without credentials, from flags, the
// environment and a secret file.
func TestCLIAuthentication(t *testing.T) {
	addr := authnMaster(t)
	secretFile := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secretFile, []byte(opSecret+"\n"), 0o600)
	master := "ALLOT_MASTER=" + addr
	tests := []struct {
		name    string
		env     []string
		args    []string
		ok      bool
		wantOut string
	}{
		{"status without", []string{master}, []string{"status"}, false, "ALLOT_PRINCIPAL"},
		{"status wrong secret", []string{master, "ALLOT_PRINCIPAL=" + opPrincipal, "ALLOT_SECRET=nope"}, []string{"status"}, false, "401"},
		{"status from env", []string{master, "ALLOT_PRINCIPAL=" + opPrincipal, "ALLOT_SECRET=" + opSecret}, []string{"status"}, true, "leader"},
		{"agents from flags", []string{master}, []string{"agents", "--principal", opPrincipal, "--secret", opSecret}, true, ""},
		{"operator without", nil, []string{"operator", "raft", "list-peers", "--master", addr}, false, "401"},
		{"operator secret file", nil, []string{"operator", "sorter", "set", "--sorter", "fifo", "--master", addr, "--principal", opPrincipal, "--secret-file", secretFile}, true, "switched to: sorter fifo"},
		{"secret without principal", []string{master}, []string{"status", "--secret", "x"}, false, "need --principal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := allotCLIEnv(t, tt.env, tt.args...)
			if (code == 0) != tt.ok || !strings.Contains(out+errOut, tt.wantOut) {
				t.Errorf("allot %v: exit %d, want ok=%v with %q\nstdout:\n%s\nstderr:\n%s", tt.args, code, tt.ok, tt.wantOut, out, errOut)
			}
		})
	}
}

// The web UI with read-only and read-write authentication on: the page
// itself asks for the credential (401 with a Basic challenge, which a
// browser turns into its login prompt), and once the browser holds it the
// UI's same-origin data fetches, its event stream and its policy switch
// (a read-write POST) all work with no further prompt.
func TestWebUIAuthentication(t *testing.T) {
	ctx := browser(t)
	addr := authnMaster(t)
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="allot"` {
		t.Fatalf("UI without a credential: %d %q, want 401 with a Basic challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// The browser's login prompt, answered through the DevTools Fetch
	// domain: Chromium asks (AuthRequired) where a person would be
	// prompted, and keeps the answer in its HTTP auth cache.
	var prompts atomic.Int32
	chromedp.ListenTarget(ctx, func(ev any) {
		exec := func(a chromedp.Action) {
			go a.Do(cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Target))
		}
		switch e := ev.(type) {
		case *fetch.EventRequestPaused:
			exec(fetch.ContinueRequest(e.RequestID))
		case *fetch.EventAuthRequired:
			prompts.Add(1)
			exec(fetch.ContinueWithAuth(e.RequestID, &fetch.AuthChallengeResponse{
				Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: opPrincipal, Password: opSecret}))
		}
	})
	run(t, ctx, "answer login prompts", fetch.Enable().WithHandleAuthRequests(true))
	base := "http://" + addr
	run(t, ctx, "overview with a credential", chromedp.Navigate(base+"/"), waitText("#policy", "drf · rrr · oblivious"), waitText("#live", "live"))
	if n := prompts.Load(); n < 1 || n > 2 {
		t.Errorf("the browser was prompted %d times for the overview, want once (the page; its fetches reuse the answer)", n)
	}
	run(t, ctx, "allocator page", chromedp.Navigate(base+"/allocator"), chromedp.WaitVisible("#sorter-form[data-synced]", chromedp.ByQuery))
	run(t, ctx, "policy switch", chromedp.SetValue("#sorter", "fifo", chromedp.ByID),
		chromedp.Click("#sorter-apply", chromedp.ByID), waitText("#sorter-result", "In force"))
	code, out, errOut := allotCLIEnv(t, []string{"ALLOT_MASTER=" + addr, "ALLOT_PRINCIPAL=" + opPrincipal, "ALLOT_SECRET=" + opSecret}, "operator", "sorter", "get", "--master", addr)
	if code != 0 || !strings.Contains(out, "sorter fifo") {
		t.Errorf("after the UI's switch: exit %d %q %q, want sorter fifo", code, out, errOut)
	}
}

// Through a follower of a 3-master cluster: the follower forwards the
// caller's Authorization header, so a framework with its credential
// subscribes and runs a task through the follower while one without is
// refused, and the operator API answers 401 without a credential and
// forwards with one.
func TestAuthenticationViaFollower(t *testing.T) {
	creds, _ := authnFiles(t)
	c := newMCluster(t, 3, 1, "--credentials", creds, "--authenticate-frameworks", "--authenticate-http-readwrite")
	lead := c.leader(10 * time.Second)
	f := c.masters[c.follower(lead)].http

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	resp, err := basicCaller(f, "", "").Call(ctx, calls.Subscribe(&mesos.FrameworkInfo{User: "root", Name: "intruder"}))
	cancel()
	if resp != nil {
		resp.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "not authenticated") {
		t.Errorf("SUBSCRIBE via the follower without a credential: %v, want 401", err)
	}

	fw := subscribeWith(t, basicCaller(f, fwPrincipal, fwSecret), mesos.FrameworkInfo{Name: "via-follower"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("via-follower-1", o, "true", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "via-follower-1", mesos.TASK_FINISHED)

	body := []byte(`{"type":"GET_HEALTH"}`)
	if code, msg := postRaw(t, f, "/api/v1", "application/json", body, nil); code != 401 || !strings.Contains(msg, "--authenticate-http-readwrite") {
		t.Errorf("operator API via the follower without a credential: %d %q", code, msg)
	}
	req, _ := http.NewRequest("POST", "http://"+f+"/api/v1", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(opPrincipal, opSecret)
	hr, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	hr.Body.Close()
	if hr.StatusCode != 200 || hr.Header.Get(master.ForwardedHeader) != c.masters[lead].http {
		t.Errorf("operator API via the follower with a credential: %d, forwarded from %q; want 200 from the leader %s",
			hr.StatusCode, hr.Header.Get(master.ForwardedHeader), c.masters[lead].http)
	}
}

// The web UI opened as http://user:pass@host/, as an operator might
// bookmark it: the page loads with the credential from its URL, and its
// data fetches, which Chromium refuses for URLs carrying credentials, go
// to location.origin (no userinfo) and reuse the credential the page's
// load put in the browser's auth cache.
func TestWebUICredentialsInURL(t *testing.T) {
	ctx := browser(t)
	addr := authnMaster(t)
	withCreds := "http://" + opPrincipal + ":" + opSecret + "@" + addr
	run(t, ctx, "overview opened with userinfo", chromedp.Navigate(withCreds+"/"),
		waitText("#policy", "drf · rrr · oblivious"), waitText("#live", "live"))
	var errShown bool
	run(t, ctx, "error box", chromedp.Evaluate(`!document.getElementById("error").hidden`, &errShown))
	if errShown {
		var msg string
		run(t, ctx, "error text", chromedp.Text("#error", &msg, chromedp.ByID))
		t.Errorf("the UI opened with userinfo shows an error: %q", msg)
	}
}
