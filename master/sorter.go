package master

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/sorter"
)

// Switching the allocator's policy at runtime: allot's own operator call
// beside Mesos's UPDATE_WEIGHTS. GET /api/v1/allot/sorter answers the
// policy in force; POST with {"sorter", "agent_selection", "mode"} (any
// omitted field keeps its value) switches it. The leader validates the
// combination by building the new allocator (allocator.Reconfigure, which
// carries holdings, demands, filters and shared policy state over),
// rescinds outstanding offers (they were made under the old policy and
// their resources go back first), installs it, gives it the signals the
// master holds on the wire (job types and job sizes), and
// answers once the choice is in the replicated registry, so a new leader
// builds its allocator with it. It takes effect at the next allocation
// cycle.

// SorterPath is the runtime policy switch (GET, POST; JSON SorterConfig).
const SorterPath = "/api/v1/allot/sorter"

// SorterConfig is the allocator policy in force.
type SorterConfig struct {
	Sorter         string `json:"sorter"`
	AgentSelection string `json:"agent_selection"`
	Mode           string `json:"mode"`
	// Dropped lists what the new policy could not take over (POST only).
	Dropped []string `json:"dropped,omitempty"`
}

// sorterConfigLocked is the policy in force. Caller holds m.mu.
func (m *Master) sorterConfigLocked() SorterConfig {
	return SorterConfig{Sorter: m.allocCfg.Sorter.Name(), AgentSelection: m.allocCfg.AgentSelection.String(), Mode: m.allocCfg.Mode.String()}
}

// parseReconfiguration reads a policy choice, naming the field that is
// wrong.
func parseReconfiguration(c SorterConfig) (allocator.Reconfiguration, error) {
	var rc allocator.Reconfiguration
	var err error
	if rc.Sorter, err = sorter.Lookup(c.Sorter); err != nil {
		return rc, fmt.Errorf("sorter: %w", err)
	}
	if rc.AgentSelection, err = sorter.ParseAgentSelection(c.AgentSelection); err != nil {
		return rc, fmt.Errorf("agent_selection: %w", err)
	}
	if rc.Mode, err = allocator.ParseMode(c.Mode); err != nil {
		return rc, fmt.Errorf("mode: %w", err)
	}
	return rc, nil
}

// handleSorter answers GET SorterPath: the policy in force. Takes m.mu.
func (m *Master) handleSorter(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	c := m.sorterConfigLocked()
	m.mu.Unlock()
	writeJSON(w, c)
}

// handleSorterSwitch answers POST SorterPath: it switches the policy.
// Takes m.mu.
func (m *Master) handleSorterSwitch(w http.ResponseWriter, r *http.Request) {
	if !m.allowHTTP(w, r, auth.UpdateSorter, "") {
		return
	}
	c, err := m.switchSorter(r)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	writeJSON(w, c)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// switchSorter applies a POST to SorterPath. Takes m.mu.
func (m *Master) switchSorter(r *http.Request) (SorterConfig, error) {
	var req SorterConfig
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return SorterConfig{}, api.Errorf(http.StatusBadRequest, "switch sorter: want JSON {\"sorter\": ..., \"agent_selection\": ..., \"mode\": ...}: %v", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.sorterConfigLocked()
	next := SorterConfig{Sorter: orDefault(strings.TrimSpace(req.Sorter), cur.Sorter),
		AgentSelection: orDefault(strings.TrimSpace(req.AgentSelection), cur.AgentSelection), Mode: orDefault(strings.TrimSpace(req.Mode), cur.Mode)}
	rc, err := parseReconfiguration(next)
	if err != nil {
		return SorterConfig{}, api.Errorf(http.StatusBadRequest, "switch sorter: %v", err)
	}
	if err := m.alloc.CheckReconfiguration(rc); err != nil {
		return SorterConfig{}, api.Errorf(http.StatusBadRequest, "switch sorter to %s/%s/%s: %v", next.Sorter, next.AgentSelection, next.Mode, err)
	}
	// Offers outstanding were made by the old allocator: take them back
	// into it first, so the new one, built from its state, does not count
	// them held.
	m.rescindAllOffersLocked("the allocator's policy was switched")
	b, dropped, err := m.alloc.Reconfigure(rc)
	if err != nil {
		return SorterConfig{}, api.Errorf(http.StatusInternalServerError, "switch sorter: %v", err)
	}
	m.alloc, m.allocCfg = b, b.Config()
	m.replayWireSignalsLocked()
	m.log.Info().Str("from", cur.Sorter+"/"+cur.AgentSelection+"/"+cur.Mode).Str("to", next.Sorter+"/"+next.AgentSelection+"/"+next.Mode).
		Strs("dropped", dropped).Msg("allocator policy switched")
	cfg := m.reg.Config()
	cfg.Sorter, cfg.AgentSelection, cfg.Mode = next.Sorter, next.AgentSelection, next.Mode
	m.triggerAllocation()
	// Answer once the choice is durable; never hold the lock through the
	// disk write.
	m.mu.Unlock()
	err = m.rep.proposeWait(&api.Command{Type: api.CommandType_CONFIG_SET, Config: cfg})
	m.mu.Lock()
	if err != nil {
		return SorterConfig{}, api.Errorf(http.StatusServiceUnavailable, "switch sorter: in force on this leader, but the registry did not take it (a new leader would not keep it): %v", err)
	}
	next.Dropped = dropped
	return next, nil
}

// rescindAllOffersLocked takes back every outstanding offer, telling each
// framework. Caller holds m.mu.
func (m *Master) rescindAllOffersLocked(why string) {
	for _, o := range m.offers {
		m.removeOfferLocked(o, true, nil)
		m.sendFrameworkLocked(m.frameworks[o.fw], rescindEvent(o.id()))
		m.log.Info().Str("offer_id", o.id()).Str("why", why).Msg("offer rescinded")
	}
}

// replayWireSignalsLocked gives a freshly built allocator the signals the
// master holds from the wire: job types (FrameworkInfo labels) and job
// sizes (labels or REQUEST; a virtual cluster carried over keeps its
// progress, since the same declaration changes nothing). Caller holds m.mu.
func (m *Master) replayWireSignalsLocked() {
	for _, id := range sortedKeys(m.frameworks) {
		fw := m.frameworks[id]
		if t := jobTypeOf(&fw.info); t != "" {
			m.allocOK("set_job_type", m.alloc.Observe(policy.JobType{Framework: id, Type: t}), "framework_id", id)
		}
	}
	m.redeclareJobSizesLocked()
}

// applyRegistryPolicyLocked makes a new leader's (empty) allocator run the
// policy the registry holds, if an operator switched it; a registry choice
// this binary cannot run is logged and the flags' policy kept. Caller holds
// m.mu, before the registry's agents and frameworks are replayed.
func (m *Master) applyRegistryPolicyLocked() {
	cfg := m.reg.Config()
	if cfg.Sorter == "" {
		return
	}
	rc, err := parseReconfiguration(SorterConfig{Sorter: cfg.Sorter, AgentSelection: orDefault(cfg.AgentSelection, "rrr"), Mode: orDefault(cfg.Mode, "oblivious")})
	var b *allocator.Allocator
	if err == nil {
		b, _, err = m.alloc.Reconfigure(rc)
	}
	if err != nil {
		m.log.Error().Err(err).Str("sorter", cfg.Sorter).Msg("the registry's allocator policy cannot run here; keeping the flags' policy")
		return
	}
	m.alloc, m.allocCfg = b, b.Config()
}
