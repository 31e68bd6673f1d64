package agent

import (
	"errors"
	"net/http"
	"net/http/pprof"

	"github.com/allot-sched/allot/auth"
)

// The agent's own HTTP endpoints are authenticated as Mesos's agent
// authenticates them: --authenticate-http-readonly puts /state,
// /monitor/* and the sandbox files (/files/*) behind an HTTP Basic
// credential from --http-credentials (Mesos's realm
// mesos-agent-readonly), --authenticate-http-readwrite does the same for
// what changes the agent or costs it (Mesos's mesos-agent-readwrite:
// here the Go profiler, served only with --pprof). /health stays open, and
// the executor API keeps its own per-executor tokens
// (--authenticate-http-executors, authn.go).
//
// Each route is registered with its class in one table (routes), and the
// mux is built from that table alone, so a route cannot be added without
// saying who may call it.

// HTTPAuthn is the authentication of the agent's HTTP endpoints. The zero
// value authenticates nothing (the endpoints are open, as Mesos's are
// without the flags).
type HTTPAuthn struct {
	// Credentials checks principals and secrets (--http-credentials);
	// required when either flag is on.
	Credentials auth.Verifier
	// ReadOnly: /state, /monitor/* and /files/* require a credential
	// (--authenticate-http-readonly).
	ReadOnly bool
	// ReadWrite: the endpoints that change or load the agent (/debug/pprof
	// with --pprof) require one (--authenticate-http-readwrite).
	ReadWrite bool
}

func (h HTTPAuthn) validate() error {
	if (h.ReadOnly || h.ReadWrite) && h.Credentials == nil {
		return errors.New("agent: --authenticate-http-readonly and --authenticate-http-readwrite need --http-credentials FILE")
	}
	return nil
}

// routeClass is what an agent endpoint serves, as far as authentication
// is concerned.
type routeClass int

const (
	routeOpen      routeClass = iota // /health: never authenticated
	routeExecutor                    // the executor API: executor tokens (authn.go)
	routeReadOnly                    // reads the agent's state or sandboxes
	routeReadWrite                   // changes or loads the agent
)

func (c routeClass) String() string {
	return [...]string{"open", "executor", "readonly", "readwrite"}[c]
}

// flag is the agent flag that protects the class, for 401 bodies.
func (c routeClass) flag() string {
	return [...]string{"", "--authenticate-http-executors", "--authenticate-http-readonly", "--authenticate-http-readwrite"}[c]
}

// route is one entry of the agent's mux.
type route struct {
	pattern string
	class   routeClass
	handler http.HandlerFunc
}

// routes is every endpoint the agent serves, with its class.
func (a *Agent) routes() []route {
	rs := []route{
		{executorPath, routeExecutor, a.handleExecutor},
		{"/health", routeOpen, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }},
		{"/monitor/statistics", routeReadOnly, a.handleStatistics},
		{"/monitor/statistics.json", routeReadOnly, a.handleStatistics},
		{"/monitor/host", routeReadOnly, a.handleHostStats},
		{"/state", routeReadOnly, a.handleState},
		{"/files/sandbox", routeReadOnly, a.handleSandboxFile},
		{"/files/browse", routeReadOnly, a.handleFilesBrowse},
		{"/files/read", routeReadOnly, a.handleFilesRead},
		{"/files/download", routeReadOnly, a.handleFilesDownload},
		{"/metrics/snapshot", routeReadOnly, a.handleMetricsSnapshot},
		{"/metrics", routeReadOnly, a.handlePrometheus},
		// The operator API (operatorapi.go): Mesos's agent serves it in
		// its read-write realm.
		{"/api/v1", routeReadWrite, a.handleOperatorAPI},
	}
	if a.cfg.Pprof {
		// Profiles cost CPU and heap dumps show memory: off unless asked
		// for, and then as a read-write endpoint.
		rs = append(rs,
			route{"/debug/pprof/", routeReadWrite, pprof.Index},
			route{"/debug/pprof/cmdline", routeReadWrite, pprof.Cmdline},
			route{"/debug/pprof/profile", routeReadWrite, pprof.Profile},
			route{"/debug/pprof/symbol", routeReadWrite, pprof.Symbol},
			route{"/debug/pprof/trace", routeReadWrite, pprof.Trace})
	}
	return rs
}

// httpHandler is the agent's mux, each route behind its class's
// authentication, wrapped in the body cap and the TLS guard.
func (a *Agent) httpHandler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range a.routes() {
		mux.Handle(rt.pattern, a.authenticateHTTP(rt.class, rt.handler))
	}
	return a.plaintextGuard(a.limitBodies(mux))
}

// requires reports whether the class needs a credential from
// --http-credentials.
func (h HTTPAuthn) requires(c routeClass) bool {
	return (c == routeReadOnly && h.ReadOnly) || (c == routeReadWrite && h.ReadWrite)
}

// authenticateHTTP puts next behind class's authentication. Reads answer
// only GET and HEAD: the class is decided by the path, and a method that
// could mean a write on another server must not pass as a read here. As on
// the master, a valid credential sent where none is required is still
// recorded as the principal (access_sandboxes can then tell callers
// apart); an invalid one there is ignored.
func (a *Agent) authenticateHTTP(class routeClass, next http.HandlerFunc) http.Handler {
	h := a.cfg.HTTPAuthn
	if class == routeOpen || class == routeExecutor {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		required := h.requires(class)
		if h.Credentials != nil && (required || r.Header.Get("Authorization") != "") {
			p, problem := auth.CheckBasic(r, h.Credentials)
			switch {
			case problem == "":
				r = r.WithContext(auth.WithPrincipal(r.Context(), p))
			case required:
				a.log.Debug().Str("path", r.URL.Path).Str("remote", r.RemoteAddr).Str("problem", problem).Msg("authentication failed")
				auth.Unauthorized(w, "Basic", "%s %s: %s (the agent runs with %s; its --http-credentials hold the principals it accepts)",
					r.Method, r.URL.Path, problem, class.flag())
				return
			}
		}
		if class == routeReadOnly && r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, r.URL.Path+" is read-only: use GET", http.StatusMethodNotAllowed)
			return
		}
		next(w, r)
	})
}

// authorizeSandbox applies access_sandboxes (--acls) to a read of the
// sandbox at root of executor exID of framework fw: the object is the
// user the executor ran as. It answers a 403 fileError when denied.
func (a *Agent) authorizeSandbox(who auth.Subject, fw, exID, root string) error {
	if a.cfg.Authorizer == nil {
		return nil
	}
	user := a.sandboxUser(fw, exID, root)
	err := a.cfg.Authorizer.Authorize(who, auth.AccessSandboxes, user)
	if err == nil {
		return nil
	}
	ev := a.log.Warn().Str("framework_id", fw).Str("executor_id", exID).Str("user", user).Bool("authenticated", who.Authenticated).Str("principal", who.Principal)
	var de *auth.DeniedError
	if errors.As(err, &de) {
		ev = ev.Str("acl", de.ACL)
	}
	ev.Msg("authorization denied: sandbox read")
	return &fileError{code: http.StatusForbidden, msg: err.Error(), logged: true}
}
