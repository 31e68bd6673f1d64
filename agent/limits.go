package agent

import (
	"net/http"

	reqlimits "github.com/allot-sched/allot/internal/limits"
)

// limitBodies caps request bodies at Config.MaxRequestBytes (issue 16,
// item 5; docs/security-limits.md). Only the executor API reads a body; an
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
