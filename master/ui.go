package master

import (
	"net/http"
	"strings"

	"github.com/allot-sched/allot/sorter"
	"github.com/allot-sched/allot/ui"
)

// The web UI (package ui) is served by every master at "/": its pages on
// any master, its data under ui.DataPrefix. On the leader the data paths
// are the master's own operator endpoints with the prefix taken off; on a
// follower they are proxied to the leader (operator event stream
// included), so a browser pointed at any master sees the leader's cluster
// without cross-origin requests or redirects it would not follow.

// uiRoutes mounts the UI on mux.
func (m *Master) uiRoutes(mux *http.ServeMux) {
	pages := ui.Handler(Version, sorter.Names())
	mux.Handle("/", pages)
	mux.HandleFunc(ui.DataPrefix+"/", func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = strings.TrimPrefix(r.URL.Path, ui.DataPrefix)
		r2.URL.RawPath = ""
		if r2.URL.Path == "" || strings.HasPrefix(r2.URL.Path, ui.DataPrefix) {
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
