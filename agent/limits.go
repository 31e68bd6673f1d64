package agent

import (
	"net"
	"net/http"
	"sync/atomic"

	reqlimits "github.com/allot-sched/allot/internal/limits"
)

// limitBodies caps request bodies at Config.MaxRequestBytes
// (docs/security-limits.md). Only the executor API reads a body; an
// executor sending more is answered 413 and logged (the agent keeps no
// Prometheus registry to count it in).
func (a *Agent) limitBodies(h http.Handler) http.Handler {
	n := a.cfg.MaxRequestBytes
	if n == 0 {
		n = reqlimits.DefaultMaxRequestBytes
	}
	return reqlimits.CapBodies(h, func(*http.Request) int64 { return n }, func(r *http.Request) {
		a.log.Warn().Str("path", r.URL.Path).Str("remote", r.RemoteAddr).Int64("limit", n).Msg("request body over --max-request-bytes refused (413)")
	})
}

// limitConns caps the connections open on the agent's listener, in all
// and per client host (--http-max-connections[-per-host]). The agent keeps
// no Prometheus registry: refusals are logged, the first and then every
// 1000th, so that a flood does not flood the log too.
func (a *Agent) limitConns(ln net.Listener) net.Listener {
	s := a.cfg.HTTP.WithDefaults()
	var refused atomic.Int64
	return reqlimits.LimitConns(ln, s.MaxConns, s.MaxConnsPerHost, reqlimits.ConnHooks{
		Refused: func(why reqlimits.Refusal) {
			if n := refused.Add(1); n%1000 == 1 {
				a.log.Warn().Str("cap", string(why)).Int64("refused_so_far", n).Int("max", s.MaxConns).Int("max_per_host", s.MaxConnsPerHost).
					Msg("HTTP connection refused: over --http-max-connections or --http-max-connections-per-host")
			}
		},
	})
}

// httpServer serves h with the header, body and idle timeouts and the body
// budget of --http-*; executor streams outlive the body timeout, which ends
// when the SUBSCRIBE's body has been read.
func (a *Agent) httpServer(h http.Handler) *http.Server {
	s := a.cfg.HTTP.WithDefaults()
	n := a.cfg.MaxRequestBytes
	if n <= 0 {
		n = reqlimits.DefaultMaxRequestBytes
	}
	srv := &http.Server{Handler: reqlimits.BodyDeadline(h, s.BodyTimeout, reqlimits.NewBodyBudget(s.MaxBodyBytesInFlight),
		func(*http.Request) int64 { return n }, nil)}
	s.Apply(srv)
	return srv
}
