package master

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/auth"
)

// Authorization tests go through the master's real HTTP handler
// (Master.Handler) on a harness master. Authentication is not part of
// this package: testPrincipalHeader stands in for it, set only by these
// tests' wrapper, as an authenticator would store the principal.
const testPrincipalHeader = "X-Test-Principal"

// authzHarness is a harness master with ACLs, serving HTTP on a loopback
// listener through a wrapper that marks each request with its test
// principal.
type authzHarness struct {
	*harness
	srv *httptest.Server
}

// newAuthzHarness builds it; cfg, if given, adjusts the master's
// configuration further.
func newAuthzHarness(t *testing.T, acls string, cfg ...func(*Config)) *authzHarness {
	t.Helper()
	a, err := auth.ParseACLs([]byte(acls))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) {
		c.Authorizer = a
		for _, f := range cfg {
			f(c)
		}
	})
	mux := h.m.Handler()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.Header.Get(testPrincipalHeader); p != "" {
			r = r.WithContext(auth.WithPrincipal(r.Context(), p))
		}
		mux.ServeHTTP(w, r)
	}))
	srv.Start()
	h.m.ln = srv.Listener // /state names the master by its listener
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return &authzHarness{harness: h, srv: srv}
}

// do sends a request as principal ("" for none) and returns status and body.
func (h *authzHarness) do(method, path, principal string, body []byte, hdr map[string]string) (int, string) {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.srv.URL+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if principal != "" {
		req.Header.Set(testPrincipalHeader, principal)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// openStream posts a SUBSCRIBE body to path as principal. On 200 the
// stream's frames arrive in the returned fakeStream (only its RecordIO
// framing is used) until the test ends; otherwise it returns the body.
func (h *authzHarness) openStream(path, principal string, body []byte) (int, string, *fakeStream) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if principal != "" {
		req.Header.Set(testPrincipalHeader, principal)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	s := &fakeStream{Stream: api.NewStream(api.JSON, 16)} // for its Codec: frames are JSON
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(s, resp.Body)
	}()
	h.t.Cleanup(func() {
		resp.Body.Close()
		<-copied
	})
	return resp.StatusCode, "", s
}

// subscribeHTTP posts a scheduler SUBSCRIBE as principal. A 200 leaves the
// stream open until the test ends and returns the framework id; otherwise
// the body.
func (h *authzHarness) subscribeHTTP(principal string, info mesos.FrameworkInfo) (int, string) {
	h.t.Helper()
	b, _ := json.Marshal(&scheduler.Call{Type: scheduler.Call_SUBSCRIBE, Subscribe: &scheduler.Call_Subscribe{FrameworkInfo: &info}})
	code, body, s := h.openStream("/api/v1/scheduler", principal, b)
	if s == nil {
		return code, body
	}
	ev := s.nextEvent(h.t, scheduler.Event_SUBSCRIBED)
	return code, ev.Subscribed.FrameworkID.Value
}

// frameworkAs subscribes a framework of user as principal, as the HTTP
// handler does once register_frameworks allowed it.
func (h *authzHarness) frameworkAs(principal, user string) *fakeFramework {
	h.t.Helper()
	fw := h.subscribeInfo("", mesos.FrameworkInfo{User: user, Name: principal + "-fw"})
	h.m.mu.Lock()
	h.m.setSubjectLocked(fw.id, auth.Subject{Principal: principal, Authenticated: principal != ""})
	h.m.mu.Unlock()
	return fw
}

func (h *authzHarness) denials(act auth.Action) float64 {
	return testutil.ToFloat64(h.m.authz.denials.WithLabelValues(string(act)))
}

func wantDenied(t *testing.T, code int, body, acl string) {
	t.Helper()
	if code != http.StatusForbidden || !strings.Contains(body, acl) {
		t.Fatalf("answer %d %q, want 403 naming %s", code, body, acl)
	}
}

func TestAuthzSubscribe(t *testing.T) {
	h := newAuthzHarness(t, `{"register_frameworks": [
		{"principals": {"values": ["alice"]}, "roles": {"values": ["dev"]}},
		{"principals": {"type": "ANY"}, "roles": {"type": "NONE"}}]}`)
	multi := []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE}}
	tests := []struct {
		name, principal string
		info            mesos.FrameworkInfo
		acl             string // "" allowed
	}{
		{"allowed role", "alice", mesos.FrameworkInfo{User: "u", Name: "a", Role: strPtr("dev")}, ""},
		{"another principal in the role", "bob", mesos.FrameworkInfo{User: "u", Name: "b", Role: strPtr("dev")}, "register_frameworks[1]"},
		{"default role * is a role too", "alice", mesos.FrameworkInfo{User: "u", Name: "c"}, "register_frameworks[1]"},
		{"every role of a multi-role framework", "alice", mesos.FrameworkInfo{User: "u", Name: "d", Roles: []string{"dev", "prod"}, Capabilities: multi}, `role "prod"`},
		// ANY matches authenticated principals only: a caller without one
		// falls through to permissive (true here).
		{"unauthenticated falls to permissive", "", mesos.FrameworkInfo{User: "u", Name: "e", Role: strPtr("prod")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := h.denials(auth.RegisterFrameworks)
			code, body := h.subscribeHTTP(tt.principal, tt.info)
			if tt.acl != "" {
				wantDenied(t, code, body, tt.acl)
				if h.denials(auth.RegisterFrameworks) != before+1 {
					t.Errorf("denial not counted")
				}
				return
			}
			if code != http.StatusOK {
				t.Fatalf("answer %d %q, want 200", code, body)
			}
			h.m.mu.Lock()
			got := h.m.frameworks[body].subject
			h.m.mu.Unlock()
			if want := (auth.Subject{Principal: tt.principal, Authenticated: tt.principal != ""}); got != want {
				t.Errorf("framework's subject %+v, want %+v", got, want)
			}
		})
	}
	h.m.mu.Lock()
	n := len(h.m.frameworks)
	h.m.mu.Unlock()
	if n != 2 {
		t.Errorf("%d frameworks admitted, want the 2 allowed", n)
	}
}

// A denied task fails alone with TASK_ERROR naming the ACL; the call's
// other task launches, and the denied task's resources are offered again.
func TestAuthzLaunch(t *testing.T) {
	h := newAuthzHarness(t, `{"run_tasks": [
		{"principals": {"values": ["alice"]}, "users": {"values": ["alice"]}},
		{"principals": {"type": "ANY"}, "users": {"type": "NONE"}}]}`)
	agentID, agent := h.agent("cpus:4;mem:4096")
	fw := h.frameworkAs("alice", "alice")
	o := h.offer(fw)
	root := "root"
	bad := commandTask("as-root", agentID, 1, 1024)
	bad.Command.User = &root
	if err := h.call(fw, launchCall(o, refuse(0), commandTask("ok", agentID, 1, 1024), bad)); err != nil {
		t.Fatalf("ACCEPT: %v", err)
	}
	up := fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
	if up.TaskID.Value != "as-root" || up.GetState() != mesos.TASK_ERROR || up.GetReason() != mesos.REASON_TASK_UNAUTHORIZED ||
		!strings.Contains(up.GetMessage(), "run_tasks[1]") || !strings.Contains(up.GetMessage(), `"root"`) {
		t.Fatalf("update %s %s %s %q, want as-root TASK_ERROR TASK_UNAUTHORIZED naming run_tasks[1] and root",
			up.TaskID.Value, up.GetState(), up.GetReason(), up.GetMessage())
	}
	run := agent.nextAgentEvent(t, api.AgentEventType_RUN)
	var ti mesos.TaskInfo
	if err := ti.Unmarshal(run.Task); err != nil || ti.TaskID.Value != "ok" {
		t.Fatalf("RUN of %q (%v), want ok", ti.TaskID.Value, err)
	}
	h.m.mu.Lock()
	_, launched := h.m.frameworks[fw.id].tasks["as-root"]
	h.m.mu.Unlock()
	if launched {
		t.Fatal("the denied task was recorded as launched")
	}
	if got := scalarsOf(h.offer(fw).Resources); got["cpus"] != 3 {
		t.Errorf("re-offered %v, want the 3 cpus the launched task left (the denied task's included)", got)
	}
}

func TestAuthzLaunchGroupAllOrNothing(t *testing.T) {
	h := newAuthzHarness(t, `{"permissive": false, "run_tasks": [
		{"principals": {"values": ["alice"]}, "users": {"values": ["alice"]}}]}`)
	agentID, agent := h.agent("cpus:4;mem:4096")
	fw := h.frameworkAs("alice", "alice")
	o := h.offer(fw)
	root := "root"
	t1, t2 := commandTask("g1", agentID, 1, 512), commandTask("g2", agentID, 1, 512)
	t1.Command, t2.Command = nil, &mesos.CommandInfo{User: &root}
	ex := mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "ex"}, Type: mesos.ExecutorInfo_DEFAULT,
		Resources: []mesos.Resource{scalarRes("cpus", 0.1), scalarRes("mem", 32)}}
	call := &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{OfferIDs: []mesos.OfferID{o.ID},
		Operations: []mesos.Offer_Operation{
			{Type: mesos.Offer_Operation_LAUNCH_GROUP, LaunchGroup: &mesos.Offer_Operation_LaunchGroup{Executor: ex, TaskGroup: mesos.TaskGroupInfo{Tasks: []mesos.TaskInfo{t1, t2}}}},
			{Type: mesos.Offer_Operation_LAUNCH, Launch: &mesos.Offer_Operation_Launch{TaskInfos: []mesos.TaskInfo{commandTask("solo", agentID, 1, 512)}}},
		}}}
	if err := h.call(fw, call); err != nil {
		t.Fatalf("ACCEPT: %v", err)
	}
	for _, want := range []string{"g1", "g2"} {
		up := fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
		if up.TaskID.Value != want || up.GetState() != mesos.TASK_ERROR || !strings.Contains(up.GetMessage(), "permissive") {
			t.Fatalf("update %s %s %q, want %s TASK_ERROR saying no ACL matched", up.TaskID.Value, up.GetState(), up.GetMessage(), want)
		}
	}
	run := agent.nextAgentEvent(t, api.AgentEventType_RUN)
	var ti mesos.TaskInfo
	if err := ti.Unmarshal(run.Task); err != nil || ti.TaskID.Value != "solo" {
		t.Fatalf("RUN of %q (%v), want solo", ti.TaskID.Value, err)
	}
}

func TestAuthzTeardown(t *testing.T) {
	h := newAuthzHarness(t, `{"teardown_frameworks": [
		{"principals": {"values": ["ops"]}, "framework_principals": {"type": "ANY"}},
		{"principals": {"type": "ANY"}, "framework_principals": {"type": "NONE"}}]}`)
	fw := h.frameworkAs("alice", "alice")
	teardown := []byte(`{"type":"TEARDOWN","teardown":{"framework_id":{"value":"` + fw.id + `"}}}`)

	code, body := h.do(http.MethodPost, "/api/v1", "eve", teardown, nil)
	wantDenied(t, code, body, "teardown_frameworks[1]")
	if !strings.Contains(body, `framework principal "alice"`) {
		t.Errorf("denial %q does not name the framework's principal", body)
	}
	// The scheduler's own TEARDOWN acts as its principal, alice: denied too.
	err := h.call(fw, &scheduler.Call{Type: scheduler.Call_TEARDOWN})
	if err == nil || !strings.Contains(err.Error(), "teardown_frameworks[1]") {
		t.Fatalf("scheduler TEARDOWN: %v, want a denial naming teardown_frameworks[1]", err)
	}
	h.m.mu.Lock()
	_, alive := h.m.frameworks[fw.id]
	h.m.mu.Unlock()
	if !alive {
		t.Fatal("a denied TEARDOWN removed the framework")
	}
	if code, body := h.do(http.MethodPost, "/api/v1", "ops", teardown, nil); code != http.StatusOK {
		t.Fatalf("ops TEARDOWN: %d %q", code, body)
	}
	h.m.mu.Lock()
	_, alive = h.m.frameworks[fw.id]
	h.m.mu.Unlock()
	if alive {
		t.Fatal("an allowed TEARDOWN left the framework")
	}
	if n := h.denials(auth.TeardownFrameworks); n != 2 {
		t.Errorf("%v teardown denials counted, want 2", n)
	}
}

func TestAuthzUpdateWeights(t *testing.T) {
	h := newAuthzHarness(t, `{"update_weights": [
		{"principals": {"values": ["ops"]}, "roles": {"type": "ANY"}},
		{"principals": {"values": ["dev-lead"]}, "roles": {"values": ["dev"]}},
		{"principals": {"type": "ANY"}, "roles": {"type": "NONE"}}]}`)
	weights := func(roles ...string) []byte {
		var wi []string
		for _, r := range roles {
			wi = append(wi, `{"role":"`+r+`","weight":2}`)
		}
		return []byte(`{"type":"UPDATE_WEIGHTS","update_weights":{"weight_infos":[` + strings.Join(wi, ",") + `]}}`)
	}
	tests := []struct {
		principal string
		roles     []string
		acl       string
	}{
		{"dev-lead", []string{"dev"}, ""},
		{"dev-lead", []string{"dev", "prod"}, "update_weights[2]"},
		{"eve", []string{"dev"}, "update_weights[2]"},
		{"ops", []string{"prod"}, ""},
	}
	for _, tt := range tests {
		code, body := h.do(http.MethodPost, "/api/v1", tt.principal, weights(tt.roles...), nil)
		if tt.acl != "" {
			wantDenied(t, code, body, tt.acl)
			continue
		}
		if code != http.StatusOK {
			t.Fatalf("%s UPDATE_WEIGHTS %v: %d %q", tt.principal, tt.roles, code, body)
		}
	}
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if h.m.weights["dev"] != 2 || h.m.weights["prod"] != 2 || len(h.m.weights) != 2 {
		t.Errorf("weights %v, want dev and prod at 2 from the two allowed calls only", h.m.weights)
	}
}

func TestAuthzSorterAndRaft(t *testing.T) {
	h := newAuthzHarness(t, `{"permissive": false,
		"update_sorter": [{"principals": {"values": ["ops"]}}],
		"manage_raft": [{"principals": {"values": ["ops"]}}, {"principals": {"type": "NONE"}}]}`)
	sorterBody := []byte(`{"sorter":"fifo"}`)
	tests := []struct {
		name, method, path, principal string
		body                          []byte
		wantCode                      int
		acl                           string
	}{
		{"sorter switch, other principal", http.MethodPost, SorterPath, "eve", sorterBody, 403, `no update_sorter ACL matches principal "eve"`},
		{"sorter switch, unauthenticated", http.MethodPost, SorterPath, "", sorterBody, 403, "unauthenticated"},
		{"sorter switch, ops", http.MethodPost, SorterPath, "ops", sorterBody, 200, ""},
		{"sorter read stays open", http.MethodGet, SorterPath, "eve", nil, 200, ""},
		{"raft change, other principal", http.MethodPost, RaftPath, "eve", []byte(`{"op":"remove-peer","id":"x"}`), 403, "manage_raft[1]"},
		{"raft change, ops passes to validation", http.MethodPost, RaftPath, "ops", []byte(`{"op":"bogus","id":"x"}`), 400, ""},
		{"snapshot restore, other principal", http.MethodPost, SnapshotPath, "eve", []byte("junk"), 403, "manage_raft[1]"},
		{"snapshot restore, ops passes to validation", http.MethodPost, SnapshotPath, "ops", []byte("junk"), 400, ""},
		{"snapshot download, other principal", http.MethodGet, SnapshotPath, "eve", nil, 403, "manage_raft[1]"},
		{"snapshot download, ops", http.MethodGet, SnapshotPath, "ops", nil, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := h.do(tt.method, tt.path, tt.principal, tt.body, nil)
			if code != tt.wantCode || !strings.Contains(body, tt.acl) {
				t.Fatalf("%d %q, want %d containing %q", code, body, tt.wantCode, tt.acl)
			}
		})
	}
	if got := h.getSorter().Sorter; got != "fifo" {
		t.Errorf("sorter %q after the allowed switch, want fifo", got)
	}
}

// View filtering: each principal sees in /state and the operator API only
// the frameworks and tasks of users it may view; nothing is refused.
func TestAuthzViewFiltering(t *testing.T) {
	h := newAuthzHarness(t, `{
		"view_frameworks": [{"principals": {"values": ["alice"]}, "users": {"values": ["alice"]}},
		                    {"principals": {"values": ["ops"]}, "users": {"type": "ANY"}},
		                    {"principals": {"type": "ANY"}, "users": {"type": "NONE"}}],
		"view_tasks": [{"principals": {"values": ["alice"]}, "users": {"values": ["alice"]}},
		               {"principals": {"values": ["ops"]}, "users": {"type": "ANY"}},
		               {"principals": {"type": "ANY"}, "users": {"type": "NONE"}}]}`)
	agentID, _ := h.agent("cpus:4;mem:4096")
	// One at a time, each declining what is left for an hour, so that
	// each cycle offers the one framework it is meant for.
	var alice, bob *fakeFramework
	for _, p := range []string{"alice", "bob"} {
		fw := h.frameworkAs(p, p)
		o := h.offer(fw)
		if err := h.call(fw, launchCall(o, refuse(3600), commandTask("t-"+fw.id, agentID, 1, 512))); err != nil {
			t.Fatal(err)
		}
		if p == "alice" {
			alice = fw
		} else {
			bob = fw
		}
	}
	tests := []struct {
		principal string
		want      []string // framework ids visible
	}{
		{"alice", []string{alice.id}},
		{"ops", []string{alice.id, bob.id}},
		{"eve", nil},
		{"", []string{alice.id, bob.id}}, // unauthenticated: no rule matches, permissive
	}
	for _, tt := range tests {
		t.Run("as "+tt.principal, func(t *testing.T) {
			_, body := h.do(http.MethodGet, "/state", tt.principal, nil, nil)
			var st struct {
				Frameworks []operator.Framework `json:"frameworks"`
			}
			if err := json.Unmarshal([]byte(body), &st); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range st.Frameworks {
				got = append(got, f.ID)
				if len(f.Tasks) != 1 || f.Tasks[0].ID != "t-"+f.ID {
					t.Errorf("/state framework %s tasks %v, want its one task", f.ID, f.Tasks)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("/state frameworks %v, want %v", got, tt.want)
			}
			h.checkOperatorViews(t, tt.principal, tt.want)
		})
	}
}

// checkOperatorViews asks GET_FRAMEWORKS, GET_TASKS and GET_STATE as
// principal and checks that exactly the frameworks (and their tasks) in
// want are in each.
func (h *authzHarness) checkOperatorViews(t *testing.T, principal string, want []string) {
	t.Helper()
	get := func(typ string) mmaster.Response {
		code, body := h.do(http.MethodPost, "/api/v1", principal, []byte(`{"type":"`+typ+`"}`), map[string]string{"Accept": "application/json"})
		var resp mmaster.Response
		if err := json.Unmarshal([]byte(body), &resp); code != 200 || err != nil {
			t.Fatalf("%s: %d %q (%v)", typ, code, body, err)
		}
		return resp
	}
	ids := func(fws []mmaster.Response_GetFrameworks_Framework) string {
		var out []string
		for _, f := range fws {
			out = append(out, f.FrameworkInfo.ID.Value)
		}
		return strings.Join(out, ",")
	}
	taskFws := func(ts []mesos.Task) string {
		var out []string
		for _, tk := range ts {
			out = append(out, tk.FrameworkID.Value)
		}
		return strings.Join(out, ",")
	}
	w := strings.Join(want, ",")
	if got := ids(get("GET_FRAMEWORKS").GetFrameworks.Frameworks); got != w {
		t.Errorf("GET_FRAMEWORKS %q, want %q", got, w)
	}
	if got := taskFws(get("GET_TASKS").GetTasks.Tasks); got != w {
		t.Errorf("GET_TASKS of frameworks %q, want %q", got, w)
	}
	st := get("GET_STATE").GetState
	if got := ids(st.GetFrameworks.Frameworks); got != w {
		t.Errorf("GET_STATE frameworks %q, want %q", got, w)
	}
	if got := taskFws(st.GetTasks.Tasks); got != w {
		t.Errorf("GET_STATE tasks of frameworks %q, want %q", got, w)
	}
}

// An operator subscriber sees, in SUBSCRIBED's state and in the events
// after it, only the frameworks and tasks it may view.
func TestAuthzOperatorSubscribe(t *testing.T) {
	h := newAuthzHarness(t, `{
		"view_frameworks": [{"principals": {"values": ["alice"]}, "users": {"values": ["alice"]}},
		                    {"principals": {"type": "ANY"}, "users": {"type": "NONE"}}],
		"view_tasks": [{"principals": {"values": ["alice"]}, "users": {"values": ["alice"]}},
		               {"principals": {"type": "ANY"}, "users": {"type": "NONE"}}]}`)
	agentID, _ := h.agent("cpus:4;mem:4096")
	early := h.frameworkAs("bob", "bob")
	if err := h.call(early, &scheduler.Call{Type: scheduler.Call_SUPPRESS}); err != nil { // offers go to the later ones
		t.Fatal(err)
	}
	code, body, s := h.openStream("/api/v1", "alice", []byte(`{"type":"SUBSCRIBE"}`))
	if s == nil {
		t.Fatalf("operator SUBSCRIBE: %d %q", code, body)
	}
	next := func(what string) *mmaster.Event {
		var ev mmaster.Event
		s.take(t, what, func(b []byte) bool {
			ev = mmaster.Event{}
			return json.Unmarshal(b, &ev) == nil && ev.Type != mmaster.Event_HEARTBEAT
		})
		return &ev
	}
	sub := next("SUBSCRIBED")
	if sub.Subscribed == nil || len(sub.Subscribed.GetState.GetFrameworks.Frameworks) != 0 {
		t.Fatalf("SUBSCRIBED %+v, want a state without bob's framework %s", sub.Subscribed, early.id)
	}
	bob := h.frameworkAs("bob", "bob")
	o := h.offer(bob)
	if err := h.call(bob, launchCall(o, refuse(3600), commandTask("bobs", agentID, 1, 512))); err != nil {
		t.Fatal(err)
	}
	alice := h.frameworkAs("alice", "alice")
	o = h.offer(alice)
	if err := h.call(alice, launchCall(o, refuse(3600), commandTask("alices", agentID, 1, 512))); err != nil {
		t.Fatal(err)
	}
	// The first events alice may see are her framework's, then her task.
	if ev := next("FRAMEWORK_ADDED"); ev.FrameworkAdded == nil || ev.FrameworkAdded.Framework.FrameworkInfo.ID.Value != alice.id {
		t.Fatalf("first visible event %s %+v, want alice's FRAMEWORK_ADDED", ev.Type, ev.FrameworkAdded)
	}
	for {
		ev := next("TASK_ADDED")
		if ev.Type == mmaster.Event_FRAMEWORK_UPDATED && ev.FrameworkUpdated.Framework.FrameworkInfo.ID.Value == alice.id {
			continue
		}
		if ev.TaskAdded == nil || ev.TaskAdded.Task.TaskID.Value != "alices" {
			t.Fatalf("event %s %+v, want only alice's TASK_ADDED", ev.Type, ev)
		}
		break
	}
}

func TestAuthzSandboxes(t *testing.T) {
	h := newAuthzHarness(t, `{"access_sandboxes": [
		{"principals": {"values": ["alice"]}, "users": {"values": ["alice"]}},
		{"principals": {"type": "ANY"}, "users": {"type": "NONE"}}]}`)
	agentID, _ := h.agent("cpus:4;mem:4096")
	alice, bob := h.frameworkAs("alice", "alice"), h.frameworkAs("bob", "bob")
	sandbox := func(fw *fakeFramework, rest string) string {
		return "/files/read?agent_id=" + agentID + "&path=/frameworks/" + fw.id + "/executors/e1/runs/latest" + rest
	}
	tests := []struct {
		name, path string
		denied     bool
	}{
		{"own sandbox", sandbox(alice, "/stdout"), false},
		{"another user's sandbox", sandbox(bob, "/stdout"), true},
		{"climbing from one's own into another's", sandbox(alice, "/../../../../../"+bob.id+"/executors/e1/runs/latest/stdout"), true},
		{"a path naming no sandbox has no user", "/files/browse?agent_id=" + agentID + "&path=/", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := h.do(http.MethodGet, tt.path, "alice", nil, nil)
			if tt.denied {
				wantDenied(t, code, body, "access_sandboxes[1]")
				return
			}
			// Allowed: the master proxies to the agent (no agent listens in
			// this test, so a 502), never a 403.
			if code == http.StatusForbidden {
				t.Fatalf("own sandbox refused: %q", body)
			}
		})
	}
}

func TestSandboxOwners(t *testing.T) {
	tests := []struct {
		path string
		want string
	}{
		{"/frameworks/F/executors/E/runs/latest/stdout", "F/E"},
		{"/var/lib/allot/slaves/S/frameworks/F/executors/E/runs/C", "F/E"},
		{"frameworks/F/executors/E", "F/E"},
		{"/frameworks/A/executors/E/runs/latest/../../../../../B/executors/X/runs/latest", "B/X"},
		{"/frameworks/A/executors/E/runs/latest/../../../../B/executors/X", ""},
		{"/frameworks/A/executors/E/runs/latest/frameworks/B/executors/X", "A/E,B/X"},
		{"/", ""},
		{"/frameworks/F/executors", ""},
	}
	for _, tt := range tests {
		var got []string
		for _, o := range sandboxOwners(tt.path) {
			got = append(got, o[0]+"/"+o[1])
		}
		if strings.Join(got, ",") != tt.want {
			t.Errorf("sandboxOwners(%q) = %v, want %s", tt.path, got, tt.want)
		}
	}
}

// Without ACLs the master says at start that it is permissive; with ACLs,
// which it enforces.
func TestAuthzStartupLog(t *testing.T) {
	tests := []struct {
		name string
		acls string
		want string
	}{
		{"no ACLs", "", "permissive"},
		{"ACLs", `{"permissive": false, "update_sorter": [{"principals": {"values": ["ops"]}}]}`, "update_sorter=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			newHarness(t, func(c *Config) {
				c.Log = zerolog.New(&buf)
				if tt.acls != "" {
					a, err := auth.ParseACLs([]byte(tt.acls))
					if err != nil {
						t.Fatal(err)
					}
					c.Authorizer = a
				}
			})
			line := ""
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.Contains(l, "authorization") {
					line = l
				}
			}
			if !strings.Contains(line, tt.want) {
				t.Fatalf("start-up authorization line %q, want it to contain %q", line, tt.want)
			}
		})
	}
}
