package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/auth"
)

// newAuthAgent builds (does not start) an agent over a work dir holding
// one finished run of executor e of framework f, with pprof on and the
// given authentication.
func newAuthAgent(t *testing.T, h HTTPAuthn, authz auth.Authorizer) *Agent {
	t.Helper()
	work := t.TempDir()
	run := filepath.Join(work, "slaves", "S1", "frameworks", "f", "executors", "e", "runs", "c1")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "stdout"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Masters: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:0", WorkDir: work,
		Resources: "cpus:1;mem:128;disk:100", HTTPAuthn: h, Authorizer: authz, Pprof: true, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func testCredentials(t *testing.T) *auth.Credentials {
	t.Helper()
	c, err := auth.NewCredentials([]auth.Credential{{Principal: "alice", Secret: "a-secret"}, {Principal: "bob", Secret: "b-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// routeQuery is a query each route answers quickly and without error when
// the caller is let through (the point is the authentication, not the
// handler).
var routeQuery = map[string]string{
	"/files/sandbox":  "framework_id=f&executor_id=e&file=stdout",
	"/files/browse":   "path=/frameworks/f/executors/e/runs/latest",
	"/files/read":     "path=/frameworks/f/executors/e/runs/latest/stdout&offset=0",
	"/files/download": "path=/frameworks/f/executors/e/runs/latest/stdout",
}

// Every route the agent's mux serves, with every method, without a
// credential, with a wrong one and with a right one, under each
// combination of the read-only and read-write flags: a protected route
// answers 401 unless the credential is right; an open one never does; a
// read answers 405 to a method other than GET and HEAD. The routes come
// from the table the mux is built from, so a new route is tested here
// without being named.
func TestAgentRoutesAuthentication(t *testing.T) {
	creds := testCredentials(t)
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions}
	for _, ro := range []bool{false, true} {
		for _, rw := range []bool{false, true} {
			h := HTTPAuthn{Credentials: creds, ReadOnly: ro, ReadWrite: rw}
			a := newAuthAgent(t, h, nil)
			handler := a.httpHandler()
			routes := a.routes()
			if len(routes) < 10 {
				t.Fatalf("only %d routes: the table lost some", len(routes))
			}
			for _, rt := range routes {
				for _, m := range methods {
					for _, cred := range []string{"none", "wrong", "right"} {
						name := fmt.Sprintf("ro=%v/rw=%v/%s/%s/%s", ro, rw, rt.pattern, m, cred)
						code := serveRoute(handler, rt.pattern, m, cred)
						protected := h.requires(rt.class)
						switch {
						case protected && cred != "right" && code != http.StatusUnauthorized:
							t.Errorf("%s: answered %d, want 401 (%s is %s)", name, code, rt.pattern, rt.class)
						case (!protected || cred == "right") && code == http.StatusUnauthorized:
							t.Errorf("%s: answered 401 to a caller the flags let through", name)
						case rt.class == routeReadOnly && code != http.StatusUnauthorized && m != http.MethodGet && m != http.MethodHead && code != http.StatusMethodNotAllowed:
							t.Errorf("%s: a read answered %d to %s, want 405", name, code, m)
						case rt.class == routeReadOnly && code != http.StatusUnauthorized && m == http.MethodGet && code != http.StatusOK:
							t.Errorf("%s: answered %d to a caller let through, want 200", name, code)
						}
					}
				}
			}
		}
	}
}

// serveRoute sends one request to pattern through handler and returns the
// status. Profiles are asked with a cancelled context, so a CPU profile or
// trace let through ends at once.
func serveRoute(handler http.Handler, pattern, method, cred string) int {
	target := pattern + "?" + routeQuery[pattern]
	ctx := context.Background()
	if strings.HasPrefix(pattern, "/debug/pprof") {
		c, cancel := context.WithCancel(ctx)
		cancel()
		ctx = c
	}
	req := httptest.NewRequest(method, target, nil).WithContext(ctx)
	switch cred {
	case "wrong":
		req.SetBasicAuth("alice", "not-her-secret")
	case "right":
		req.SetBasicAuth("alice", "a-secret")
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	return rec.Code
}

// The profiler is not served at all unless --pprof asks for it.
func TestAgentPprofOffByDefault(t *testing.T) {
	a, err := New(Config{Masters: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:0", WorkDir: t.TempDir(),
		Resources: "cpus:1;mem:128;disk:100", Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=2", "/debug/pprof/profile"} {
		rec := httptest.NewRecorder()
		a.httpHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s without --pprof answered %d, want 404", p, rec.Code)
		}
	}
}

// A flag that requires a credential without --http-credentials to check it
// against is refused at start.
func TestAgentHTTPAuthnNeedsCredentials(t *testing.T) {
	for _, h := range []HTTPAuthn{{ReadOnly: true}, {ReadWrite: true}} {
		_, err := New(Config{Masters: []string{"127.0.0.1:1"}, WorkDir: t.TempDir(), HTTPAuthn: h, Log: zerolog.Nop()})
		if err == nil || !strings.Contains(err.Error(), "--http-credentials") {
			t.Errorf("%+v: New = %v, want an error naming --http-credentials", h, err)
		}
	}
}

// access_sandboxes on the agent: alice may read the sandboxes of executors
// that ran as alice, bob nobody's, an unauthenticated caller nobody's; the
// executor's user is the one recorded at launch, the executor being gone.
func TestAgentSandboxACL(t *testing.T) {
	acls, err := auth.ParseACLs([]byte(`{"permissive": false, "access_sandboxes": [
		{"principals": {"values": ["alice"]}, "users": {"values": ["alice"]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a := newAuthAgent(t, HTTPAuthn{Credentials: testCredentials(t)}, acls)
	dir := filepath.Join(a.cfg.WorkDir, sandboxOwnersDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c1"), []byte("alice"), 0o600); err != nil {
		t.Fatal(err)
	}
	handler := a.httpHandler()
	for _, tc := range []struct{ cred, endpoint string }{
		{"right", "/files/read"}, {"right", "/files/browse"}, {"right", "/files/download"}, {"right", "/files/sandbox"},
		{"none", "/files/read"}, {"none", "/files/sandbox"}, {"bob", "/files/read"}, {"bob", "/files/sandbox"},
	} {
		req := httptest.NewRequest(http.MethodGet, tc.endpoint+"?"+routeQuery[tc.endpoint], nil)
		switch tc.cred {
		case "right":
			req.SetBasicAuth("alice", "a-secret")
		case "bob":
			req.SetBasicAuth("bob", "b-secret")
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		want := http.StatusForbidden
		if tc.cred == "right" {
			want = http.StatusOK
		}
		if rec.Code != want || (want == http.StatusForbidden && !strings.Contains(rec.Body.String(), "access_sandboxes")) {
			t.Errorf("%s as %s: %d %q, want %d", tc.endpoint, tc.cred, rec.Code, rec.Body.String(), want)
		}
	}
}

// Ids are ids: a pattern in place of a framework or executor id is a 400,
// not the newest sandbox of anyone.
func TestAgentSandboxRefusesPatterns(t *testing.T) {
	a := newAuthAgent(t, HTTPAuthn{}, nil)
	handler := a.httpHandler()
	for _, q := range []struct{ endpoint, query string }{
		{"/files/sandbox", "framework_id=*&executor_id=*&file=stdout"},
		{"/files/sandbox", "framework_id=f&executor_id=?&file=stdout"},
		{"/files/read", "path=" + url.QueryEscape("/frameworks/*/executors/*/runs/latest/stdout") + "&offset=0"},
		{"/files/read", "path=" + url.QueryEscape("/frameworks/f/executors/e/runs/*/stdout") + "&offset=0"},
		{"/files/browse", "path=" + url.QueryEscape("/frameworks/f/executors/[e]/runs/latest")},
	} {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, q.endpoint+"?"+q.query, nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != http.StatusBadRequest || !strings.Contains(string(body), "not accepted") {
			t.Errorf("%s?%s: %d %q, want 400 saying patterns are not accepted", q.endpoint, q.query, rec.Code, body)
		}
	}
}
