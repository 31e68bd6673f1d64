package master

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// The master fronts its agents' sandbox files (agent/files.go) so that a
// client that knows only a master — the CLI's `allot logs`, the web UI — can
// read any task's stdout: /files/{browse,read,download}?agent_id=A&path=P is
// proxied to agent A's /files endpoint with the same path, offset and
// length. The agent confines paths to its sandboxes; the master only finds
// the agent.
//
// The caller's identity goes with the call: the proxy forwards the
// caller's Authorization header as it came, and the agent (with
// --authenticate-http-readonly and --acls) authenticates and authorizes
// that caller itself, as a Mesos agent does for a browser that reads a
// sandbox. The master adds no credential of its own: an agent must never
// take a read through the master for the master's, or a caller that the
// master lets through unauthenticated would read with the master's rights.
// docs/security.md says why this design and not a trusted header.
//
// GET /explain?framework_id=F&agent_id=A answers the allocator's Explain
// for the pair: why F would or would not be offered A's resources in the
// next cycle, in an operator's words.

// filesProxyTimeout bounds one proxied call: an agent that went away must
// answer the caller with an error, not a hang.
const filesProxyTimeout = 10 * time.Second

// handleFilesProxy forwards a /files call to the agent that holds the
// sandbox.
func (m *Master) handleFilesProxy(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("agent_id")
	if id == "" {
		http.Error(w, "missing agent_id: name the agent that ran the task (allot tasks shows it)", http.StatusBadRequest)
		return
	}
	if !m.allowSandbox(w, r) {
		return
	}
	m.mu.Lock()
	a, ok := m.agents[id]
	addr, connected := "", false
	if ok {
		addr, connected = a.rec.Address, a.stream != nil
	}
	m.mu.Unlock()
	if !ok {
		http.Error(w, fmt.Sprintf("agent %s is not registered with this master", id), http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	q.Del("agent_id")
	target := &url.URL{Scheme: m.scheme(), Host: addr}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.RawQuery = q.Encode()
			// The caller's credential, for the agent to check (Rewrite
			// keeps it already; set here so that no later change to the
			// outgoing headers drops it unnoticed).
			pr.Out.Header.Del("Authorization")
			if h := pr.In.Header.Get("Authorization"); h != "" {
				pr.Out.Header.Set("Authorization", h)
			}
		},
		Transport: m.agentTransport(&http.Transport{ResponseHeaderTimeout: filesProxyTimeout, DisableKeepAlives: true}),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			state := "connected"
			if !connected {
				state = "disconnected"
			}
			m.log.Warn().Err(err).Str("agent_id", id).Str("agent", addr).Msg("sandbox files: agent unreachable")
			http.Error(w, fmt.Sprintf("agent %s at %s (%s) did not answer: %v", id, addr, state, err), http.StatusBadGateway)
		},
	}
	proxy.ServeHTTP(w, r)
}

// handleExplain answers the allocator's reason for one framework and
// agent; a caller who may not view the framework (view_frameworks) gets
// 403 naming the ACL, as a denied call does.
func (m *Master) handleExplain(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fw, ag := q.Get("framework_id"), q.Get("agent_id")
	if fw == "" {
		http.Error(w, "want framework_id, and agent_id for one agent (allot frameworks and allot agents list them)", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	_, fwOK := m.frameworks[fw]
	_, agOK := m.agents[ag]
	var why string
	var denied error
	if fwOK {
		denied = m.authorize(auth.SubjectFrom(r.Context()), auth.ViewFrameworks, m.frameworkUserLocked(fw), false)
	}
	if fwOK && agOK && denied == nil {
		why = m.alloc.Explain(fw, ag)
	}
	m.mu.Unlock()
	switch {
	case denied != nil:
		api.WriteError(w, denied)
	case !fwOK:
		http.Error(w, "unknown framework "+fw, http.StatusNotFound)
	case ag == "":
		m.writeWhyNothing(w, r, fw) // placement.go
	case !agOK:
		http.Error(w, "unknown agent "+ag, http.StatusNotFound)
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, strings.TrimSpace(why))
	}
}
