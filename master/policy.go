package master

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// Policy state replication. The allocator's stateful policy models (the
// co-location bandit's preferences, Prophet's timelines, FSP's virtual
// cluster) are not derived from the registry's agents, frameworks and
// tasks, so a new leader that rebuilt its allocator from the registry
// alone would start them from nothing. The leader therefore replicates
// Allocator.SnapshotPolicies as one registry record (POLICY_SET), and a
// newly elected leader restores it.
//
// Rate. The models change on nearly every offer and usage report, so a
// write per change (or per allocation cycle) would put an fsync on every
// master per cycle and grow the raft log for nothing a failover needs to
// the second. The leader instead proposes at most once per
// Config.PolicySyncInterval, and only when the snapshot's bytes differ
// from the last it proposed (or restored): an idle cluster writes
// nothing. A failover loses at most that interval of learning.

// DefaultPolicySyncInterval is Config.PolicySyncInterval's default.
const DefaultPolicySyncInterval = 10 * time.Second

// PolicyPath serves the policy state the leader holds (GET, JSON
// PolicyView): allot operator policy show.
const PolicyPath = "/api/v1/allot/policy"

// policySync is the leader's replication bookkeeping. Guarded by m.mu.
type policySync struct {
	// last is the snapshot the registry holds as far as this leader
	// knows: the one it restored or last proposed successfully.
	last []byte
	// term counts this master's elections, so a proposal that began in
	// an earlier term does not overwrite last of a later one.
	term uint64
}

// sorterName is the criterion in force (the flag's, or the one an operator
// switched to). Caller holds m.mu.
func (m *Master) sorterName() string { return m.allocCfg.Sorter.Name() }

// policyLoop proposes the allocator's policy state every
// PolicySyncInterval while this master leads (never, if it is negative).
func (m *Master) policyLoop() {
	iv := m.cfg.PolicySyncInterval
	if iv == 0 {
		iv = DefaultPolicySyncInterval
	}
	if iv < 0 {
		return
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		if m.leader.Load() {
			if _, err := m.syncPolicies(); err != nil {
				m.log.Warn().Err(err).Msg("replicating the policy state failed; retrying at the next interval")
			}
		}
	}
}

// syncPolicies proposes the allocator's policy snapshot if it changed
// since the last one the registry holds, and waits for the commit. It
// snapshots under m.mu and proposes after releasing it: raft's commit
// must never hold up the allocation loop or the handlers. It reports
// whether it proposed. Takes m.mu.
func (m *Master) syncPolicies() (bool, error) {
	m.mu.Lock()
	if !m.leader.Load() {
		m.mu.Unlock()
		return false, nil
	}
	state, err := m.alloc.SnapshotPolicies()
	term, same, name := m.pol.term, bytes.Equal(state, m.pol.last), m.sorterName()
	m.mu.Unlock()
	if err != nil {
		m.allocOK("snapshot_policies", err)
		return false, err
	}
	if same {
		return false, nil
	}
	rec := &api.PolicyRecord{Sorter: name, State: state, UpdatedUnixNano: m.clock.Now().UnixNano()}
	if err := m.rep.proposeWait(&api.Command{Type: api.CommandType_POLICY_SET, Policy: rec}); err != nil {
		return false, fmt.Errorf("propose policy state: %w", err)
	}
	m.mu.Lock()
	if m.pol.term == term {
		m.pol.last = state
	}
	m.mu.Unlock()
	return true, nil
}

// restorePoliciesLocked gives a newly elected leader's allocator the
// replicated policy state. It runs after recoverLocked has re-added the
// registry's frameworks with their demands and job types: those events
// stamp the models with this election's time (the bandit's registration
// times, Prophet's deadlines from an empty wait history), and restoring
// afterwards replaces them with the previous leader's values for the same
// framework ids. Agents re-register later and reach the models as new
// events on top of the restored state. A record that cannot be restored
// (another policy, a damaged or older format) is logged, counted in
// allot_master_allocator_errors_total{op="restore_policies"}, and the
// models start fresh (RestorePolicies changes nothing on error). Caller
// holds m.mu.
func (m *Master) restorePoliciesLocked() {
	m.pol.term++
	m.pol.last = nil
	rec := m.reg.Policy()
	if rec != nil {
		var err error
		if rec.Sorter != m.sorterName() {
			err = fmt.Errorf("the replicated policy state is for --sorter %s, this master runs %s", rec.Sorter, m.sorterName())
		} else {
			err = m.alloc.RestorePolicies(rec.State)
		}
		if m.allocOK("restore_policies", err, "sorter", rec.Sorter) {
			// frameworks removed after the record was written are not
			// back (recoverLocked ran first): the models forget them, and
			// the next sync replicates the difference
			m.alloc.ForgetUnknownFrameworks()
			m.pol.last = rec.State
			return
		}
	}
	// Nothing (usable) replicated: what the models hold now is the
	// baseline, so a policy without models never proposes at all.
	m.pol.last, _ = m.alloc.SnapshotPolicies()
}

// PolicyView is the answer of GET PolicyPath.
type PolicyView struct {
	Sorter string        `json:"sorter"`
	Models []PolicyModel `json:"models"`
	// Replicated describes the registry's record; nil if none was set.
	Replicated *PolicyReplicated `json:"replicated,omitempty"`
}

// PolicyModel is one model's state as the leader holds it now: the
// model's own JSON (a base64 string if it is not JSON).
type PolicyModel struct {
	Name  string          `json:"name"`
	State json.RawMessage `json:"state"`
	// Withheld, when set, says why State is null: the caller may not
	// view every framework the model may name (view_frameworks).
	Withheld string `json:"withheld,omitempty"`
}

// PolicyReplicated is the registry's policy record, summarized.
type PolicyReplicated struct {
	Sorter          string `json:"sorter"`
	UpdatedUnixNano int64  `json:"updated_unix_nano"`
	Bytes           int    `json:"bytes"`
	// Current is whether it equals the leader's state now.
	Current bool `json:"current"`
}

// handlePolicy answers GET PolicyPath. Takes m.mu.
func (m *Master) handlePolicy(w http.ResponseWriter, r *http.Request) {
	v, err := m.policyView(auth.SubjectFrom(r.Context()))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// policyView is the leader's policy state and the registry's record as
// who may see them: the models' state only if who may view every
// framework (mayViewAllFrameworksLocked). Takes m.mu.
func (m *Master) policyView(who auth.Subject) (*PolicyView, error) {
	m.mu.Lock()
	state, err := m.alloc.SnapshotPolicies()
	name := m.sorterName()
	all := m.mayViewAllFrameworksLocked(who)
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	models, err := allocator.SplitPolicies(state)
	if err != nil {
		return nil, err
	}
	v := &PolicyView{Sorter: name, Models: []PolicyModel{}}
	for _, p := range models {
		if !all {
			v.Models = append(v.Models, PolicyModel{Name: p.Name, State: json.RawMessage("null"),
				Withheld: "view_frameworks: this caller may not view every framework the model's state may name"})
			continue
		}
		raw := json.RawMessage(p.Data)
		if !json.Valid(p.Data) {
			raw, _ = json.Marshal(p.Data)
		}
		v.Models = append(v.Models, PolicyModel{Name: p.Name, State: raw})
	}
	if rec := m.reg.Policy(); rec != nil {
		v.Replicated = &PolicyReplicated{Sorter: rec.Sorter, UpdatedUnixNano: rec.UpdatedUnixNano,
			Bytes: len(rec.State), Current: bytes.Equal(rec.State, state)}
	}
	return v, nil
}
