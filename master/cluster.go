package master

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/raft"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// leaderOnly serves h on the leader. A follower forwards the request to the
// leader (forward.go), or, with Config.Redirect, answers 307 with
// `Location: //leader-host:port/<same path>` (mesos-go's httpsched keeps only
// the host from it and replays the call there).
//
// During a failover the request is held rather than refused: while no
// leader is known, while this master has just been elected and rebuilds its
// state, or while the leader it knows has been silent for longer than a
// heartbeat (it is probably dead), the handler waits for raft to settle, up
// to leaderWait, and only then answers 503. Clients back off on errors
// (httpsched waits 0.5 s, 1 s, 2 s, 4 s ... between SUBSCRIBE attempts), so a
// quick 503 or a redirect to a dead leader would cost them seconds; holding
// the call costs them only the election.
func (m *Master) leaderOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		leader, here := m.awaitLeader(r)
		switch {
		case here:
			h(w, r)
		case leader != "" && !m.cfg.Redirect:
			m.forward(w, r, leader)
		case leader != "":
			loc := "//" + leader + r.URL.Path
			if r.URL.RawQuery != "" {
				loc += "?" + r.URL.RawQuery
			}
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusTemporaryRedirect)
		default:
			m.noLeader(w)
		}
	}
}

// awaitLeader waits (up to leaderWait, or until the client gives up) until
// this master serves (here) or a leader that is alive is known.
func (m *Master) awaitLeader(r *http.Request) (leader string, here bool) {
	if m.leader.Load() {
		return "", true
	}
	deadline := time.Now().Add(m.rep.leaderWait)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if m.leader.Load() {
			return "", true
		}
		leader, self := m.rep.leader()
		fresh := time.Since(m.rep.raft.LastContact()) < m.rep.staleAfter
		if leader != "" && !self && fresh {
			return leader, false
		}
		if time.Now().After(deadline) {
			return "", false
		}
		select {
		case <-r.Context().Done():
			return "", false
		case <-tick.C:
		}
	}
}

func (m *Master) noLeader(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	msg := "no leading master is known (election in progress, or this master cannot reach a majority of its peers); retry shortly"
	if _, self := m.rep.leader(); self {
		msg = "this master was just elected and is still rebuilding its state from the registry; retry shortly"
	}
	api.WriteError(w, api.Errorf(http.StatusServiceUnavailable, "%s", msg))
}

// handleRedirect answers /redirect (and /master/redirect) with 307 to the
// leader, as Mesos does (the leader names itself), holding the request
// through an election like leaderOnly. Frameworks use it to point their
// client at the leader before subscribing.
func (m *Master) handleRedirect(w http.ResponseWriter, r *http.Request) {
	leader, here := m.awaitLeader(r)
	if here {
		leader = m.self.HTTP
	}
	if leader == "" {
		m.noLeader(w)
		return
	}
	w.Header().Set("Location", "//"+leader)
	w.WriteHeader(http.StatusTemporaryRedirect)
}

// RaftPath is the raft membership API (allot's own, not part of Mesos): GET
// lists the peers on any master; POST with a RaftRequest changes membership
// on the leader.
const RaftPath = "/api/v1/allot/raft"

// SnapshotPath serves the registry snapshot: GET returns the registry as a
// stream of typed records (any master; the leader's is current), POST
// replaces the registry with one through raft (leader only).
const SnapshotPath = "/api/v1/allot/snapshot"

// RaftPeer is one entry of the list-peers answer.
type RaftPeer struct {
	ID       string `json:"id"` // the master's HTTP address
	Address  string `json:"address"`
	Suffrage string `json:"suffrage"`
	Leader   bool   `json:"leader"`
}

// RaftRequest is a membership change.
type RaftRequest struct {
	Op      string `json:"op"`      // add-voter, remove-peer, transfer-leadership
	ID      string `json:"id"`      // the master's HTTP host:port
	Address string `json:"address"` // its raft host:port (add-voter, transfer-leadership)
}

// handleSnapshot answers GET SnapshotPath: this master's copy of the
// registry (for comparing masters), or with ?leader= the leader's, the
// current one (for backups).
func (m *Master) handleSnapshot(w http.ResponseWriter, r *http.Request) {
	write := func(w http.ResponseWriter, r *http.Request) {
		if !m.allowHTTP(w, r, auth.ManageRaft, "") { // the whole registry
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		m.reg.WriteSnapshot(w)
	}
	if r.URL.Query().Get("leader") != "" {
		m.leaderOnly(write)(w, r)
		return
	}
	write(w, r)
}

// handleListPeers answers GET RaftPath on any master.
func (m *Master) handleListPeers(w http.ResponseWriter, r *http.Request) { m.listPeers(w) }

func (m *Master) listPeers(w http.ResponseWriter) {
	f := m.rep.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		api.WriteError(w, api.Errorf(http.StatusServiceUnavailable, "raft configuration: %v", err))
		return
	}
	leader, _ := m.rep.leader()
	var out []RaftPeer
	for _, s := range f.Configuration().Servers {
		out = append(out, RaftPeer{ID: string(s.ID), Address: string(s.Address), Suffrage: s.Suffrage.String(), Leader: string(s.ID) == leader})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func (m *Master) handleRaftChange(w http.ResponseWriter, r *http.Request) {
	if !m.allowHTTP(w, r, auth.ManageRaft, "") {
		return
	}
	var req RaftRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "raft request: %v (want JSON {\"op\",\"id\",\"address\"})", err))
		return
	}
	if req.ID == "" && req.Op != "transfer-leadership" {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "raft %s: id (the master's HTTP host:port) is required", req.Op))
		return
	}
	var err error
	switch req.Op {
	case "add-voter":
		if req.Address == "" {
			api.WriteError(w, api.Errorf(http.StatusBadRequest, "raft add-voter: address (the new master's --raft-addr) is required"))
			return
		}
		err = m.rep.raft.AddVoter(raft.ServerID(req.ID), raft.ServerAddress(req.Address), 0, 30*time.Second).Error()
	case "remove-peer":
		err = m.rep.raft.RemoveServer(raft.ServerID(req.ID), 0, 30*time.Second).Error()
	case "transfer-leadership":
		if req.ID == "" {
			err = m.rep.raft.LeadershipTransfer().Error()
		} else {
			addr := raft.ServerAddress(req.Address)
			if addr == "" {
				for _, s := range m.rep.raft.GetConfiguration().Configuration().Servers {
					if string(s.ID) == req.ID {
						addr = s.Address
					}
				}
			}
			err = m.rep.raft.LeadershipTransferToServer(raft.ServerID(req.ID), addr).Error()
		}
	default:
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "raft: unknown op %q (want add-voter, remove-peer or transfer-leadership)", req.Op))
		return
	}
	if err != nil {
		api.WriteError(w, api.Errorf(http.StatusServiceUnavailable, "raft %s %s: %v", req.Op, req.ID, err))
		return
	}
	m.log.Info().Str("op", req.Op).Str("id", req.ID).Str("address", req.Address).Msg("raft membership changed")
	w.WriteHeader(http.StatusOK)
}

// handleRestore replaces the registry with the snapshot in the body. It goes
// through raft (raft.Restore), so every master installs the same state; the
// leader then rebuilds its live state from it as after an election. The
// body is validated before raft sees it (a bad file must not replace a good
// registry), streamed to disk under --max-snapshot-bytes (restore.go).
// Takes m.mu.
func (m *Master) handleRestore(w http.ResponseWriter, r *http.Request) {
	if !m.allowHTTP(w, r, auth.ManageRaft, "") {
		return
	}
	m.restoreSnapshot(w, r)
}
