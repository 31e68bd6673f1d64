package master

import (
	"fmt"
	"net/http"
)

// DefaultHealthMaxRaftLag is --health-max-raft-lag's default: committed
// entries not yet applied to the registry. Commands are batched (up to
// thousands per entry), so a healthy master is a handful of entries behind
// at most; this many means its registry is far out of date.
const DefaultHealthMaxRaftLag = 10000

// handleHealth answers /health: 200 while this master can do its job, 503
// with the reason in the body when it cannot, so that a load balancer or
// supervisor takes it out of rotation (Mesos's /health is 200 while the
// process runs; allot also checks its disk, which Mesos's replicated log
// does on its own).
func (m *Master) handleHealth(w http.ResponseWriter, r *http.Request) {
	if reason := m.unhealthy(); reason != "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, reason)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// unhealthy is why this master cannot serve, or "": its raft log cannot be
// written (a full or failed disk: it can neither lead nor follow), or its
// registry lags what raft has committed by more than Config.HealthMaxRaftLag
// entries.
func (m *Master) unhealthy() string {
	if err := m.rep.logs.writeError(); err != nil {
		return err.Error()
	}
	max := m.cfg.HealthMaxRaftLag
	if max == 0 {
		max = DefaultHealthMaxRaftLag
	}
	commit, applied := m.rep.raft.CommitIndex(), m.rep.raft.AppliedIndex()
	if m.rep.indexes != nil {
		commit, applied = m.rep.indexes()
	}
	if max > 0 && commit > applied && int64(commit-applied) > max {
		return fmt.Sprintf("the registry lags raft: %d committed entries not applied (commit index %d, applied %d; --health-max-raft-lag %d)",
			commit-applied, commit, applied, max)
	}
	return ""
}
