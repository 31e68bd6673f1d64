package agent

import (
	"net"
	"net/http"
	"time"

	"github.com/allot-sched/allot/internal/tlsconf"
)

// TLS: with Config.TLS set the agent's HTTP API speaks TLS, and its calls
// to the master use https, verify the master against the CA and present
// the agent's certificate (which the master verifies against the same CA).
//
// Executors are the exception, on purpose. They reach the executor API at
// MESOS_AGENT_ENDPOINT, a host:port, and an unmodified mesos-go executor
// (v0.0.11 builds "http://"+endpoint, with no way to pass a CA) could not
// speak TLS to it. So the agent serves plain HTTP on the same port to
// connections from its own host, and only for /api/v1/executor
// (tlsconf.NewSniffListener, plaintextGuard): that traffic never leaves the
// machine, so TLS would protect nothing there, and keeping one port means a
// checkpointed executor recovered after a restart finds its agent where it
// was. Everything from another host must speak TLS; executor
// authentication is the executor token's job, not the transport's.

// executorPath is the one path served in plaintext, to local executors.
const executorPath = "/api/v1/executor"

// loadTLS loads cfg.TLS (New calls it so that bad files fail the start).
func (a *Agent) loadTLS() error {
	b, err := tlsconf.Load(a.cfg.TLS)
	if err != nil {
		return err
	}
	a.tls = b
	// Bounded dials and handshakes: a master that is gone (a failover)
	// must fail a registration attempt in seconds so the next seed is tried.
	t := &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second}
	if b != nil {
		t.TLSClientConfig = b.Client()
	}
	a.mc = &http.Client{Transport: t}
	return nil
}

// listen wraps the HTTP listener: TLS for everyone, plaintext too for this
// host's executors.
func (a *Agent) listen(ln net.Listener) net.Listener {
	if a.tls == nil {
		return ln
	}
	return tlsconf.NewSniffListener(ln, a.tls.Server(), tlsconf.LocalPeer)
}

// plaintextGuard refuses plaintext requests other than executor calls (a
// local process reading /files or /state must use TLS like anyone else).
func (a *Agent) plaintextGuard(h http.Handler) http.Handler {
	if a.tls == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil && r.URL.Path != executorPath {
			http.Error(w, tlsconf.PlaintextRefusal+": this agent speaks TLS; only executors on its host may use plain HTTP, and only for "+executorPath, http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// masterURL is the URL of path on the master at addr.
func (a *Agent) masterURL(addr, path string) string { return tlsconf.URL(a.tls != nil, addr, path) }
