package master

import (
	"net/http"
	"strings"

	"github.com/allot-sched/allot/ui"
)

// The web UI (package ui) is served by every master at "/": its pages on
// any master, its data under ui.DataPrefix. On the leader the data paths
// are the master's own operator endpoints with the prefix taken off; on a
// follower they are proxied to the leader (operator event stream
// included), so a browser pointed at any master sees the leader's cluster
// without cross-origin requests or redirects it would not follow. Both are
// rows of the route table (routes.go); a data path is served, and
// authenticated, as the route it names.

// uiDataRequest is r with ui.DataPrefix taken off its path; false if
// nothing is left, or the prefix comes again (answered 404).
func uiDataRequest(r *http.Request) (*http.Request, bool) {
	p := strings.TrimPrefix(r.URL.Path, ui.DataPrefix)
	if p == "" || p == r.URL.Path || strings.HasPrefix(p, ui.DataPrefix) {
		return nil, false
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = p
	r2.URL.RawPath = ""
	return r2, true
}

// uiData serves the UI's data paths through mux, on the leader or, from a
// follower, forwarded to it with the method as it came.
func (m *Master) uiData(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2, ok := uiDataRequest(r)
		if !ok {
			http.NotFound(w, r)
			return
		}
		leader, here := m.awaitLeader(r)
		switch {
		case here:
			mux.ServeHTTP(w, r2)
		case leader != "":
			m.forward(w, r2, leader) // the event stream included, as it comes
		default:
			m.noLeader(w)
		}
	})
}
