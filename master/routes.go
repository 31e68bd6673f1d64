package master

import (
	"fmt"
	"net/http"
	"net/http/pprof"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/sorter"
	"github.com/allot-sched/allot/ui"
)

// The master's endpoints are one table (routes): each row is a method, a
// path, the class of credential authentication demands for it (authn.go)
// and the handler. newRouter registers exactly these rows on a ServeMux as
// method patterns ("GET /state", "POST /api/v1/allot/raft"), and
// authentication classes a request by the row the mux picks for it. So the
// method a handler serves and the credential it needs come from one row:
// no handler reads r.Method again to tell a read from a write, and a
// method authentication takes for a read can never reach a handler as a
// write.
//
// A GET row serves HEAD too (ServeMux does). Any other method on a path
// of the table is answered 405 with an Allow header naming the path's
// methods, before any handler runs; that answer is classed as the path's
// POST row if it has one (a method that is not a read is taken as an
// attempt to write), else as its GET row, so a caller without the
// credential is told 401 first, as Mesos authenticates an endpoint before
// its handler checks the method.

// route is one endpoint of the master.
type route struct {
	// method is http.MethodGet (which serves HEAD too), http.MethodPost,
	// or http.MethodDelete (Mesos's DELETE /quota/<role>). Empty for the two rows that serve any method and
	// answer it themselves: the UI's pages ("/": GET and HEAD on a page,
	// 405 otherwise, the UI's 404 page on an unknown path) and the UI's
	// data paths (inner).
	method string
	// path is a ServeMux path: exact, or a subtree when it ends in "/".
	path  string
	class endpointClass
	// inner marks the UI's data paths: DataPrefix+P is served, and
	// classed, as the row the mux picks for P.
	inner   bool
	handler http.Handler
}

// pattern is the ServeMux pattern the row is registered under.
func (rt route) pattern() string {
	if rt.method == "" {
		return rt.path
	}
	return rt.method + " " + rt.path
}

// routes is every endpoint of the master, registered on mux by newRouter.
// The UI's data row serves its inner paths through mux.
func (m *Master) routes(mux *http.ServeMux) []route {
	get, post, del := http.MethodGet, http.MethodPost, http.MethodDelete
	lo := func(h http.HandlerFunc) http.Handler { return m.leaderOnly(h) }
	return append([]route{
		// Mesos's scheduler, operator and read endpoints.
		{method: post, path: "/api/v1/scheduler", class: classFramework, handler: lo(m.handleScheduler)},
		{method: post, path: "/api/v1", class: classReadWrite, handler: lo(m.handleOperator)},
		{method: get, path: "/state", class: classReadOnly, handler: lo(m.handleState)},
		{method: get, path: "/master/state", class: classReadOnly, handler: lo(m.handleState)},
		{method: get, path: "/state.json", class: classReadOnly, handler: lo(m.handleState)},
		{method: get, path: "/roles", class: classReadOnly, handler: lo(m.handleRoles)},
		{method: get, path: "/master/roles", class: classReadOnly, handler: lo(m.handleRoles)},
		{method: get, path: "/quota", class: classReadOnly, handler: lo(m.handleQuotaGet)},
		{method: post, path: "/quota", class: classReadWrite, handler: lo(m.handleQuotaSet)},
		{method: get, path: "/master/quota", class: classReadOnly, handler: lo(m.handleQuotaGet)},
		{method: post, path: "/master/quota", class: classReadWrite, handler: lo(m.handleQuotaSet)},
		{method: del, path: "/quota/", class: classReadWrite, handler: lo(m.handleQuotaRemove)},
		{method: del, path: "/master/quota/", class: classReadWrite, handler: lo(m.handleQuotaRemove)},
		{method: get, path: "/files/browse", class: classReadOnly, handler: lo(m.handleFilesProxy)},
		{method: get, path: "/files/read", class: classReadOnly, handler: lo(m.handleFilesProxy)},
		{method: get, path: "/files/download", class: classReadOnly, handler: lo(m.handleFilesProxy)},
		{method: get, path: "/metrics", class: classReadOnly, handler: promhttp.HandlerFor(m.m.reg, promhttp.HandlerOpts{})},
		// What Mesos's monitoring tools scrape (mesosmetrics.go, mesosendpoints.go);
		// every master serves its metrics, as Mesos's do.
		{method: get, path: "/metrics/snapshot", class: classReadOnly, handler: http.HandlerFunc(m.handleMetricsSnapshot)},
		{method: get, path: "/state-summary", class: classReadOnly, handler: lo(m.handleStateSummary)},
		{method: get, path: "/master/state-summary", class: classReadOnly, handler: lo(m.handleStateSummary)},
		{method: get, path: "/master/slaves", class: classReadOnly, handler: lo(m.handleSlaves)},
		{method: get, path: "/master/frameworks", class: classReadOnly, handler: lo(m.handleFrameworks)},
		{method: get, path: "/redirect", class: classOpen, handler: http.HandlerFunc(m.handleRedirect)},
		{method: get, path: "/master/redirect", class: classOpen, handler: http.HandlerFunc(m.handleRedirect)},
		{method: get, path: "/health", class: classOpen, handler: http.HandlerFunc(m.handleHealth)},
		{method: get, path: "/version", class: classOpen, handler: http.HandlerFunc(handleVersion)}, // version.go
		// allot's own.
		{method: post, path: AgentPath, class: classAgent, handler: lo(m.handleAgent)},
		{method: get, path: "/pressure", class: classReadOnly, handler: lo(m.handlePressure)},
		{method: get, path: "/master/pressure", class: classReadOnly, handler: lo(m.handlePressure)},
		{method: get, path: "/explain", class: classReadOnly, handler: lo(m.handleExplain)},
		{method: get, path: api.TimelinesPath, class: classReadOnly, handler: lo(m.handleTimelines)},
		{method: get, path: "/master" + api.TimelinesPath, class: classReadOnly, handler: lo(m.handleTimelines)},
		{method: get, path: SorterPath, class: classReadOnly, handler: lo(m.handleSorter)},
		{method: post, path: SorterPath, class: classReadWrite, handler: lo(m.handleSorterSwitch)},
		{method: get, path: SamplesPath, class: classReadOnly, handler: lo(m.handleSamples)}, // samples.go
		{method: post, path: KillPath, class: classReadWrite, handler: lo(m.handleKillTask)}, // killtask.go
		{method: get, path: PolicyPath, class: classReadOnly, handler: lo(m.handlePolicy)},
		{method: get, path: RaftPath, class: classReadOnly, handler: http.HandlerFunc(m.handleListPeers)},
		{method: post, path: RaftPath, class: classReadWrite, handler: lo(m.handleRaftChange)},
		{method: get, path: SnapshotPath, class: classReadOnly, handler: http.HandlerFunc(m.handleSnapshot)},
		{method: post, path: SnapshotPath, class: classReadWrite, handler: lo(m.handleRestore)},
		// Profiles cost CPU and heap dumps show memory: not for any reader.
		{method: get, path: "/debug/pprof/", class: classReadWrite, handler: http.HandlerFunc(servePprof)},
		// The web UI (ui.go).
		{path: "/", class: classReadOnly, handler: uiPages()},
		{path: ui.DataPrefix + "/", inner: true, handler: m.uiData(mux)},
	}, m.maintenanceRoutes()...) // maintenance_http.go
}

// servePprof serves the runtime's profiles and, at /debug/pprof/profile, a
// CPU profile. One row: a path under a subtree row cannot have its own 405
// answer (ServeMux would find the two patterns in conflict).
func servePprof(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/debug/pprof/profile" {
		pprof.Profile(w, r)
		return
	}
	pprof.Index(w, r)
}

// router is the master's mux with the table it was built from.
type router struct {
	mux *http.ServeMux
	// rows are the table's rows and the 405 answers newRouter added, by
	// the pattern each is registered under.
	rows map[string]route
}

// newRouter registers rs on mux, and for each path with method rows a
// method-less pattern that answers 405 (see above). This is the only place
// the master's mux is given routes.
func newRouter(mux *http.ServeMux, rs []route) *router {
	rt := &router{mux: mux, rows: map[string]route{}}
	methods := map[string][]string{}
	var paths []string
	for _, r := range rs {
		if r.method != "" {
			if methods[r.path] == nil {
				paths = append(paths, r.path)
			}
			methods[r.path] = append(methods[r.path], r.method)
		}
		mux.Handle(r.pattern(), r.handler)
		rt.rows[r.pattern()] = r
	}
	for _, p := range paths {
		fb := route{path: p, class: fallbackClass(rs, p), handler: methodNotAllowed(methods[p])}
		mux.Handle(fb.pattern(), fb.handler)
		rt.rows[fb.pattern()] = fb
	}
	return rt
}

// fallbackClass is the class of the 405 answer on path p: that of its POST
// (or DELETE) row if it has one, else that of its GET row.
func fallbackClass(rs []route, p string) endpointClass {
	class, found := classReadOnly, false
	for _, r := range rs {
		switch {
		case r.path != p:
		case r.method == http.MethodPost || r.method == http.MethodDelete:
			return r.class
		case r.method == http.MethodGet && !found:
			class, found = r.class, true
		}
	}
	return class
}

// methodNotAllowed answers a method the path does not serve, as
// api.ReadRequest words it for Mesos's POST-only endpoints.
func methodNotAllowed(methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	if methods[0] == http.MethodGet {
		allow = strings.Replace(allow, http.MethodGet, "GET, HEAD", 1)
	}
	want := strings.Join(methods, " or ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		api.WriteError(w, api.Errorf(http.StatusMethodNotAllowed, "%s: expecting a %s request, got %s", r.URL.Path, want, r.Method))
	})
}

// match is the row the mux serves r with; false where it answers 404 or
// redirects to a path of no row.
func (rt *router) match(r *http.Request) (route, bool) {
	_, pattern := rt.mux.Handler(r)
	row, ok := rt.rows[pattern]
	return row, ok
}

// classify is the class of the row the mux serves r with; a UI data path
// is classed as the row it serves. What no row serves (the mux's 404s and
// redirects) is read-only: nothing is served there but an error.
func (rt *router) classify(r *http.Request) endpointClass {
	row, ok := rt.match(r)
	if ok && row.inner {
		inner, found := uiDataRequest(r)
		if !found {
			return classReadOnly
		}
		row, ok = rt.match(inner)
		ok = ok && !row.inner // the prefix twice: answered 404
	}
	if !ok {
		return classReadOnly
	}
	return row.class
}

// uiPages serves the web UI's pages and assets: GET and HEAD on a page, 405
// for any other method there, and the UI's 404 page for a path nothing
// else serves.
func uiPages() http.Handler {
	pages := ui.Handler(Version, sorter.Names())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ui.IsPage(r.URL.Path) && r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			api.WriteError(w, api.Errorf(http.StatusMethodNotAllowed, "%s: expecting a GET request, got %s", r.URL.Path, r.Method))
			return
		}
		pages.ServeHTTP(w, r)
	})
}

// String names the row for test failures.
func (rt route) String() string {
	return fmt.Sprintf("%s (%s)", rt.pattern(), rt.class)
}
