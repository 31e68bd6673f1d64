package master

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/ui"
)

// testRouter is the route table of a master built for a test (m needs
// its metrics); its handlers are not run by the tests that use it.
func testRouter(m *Master) *router {
	mux := http.NewServeMux()
	return newRouter(mux, m.routes(mux))
}

func TestClassify(t *testing.T) {
	m := &Master{log: zerolog.Nop()}
	m.m = newMetrics(m)
	rt := testRouter(m)
	tests := []struct {
		method, path string
		want         endpointClass
	}{
		{"GET", "/health", classOpen},
		{"GET", "/version", classOpen},
		{"GET", "/redirect", classOpen},
		{"GET", "/master/redirect", classOpen},
		{"POST", "/health", classOpen}, // answered 405
		{"POST", "/api/v1/scheduler", classFramework},
		{"GET", "/api/v1/scheduler", classFramework}, // answered 405, after authentication as Mesos does
		{"POST", AgentPath, classAgent},
		{"POST", "/api/v1", classReadWrite},
		{"POST", ui.DataPrefix + "/api/v1", classReadWrite},
		{"POST", SorterPath, classReadWrite},
		{"GET", SorterPath, classReadOnly},
		{"PUT", SorterPath, classReadWrite},
		{"POST", KillPath, classReadWrite},
		{"GET", KillPath, classReadWrite},   // answered 405, classed as the path's POST row
		{"POST", PolicyPath, classReadOnly}, // a read-only endpoint: answered 405
		{"GET", PolicyPath, classReadOnly},
		{"POST", RaftPath, classReadWrite},
		{"GET", RaftPath, classReadOnly},
		{"HEAD", RaftPath, classReadOnly}, // served as GET: the peer list
		{"OPTIONS", RaftPath, classReadWrite},
		{"DELETE", RaftPath, classReadWrite},
		{"POST", SnapshotPath, classReadWrite},
		{"GET", SnapshotPath, classReadOnly},
		{"OPTIONS", SnapshotPath, classReadWrite},
		{"OPTIONS", ui.DataPrefix + SnapshotPath, classReadWrite},
		{"GET", "/debug/pprof/heap", classReadWrite},
		{"GET", "/debug/pprof/", classReadWrite},
		{"GET", "/state", classReadOnly},
		{"GET", "/state.json", classReadOnly},
		{"GET", "/master/state", classReadOnly},
		{"GET", "/explain", classReadOnly},
		{"GET", api.TimelinesPath, classReadOnly},
		{"GET", "/files/read", classReadOnly},
		{"GET", "/metrics", classReadOnly},
		{"GET", "/", classReadOnly},
		{"GET", "/ui/static/app.js", classReadOnly},
		{"GET", ui.DataPrefix + "/state", classReadOnly},
		{"GET", ui.DataPrefix + ui.DataPrefix + "/api/v1", classReadOnly}, // answered 404
		{"GET", "/nowhere", classReadOnly},
		// Unclean paths are classed as the mux will route them.
		{"POST", "/api/v1/./scheduler", classFramework},
		{"POST", "//api/v1", classReadWrite},
		{"GET", "/health/../state", classReadOnly},
		{"OPTIONS", "/api/v1/allot/x/../raft", classReadWrite},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, "http://master"+tt.path, nil)
		r.URL.Path = tt.path // as sent, uncleaned
		if got := rt.classify(r); got != tt.want {
			t.Errorf("classify(%s %s) = %s, want %s", tt.method, tt.path, got, tt.want)
		}
	}
}

func testCredentials(t *testing.T) *auth.Credentials {
	t.Helper()
	c, err := auth.NewCredentials([]auth.Credential{{Principal: "alice", Secret: "s3cret"}, {Principal: "agent", Secret: "a-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAuthenticate(t *testing.T) {
	creds := testCredentials(t)
	all := Authn{Credentials: creds, Frameworks: true, Agents: true, HTTPReadWrite: true, HTTPReadOnly: true}
	tests := []struct {
		name          string
		authn         Authn
		method, path  string
		user, pass    string
		wantCode      int
		wantPrincipal string // "-": none stored
	}{
		{"open stays open", all, "GET", "/health", "", "", 200, "-"},
		{"scheduler without", all, "POST", "/api/v1/scheduler", "", "", 401, ""},
		{"scheduler wrong", all, "POST", "/api/v1/scheduler", "alice", "nope", 401, ""},
		{"scheduler right", all, "POST", "/api/v1/scheduler", "alice", "s3cret", 200, "alice"},
		{"agent without", all, "POST", AgentPath, "", "", 401, ""},
		{"agent right", all, "POST", AgentPath, "agent", "a-secret", 200, "agent"},
		{"readonly without", all, "GET", "/state", "", "", 401, ""},
		{"ui page without", all, "GET", "/", "", "", 401, ""},
		{"readwrite without", all, "POST", "/api/v1", "", "", 401, ""},
		{"flag off passes", Authn{Credentials: creds, Frameworks: true}, "GET", "/state", "", "", 200, "-"},
		{"flag off still records a valid principal", Authn{Credentials: creds}, "POST", "/api/v1/scheduler", "alice", "s3cret", 200, "alice"},
		{"flag off ignores a wrong secret", Authn{Credentials: creds}, "POST", "/api/v1/scheduler", "alice", "nope", 200, "-"},
		{"no credentials: nothing", Authn{}, "POST", "/api/v1/scheduler", "alice", "s3cret", 200, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Master{log: zerolog.Nop(), cfg: Config{Authn: tt.authn}}
			m.m = newMetrics(m)
			got := "-"
			h := m.authenticate(testRouter(m).classify, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if p, ok := auth.PrincipalFrom(r.Context()); ok {
					got = p
				}
			}))
			r := httptest.NewRequest(tt.method, tt.path, strings.NewReader("{}"))
			if tt.user != "" {
				r.SetBasicAuth(tt.user, tt.pass)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.wantCode {
				t.Fatalf("code %d, want %d (%s)", w.Code, tt.wantCode, w.Body)
			}
			if w.Code == 401 {
				if ch := w.Header().Get("WWW-Authenticate"); ch != `Basic realm="allot"` {
					t.Errorf("WWW-Authenticate = %q", ch)
				}
				if !strings.Contains(w.Body.String(), "--authenticate-") {
					t.Errorf("401 body does not name the flag: %q", w.Body)
				}
				return
			}
			if got != tt.wantPrincipal {
				t.Errorf("principal %q, want %q", got, tt.wantPrincipal)
			}
		})
	}
}

func TestAuthnNeedsCredentials(t *testing.T) {
	_, err := New(Config{WorkDir: t.TempDir(), Log: zerolog.Nop(), Authn: Authn{Frameworks: true}})
	if err == nil || !strings.Contains(err.Error(), "--credentials") {
		t.Fatalf("err = %v, want one naming --credentials", err)
	}
}

// The principal a framework authenticated with must be the one in its
// FrameworkInfo, and a framework registered by one principal cannot be
// driven or re-subscribed by another.
func TestFrameworkPrincipal(t *testing.T) {
	h := newHarness(t, nil)
	s := newFakeStream(t, api.JSON)
	ft := 60.0
	bob := "bob"
	id, _, err := h.m.admitFramework("", mesos.FrameworkInfo{User: "u", Name: "b", FailoverTimeout: &ft, Principal: &bob}, nil, s.Stream)
	if err != nil {
		t.Fatal(err)
	}
	as := func(p string) *http.Request {
		r := httptest.NewRequest("POST", "/api/v1/scheduler", nil)
		if p != "" {
			r = r.WithContext(auth.WithPrincipal(r.Context(), p))
		}
		return r
	}
	str := func(s string) *string { return &s }
	subs := []struct {
		name, as, id string
		principal    *string
		wantErr      string
		wantSet      string
	}{
		{"unauthenticated", "", "", str("anyone"), "", "anyone"},
		{"unset is filled in", "alice", "", nil, "", "alice"},
		{"same", "alice", "", str("alice"), "", "alice"},
		{"differs", "alice", "", str("bob"), `framework_info.principal "bob" does not match the authenticated principal "alice"`, ""},
		{"take over bob's framework", "alice", id, str("alice"), `registered by principal "bob"`, ""},
		{"bob re-subscribes", "bob", id, str("bob"), "", "bob"},
	}
	for _, tt := range subs {
		t.Run("subscribe "+tt.name, func(t *testing.T) {
			info := mesos.FrameworkInfo{User: "u", Principal: tt.principal}
			err := h.m.subscribePrincipal(as(tt.as), tt.id, &info)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || info.GetPrincipal() != tt.wantSet {
				t.Fatalf("err %v, principal %q; want nil, %q", err, info.GetPrincipal(), tt.wantSet)
			}
		})
	}
	calls := []struct {
		as   string
		fail bool
	}{{"", false}, {"bob", false}, {"alice", true}}
	for _, tt := range calls {
		err := h.m.callPrincipal(as(tt.as), &scheduler.Call{FrameworkID: &mesos.FrameworkID{Value: id}, Type: scheduler.Call_REVIVE})
		if (err != nil) != tt.fail {
			t.Errorf("call as %q: err = %v, want failure %v", tt.as, err, tt.fail)
		}
	}
}

// A follower forwards the caller's Authorization header, so the leader
// authenticates the forwarded call itself (and sees the caller's
// principal, not the follower's).
func TestForwardKeepsAuthorization(t *testing.T) {
	creds := testCredentials(t)
	leaderM := &Master{log: zerolog.Nop(), cfg: Config{Authn: Authn{Credentials: creds, Frameworks: true}}}
	leaderM.m = newMetrics(leaderM)
	leader := httptest.NewServer(leaderM.authenticate(testRouter(leaderM).classify, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.PrincipalFrom(r.Context())
		io.WriteString(w, "leader saw "+p)
	})))
	defer leader.Close()
	f := &Master{log: zerolog.Nop(), self: Peer{HTTP: "follower:1"}, cfg: Config{Authn: Authn{Credentials: creds, Frameworks: true}}}
	f.m = newMetrics(f)
	front := httptest.NewServer(f.authenticate(testRouter(f).classify, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.forward(w, r, leader.Listener.Addr().String())
	})))
	defer front.Close()
	for _, tt := range []struct {
		user, pass string
		code       int
		body       string
	}{{"alice", "s3cret", 200, "leader saw alice"}, {"", "", 401, "no Authorization header"}} {
		req, _ := http.NewRequest("POST", front.URL+"/api/v1/scheduler", bytes.NewReader([]byte("{}")))
		if tt.user != "" {
			req.SetBasicAuth(tt.user, tt.pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code || !strings.Contains(string(b), tt.body) {
			t.Errorf("as %q: %d %q, want %d %q", tt.user, resp.StatusCode, b, tt.code, tt.body)
		}
	}
}

// On a running master: 401 comes at once (before the body is read or a
// stream opened), /health stays open, and the right credential gets in.
func TestAuthnOverHTTP(t *testing.T) {
	m := startMasterWith(t, Config{Listen: "127.0.0.1:0", WorkDir: t.TempDir(), AllocationInterval: 50 * time.Millisecond, Log: zerolog.Nop(),
		Authn: Authn{Credentials: testCredentials(t), Frameworks: true, HTTPReadOnly: true}})
	cli := &http.Client{Timeout: 5 * time.Second}
	tests := []struct {
		method, path, user, pass string
		want                     int
	}{
		{"GET", "/health", "", "", 200},
		{"GET", "/state", "", "", 401},
		{"GET", "/state", "alice", "s3cret", 200},
		{"GET", "/metrics", "alice", "wrong", 401},
		{"POST", "/api/v1/scheduler", "", "", 401},
		{"POST", "/api/v1/scheduler", "alice", "s3cret", 400}, // authenticated; the empty call is then refused
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, "http://"+m.Addr()+tt.path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if tt.user != "" {
			req.SetBasicAuth(tt.user, tt.pass)
		}
		resp, err := cli.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s as %q: %d, want %d", tt.method, tt.path, tt.user, resp.StatusCode, tt.want)
		}
	}
	if n := metric(t, m, "allot_master_authentication_failures_total"); n != 3 {
		t.Errorf("authentication failures = %v, want 3", n)
	}
}

func metric(t *testing.T, m *Master, name string) float64 {
	t.Helper()
	fams, err := m.m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() == name {
			for _, mt := range f.GetMetric() {
				sum += mt.GetCounter().GetValue()
			}
		}
	}
	return sum
}
