package master

import (
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/internal/limits"
)

// The listener's bounds (Config.HTTP, the --http-* flags): connections
// capped per listener and per client host, headers, bodies and idle
// keep-alives timed out, and the body bytes read at once budgeted, so that
// idle or stalled clients cannot hold the master's sockets or memory.

// limitConns wraps the raw listener (under TLS, so a refused connection
// costs no handshake) with the connection caps and their metrics.
func (m *Master) limitConns(ln net.Listener) net.Listener {
	s := m.cfg.HTTP.WithDefaults()
	open := prometheus.NewGauge(prometheus.GaugeOpts{Name: "allot_master_http_connections_open",
		Help: "HTTP connections open on the master's listener."})
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "allot_master_http_connections_refused_total",
		Help: "HTTP connections closed at accept, by reason: listener (--http-max-connections) or address (--http-max-connections-per-host)."},
		[]string{"reason"})
	m.m.reg.MustRegister(open, refused)
	return limits.LimitConns(ln, s.MaxConns, s.MaxConnsPerHost, limits.ConnHooks{
		Open:          func(n int) { open.Set(float64(n)) },
		Refused:       func(why limits.Refusal) { refused.WithLabelValues(string(why)).Inc() },
		PerHostExempt: m.isPeerHost,
	})
}

// isPeerHost says whether host (an IP) is another master's: a follower
// forwards each client connected to it over a connection of its own, so
// the leader must not count them as one client's. Peers are raft's voters,
// named by HTTP address (their server id) and raft address; a peer named
// by a host name rather than an IP is not recognised.
func (m *Master) isPeerHost(host string) bool {
	if m.rep == nil {
		return false
	}
	for _, s := range m.rep.raft.GetConfiguration().Configuration().Servers {
		for _, a := range []string{string(s.ID), string(s.Address)} {
			if h, _, err := net.SplitHostPort(a); err == nil && h == host {
				return true
			}
		}
	}
	return false
}

// httpServer is the master's server: its handler under the body deadline
// and budget, with the header and idle timeouts.
func (m *Master) httpServer() *http.Server {
	s := m.cfg.HTTP.WithDefaults()
	busy := prometheus.NewCounter(prometheus.CounterOpts{Name: "allot_master_request_bodies_refused_busy_total",
		Help: "Requests answered 503 because the bodies being read at once held --http-max-body-bytes-in-flight."})
	m.m.reg.MustRegister(busy)
	h := limits.BodyDeadline(m.restoreDeadline(m.Handler()), s.BodyTimeout, limits.NewBodyBudget(s.MaxBodyBytesInFlight), m.budgetCap,
		func(*http.Request) { busy.Inc() })
	srv := &http.Server{Handler: h}
	s.Apply(srv)
	return srv
}

// budgetCap is how much of the body budget a request may reserve: its
// route's body cap, and nothing for a snapshot restore, which streams its
// body to disk instead of holding it.
func (m *Master) budgetCap(r *http.Request) int64 {
	if r.URL.Path == SnapshotPath {
		return 0
	}
	if c := m.bodyCap(r); c > 0 {
		return c
	}
	return api.MaxBodyBytes
}

// restoreDeadline gives a snapshot restore's body snapshotReadTimeout
// instead of --http-body-timeout before any handler runs, so that it holds
// on a follower that forwards the restore to the leader too (the leader's
// handler sets it again, restore.go).
func (m *Master) restoreDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == SnapshotPath && r.Method == http.MethodPost {
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(snapshotReadTimeout))
		}
		h.ServeHTTP(w, r)
	})
}
