package master

import (
	"errors"
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// Authentication. Every request passes authenticate before the routes: it
// takes the class of the route that serves the request (routes.go), and if
// the flag for that class is on it demands an HTTP Basic credential that
// --credentials knows, answering 401 with a challenge otherwise. The
// principal it authenticated goes into the request's context
// (auth.WithPrincipal) for the ACLs and rate limits that run after it.
// docs/security.md lists the classes; the route table is the source.

// Authn is the master's authentication: the credentials it accepts and
// which classes of endpoint require one (Mesos's --authenticate-* flags).
// The zero value authenticates nothing.
type Authn struct {
	// Credentials checks principals and secrets (--credentials); required
	// when any flag below is on.
	Credentials auth.Verifier
	// Frameworks: the scheduler API (--authenticate-frameworks).
	Frameworks bool
	// Agents: the agent protocol (--authenticate-agents).
	Agents bool
	// HTTPReadWrite: the operator API and every call that changes the
	// cluster (--authenticate-http-readwrite).
	HTTPReadWrite bool
	// HTTPReadOnly: state, metrics, sandboxes and the web UI
	// (--authenticate-http-readonly).
	HTTPReadOnly bool
}

func (a Authn) any() bool { return a.Frameworks || a.Agents || a.HTTPReadWrite || a.HTTPReadOnly }

// validate refuses a flag without credentials to check against: every
// request of its class would be refused.
func (a Authn) validate() error {
	if a.any() && a.Credentials == nil {
		return errors.New("master: --authenticate-frameworks, --authenticate-agents and --authenticate-http-* need --credentials FILE")
	}
	return nil
}

// endpointClass is what an endpoint serves, as far as authentication is
// concerned.
type endpointClass int

const (
	classOpen      endpointClass = iota // /health, /version, /redirect: never authenticated
	classFramework                      // the scheduler API
	classAgent                          // the agent protocol
	classReadWrite                      // changes the cluster, or the operator API
	classReadOnly                       // reads state
)

// flag is the master flag that protects the class, for 401 bodies.
func (c endpointClass) flag() string {
	return [...]string{"", "--authenticate-frameworks", "--authenticate-agents", "--authenticate-http-readwrite", "--authenticate-http-readonly"}[c]
}

func (c endpointClass) String() string {
	return [...]string{"open", "framework", "agent", "readwrite", "readonly"}[c]
}

func (a Authn) requires(c endpointClass) bool {
	switch c {
	case classFramework:
		return a.Frameworks
	case classAgent:
		return a.Agents
	case classReadWrite:
		return a.HTTPReadWrite
	case classReadOnly:
		return a.HTTPReadOnly
	}
	return false
}

// authenticate wraps the master's routes (Handler); classify is the
// route table's (router.classify), so a request is authenticated as the
// row that serves it. A class whose flag is off passes unauthenticated, but a valid credential sent anyway is still
// recorded as the principal (ACLs can then tell callers apart); an invalid
// one there is ignored, as Mesos ignores it where no authenticator is on.
func (m *Master) authenticate(classify func(*http.Request) endpointClass, next http.Handler) http.Handler {
	a := m.cfg.Authn
	if a.Credentials == nil {
		return next
	}
	failures := m.authnFailureCounter()
	m.log.Info().Bool("frameworks", a.Frameworks).Bool("agents", a.Agents).Bool("http_readwrite", a.HTTPReadWrite).
		Bool("http_readonly", a.HTTPReadOnly).Msg("authentication: these endpoint classes require a credential from --credentials")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		class := classify(r)
		required := a.requires(class)
		if class == classOpen || (!required && r.Header.Get("Authorization") == "") {
			next.ServeHTTP(w, r)
			return
		}
		p, problem := auth.CheckBasic(r, a.Credentials)
		switch {
		case problem == "":
			next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
		case !required:
			next.ServeHTTP(w, r)
		default:
			failures.WithLabelValues(class.String()).Inc()
			m.log.Debug().Str("path", r.URL.Path).Str("remote", r.RemoteAddr).Str("problem", problem).Msg("authentication failed")
			auth.Unauthorized(w, "Basic", "%s %s: %s (the master runs with %s)", r.Method, r.URL.Path, problem, class.flag())
		}
	})
}

// authnFailureCounter registers allot_master_authentication_failures_total
// once per master (Handler may be built more than once).
func (m *Master) authnFailureCounter() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "allot_master_authentication_failures_total",
		Help: "Requests answered 401 because a required credential was missing or wrong, by endpoint class."}, []string{"class"})
	if err := m.m.reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			return are.ExistingCollector.(*prometheus.CounterVec)
		}
	}
	return c
}

// subscribePrincipal checks a SUBSCRIBE against the principal that
// authenticated it, as Mesos does: FrameworkInfo.principal, when set, must
// be that principal (unset, it is filled in, so ACLs and /state see it);
// and a framework id already registered by another principal cannot be
// taken over by re-subscribing with it. Takes m.mu.
func (m *Master) subscribePrincipal(r *http.Request, id string, info *mesos.FrameworkInfo) error {
	p, ok := auth.PrincipalFrom(r.Context())
	if !ok {
		return nil
	}
	switch got := info.GetPrincipal(); {
	case got == "":
		info.Principal = &p
	case got != p:
		return api.Errorf(http.StatusForbidden, "framework_info.principal %q does not match the authenticated principal %q", got, p)
	}
	if id == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if fw := m.frameworks[id]; fw != nil && fw.info.GetPrincipal() != "" && fw.info.GetPrincipal() != p {
		return api.Errorf(http.StatusForbidden, "framework %s was registered by principal %q, not the authenticated %q", id, fw.info.GetPrincipal(), p)
	}
	return nil
}

// callPrincipal checks any other scheduler call: an authenticated caller
// may act only for a framework registered by the same principal (Mesos
// refuses a call whose principal differs from the framework's). Takes m.mu.
func (m *Master) callPrincipal(r *http.Request, call *scheduler.Call) error {
	p, ok := auth.PrincipalFrom(r.Context())
	if !ok {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.callPrincipalLocked(p, call)
}

// callPrincipalLocked is callPrincipal for the authenticated principal p.
// Caller holds m.mu.
func (m *Master) callPrincipalLocked(p string, call *scheduler.Call) error {
	fw := m.frameworks[call.GetFrameworkID().GetValue()]
	if fw != nil && fw.info.GetPrincipal() != "" && fw.info.GetPrincipal() != p {
		return api.Errorf(http.StatusForbidden, "authenticated principal %q does not match principal %q of framework %s", p, fw.info.GetPrincipal(), fw.id)
	}
	return nil
}
