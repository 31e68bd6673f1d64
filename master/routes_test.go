package master

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/ui"
)

// startAuthnMaster runs a master on a loopback port with authn, stopped at
// cleanup.
func startAuthnMaster(t *testing.T, authn Authn) *Master {
	t.Helper()
	return startMasterWith(t, Config{Listen: "127.0.0.1:0", WorkDir: t.TempDir(), AllocationInterval: 50 * time.Millisecond, Log: zerolog.Nop(), Authn: authn})
}

// do sends method path with body as user ("" sends no credential) and
// returns the status and body.
func do(t *testing.T, addr, method, path string, body []byte, user, pass string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// With read-write authentication on and read-only off, a membership change
// or a snapshot restore sent with any method but POST, and no credential,
// must change nothing: the method decides the class, so a method that
// authentication lets through as a read cannot reach a handler as a write.
func TestWritesNeedTheWriteCredentialWhateverTheMethod(t *testing.T) {
	m := startAuthnMaster(t, Authn{Credentials: testCredentials(t), HTTPReadWrite: true})
	addr := m.Addr()
	code, snap := do(t, addr, http.MethodGet, SnapshotPath, nil, "", "")
	if code != http.StatusOK || len(snap) == 0 {
		t.Fatalf("GET %s without a credential (read-only authentication off): %d, %d bytes", SnapshotPath, code, len(snap))
	}
	// Move the registry on from that snapshot, so that a restore shows.
	weights := []byte(`{"type":"UPDATE_WEIGHTS","update_weights":{"weight_infos":[{"role":"r","weight":2}]}}`)
	if code, b := do(t, addr, http.MethodPost, "/api/v1", weights, "alice", "s3cret"); code != http.StatusOK {
		t.Fatalf("UPDATE_WEIGHTS as alice: %d %q", code, b)
	}
	_, now := do(t, addr, http.MethodGet, SnapshotPath, nil, "", "")
	_, peers := do(t, addr, http.MethodGet, RaftPath, nil, "", "")
	var list []RaftPeer
	if err := json.Unmarshal(peers, &list); err != nil || len(list) != 1 || bytes.Equal(now, snap) {
		t.Fatalf("peers %q (%v), registry moved on %v: want one peer and a registry that moved", peers, err, !bytes.Equal(now, snap))
	}
	// The lone master asked to remove itself: if that ran, it has no peers.
	removeSelf := []byte(`{"op":"remove-peer","id":"` + list[0].ID + `"}`)
	for _, method := range []string{http.MethodPost, http.MethodOptions, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		for _, c := range []struct {
			path string
			body []byte
		}{{RaftPath, removeSelf}, {SnapshotPath, snap}} {
			code, b := do(t, addr, method, c.path, c.body, "", "")
			served := method == http.MethodHead && code == http.StatusOK // HEAD is GET: the peer list, the snapshot
			if code != http.StatusUnauthorized && code != http.StatusMethodNotAllowed && !served {
				t.Errorf("%s %s without a credential: %d %q, want 401 or 405", method, c.path, code, b)
			}
		}
	}
	if _, b := do(t, addr, http.MethodGet, RaftPath, nil, "", ""); !bytes.Equal(b, peers) {
		t.Errorf("GET %s: %q, was %q: a membership change ran without a credential", RaftPath, b, peers)
	}
	if _, b := do(t, addr, http.MethodGet, SnapshotPath, nil, "", ""); !bytes.Equal(b, now) {
		t.Errorf("the registry changed (%d bytes, was %d; the old snapshot has %d): a restore ran without a credential", len(b), len(now), len(snap))
	}
}

// The route table is the whole mux: no code of the package registers a
// route but newRouter, which registers the table's rows. So a new endpoint
// is a new row, and TestEveryRouteEveryMethod tries it.
func TestRouteTableIsTheMux(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || name == "routes.go" && fn.Name.Name == "newRouter" {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if sel, ok := c.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Handle" || sel.Sel.Name == "HandleFunc") {
						t.Errorf("%s: %s registers a route outside the route table (add a row to Master.routes)", fset.Position(c.Pos()), fn.Name.Name)
					}
				}
				return true
			})
		}
	}
	// The rows themselves: a method for every row but the UI's two, and
	// no POST row a caller could reach with a read-only credential.
	m := &Master{log: zerolog.Nop()}
	m.m = newMetrics(m)
	for _, r := range m.routes(http.NewServeMux()) {
		switch {
		case r.handler == nil:
			t.Errorf("%s has no handler", r)
		case r.method == "" && r.path != "/" && !r.inner:
			t.Errorf("%s serves every method: route it by method", r)
		case r.method != "" && r.method != http.MethodGet && r.method != http.MethodPost && r.method != http.MethodDelete:
			t.Errorf("%s: the master serves GET (and HEAD), POST and DELETE only", r)
		case r.method != "" && r.method != http.MethodGet && (r.class == classOpen || r.class == classReadOnly):
			t.Errorf("%s changes state but is classed %s", r, r.class)
		}
	}
}

// served records which row of the table served a request, and as whom.
type served struct {
	mu   sync.Mutex
	last string // the row's pattern and the principal, "" if none ran
}

func (s *served) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.last
	s.last = ""
	return v
}

// stubRoutes is m's route table with every handler replaced by one that
// records it ran (the UI's pages run as well; they only read), so that
// the routing and authentication are tried without the handlers' effects.
func stubRoutes(m *Master, mux *http.ServeMux, s *served) []route {
	rows := m.routes(mux)
	for i, r := range rows {
		if r.inner {
			continue // serves the rows it names, through mux
		}
		real, pattern := r.handler, r.pattern()
		rows[i].handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			p, _ := auth.PrincipalFrom(req.Context())
			s.mu.Lock()
			s.last = pattern + " as " + p
			s.mu.Unlock()
			if r.path == "/" {
				real.ServeHTTP(w, req)
				return
			}
			w.WriteHeader(http.StatusOK)
		})
	}
	return rows
}

// A probe is one path of the table with the rows that serve it.
type probe struct {
	path string
	rows []route // the rows of one ServeMux path: one per method
}

// probes lists a path for each path of rows (two for subtrees), and each
// again under the UI's data prefix, where it is served as the same rows.
func probes(rows []route) []probe {
	var out []probe
	var order []string
	byPath := map[string][]route{}
	for _, r := range rows {
		if r.inner {
			continue
		}
		if byPath[r.path] == nil {
			order = append(order, r.path)
		}
		byPath[r.path] = append(byPath[r.path], r)
	}
	for _, p := range order {
		paths := []string{p}
		switch {
		case p == "/":
			paths = []string{"/", "/agents", "/ui/static/app.js", "/nowhere"}
		case strings.HasSuffix(p, "/"):
			paths = append(paths, p+"heap")
		}
		for _, path := range paths {
			out = append(out, probe{path, byPath[p]}, probe{ui.DataPrefix + path, byPath[p]})
		}
	}
	return out
}

// Every route of the master, with every method, with no credential, a
// wrong one and a right one, under every combination of the
// authentication flags: a handler runs only for the method its row names,
// and only with the credential its row's class requires; a method no row
// of the path serves is answered 405 with Allow naming those that are
// (or 401 first, where the path requires a credential the caller lacks).
func TestEveryRouteEveryMethod(t *testing.T) {
	h := newHarness(t, nil)
	creds := testCredentials(t)
	methods := []string{http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch}
	type caller struct{ user, pass, principal string }
	callers := []caller{{"", "", ""}, {"alice", "wrong", ""}, {"alice", "s3cret", "alice"}}
	cli := &http.Client{Timeout: 10 * time.Second}
	for flags := 0; flags < 16; flags++ {
		a := Authn{Credentials: creds, HTTPReadWrite: flags&1 != 0, HTTPReadOnly: flags&2 != 0, Frameworks: flags&4 != 0, Agents: flags&8 != 0}
		name := fmt.Sprintf("readwrite=%v,readonly=%v,frameworks=%v,agents=%v", a.HTTPReadWrite, a.HTTPReadOnly, a.Frameworks, a.Agents)
		t.Run(name, func(t *testing.T) {
			h.m.cfg.Authn = a
			var s served
			mux := http.NewServeMux()
			rows := stubRoutes(h.m, mux, &s)
			srv := httptest.NewServer(h.m.serve(newRouter(mux, rows)))
			defer srv.Close()
			for _, pr := range probes(rows) {
				for _, method := range methods {
					for _, c := range callers {
						req, _ := http.NewRequest(method, srv.URL+pr.path, strings.NewReader("{}"))
						if c.user != "" {
							req.SetBasicAuth(c.user, c.pass)
						}
						resp, err := cli.Do(req)
						if err != nil {
							t.Fatalf("%s %s: %v", method, pr.path, err)
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						checkServed(t, a, pr, method, c.user, c.principal, resp, s.take())
					}
				}
			}
		})
	}
}

// checkServed judges one answer of TestEveryRouteEveryMethod: ran is what
// the stubs recorded ("" if no row ran).
func checkServed(t *testing.T, a Authn, pr probe, method, user, principal string, resp *http.Response, ran string) {
	t.Helper()
	who := "without a credential"
	if user != "" {
		who = "as " + user + map[bool]string{true: "", false: " (wrong secret)"}[principal != ""]
	}
	var row *route
	var allow []string
	needs := false // some row of the path requires a credential
	for i, r := range pr.rows {
		needs = needs || a.requires(r.class)
		if r.method == http.MethodGet {
			allow = append(allow, http.MethodGet, http.MethodHead)
		} else {
			allow = append(allow, r.method)
		}
		if r.method == "" || r.method == method || r.method == http.MethodGet && method == http.MethodHead {
			row = &pr.rows[i]
		}
	}
	code := resp.StatusCode
	switch {
	case row == nil && ran != "":
		t.Errorf("%s %s %s: %q ran, but the path serves only %v", method, pr.path, who, ran, allow)
	case row == nil && code == http.StatusUnauthorized && needs && principal == "":
	case row == nil && code != http.StatusMethodNotAllowed:
		t.Errorf("%s %s %s: %d, want 405 (the path serves %v)", method, pr.path, who, code, allow)
	case row == nil && resp.Header.Get("Allow") != strings.Join(allow, ", "):
		t.Errorf("%s %s %s: Allow %q, want %q", method, pr.path, who, resp.Header.Get("Allow"), strings.Join(allow, ", "))
	case row == nil:
	case a.requires(row.class) && principal == "":
		if ran != "" || code != http.StatusUnauthorized {
			t.Errorf("%s %s %s: %d, %q ran; want 401 and nothing run (%s requires %s)", method, pr.path, who, code, ran, row, row.class.flag())
		}
	default:
		if row.class == classOpen {
			principal = "" // open routes authenticate no one
		}
		if ran != row.pattern()+" as "+principal {
			t.Errorf("%s %s %s: %d, ran %q; want %q as %q", method, pr.path, who, code, ran, row.pattern(), principal)
		}
	}
}
