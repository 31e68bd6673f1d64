package registry

import (
	"fmt"
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// agentResources is each agent's checkpointed resources (dynamic
// reservations and persistent volumes), keyed by agent id: what lets a new
// leader offer a reservation or a volume before the agent re-registers, and
// tell the agent what to keep when it does.
type agentResources map[string]*api.AgentResourcesRecord

// setAgentResourcesLocked applies AGENT_RESOURCES_SET: an empty list forgets the agent's.
func (r *Registry) setAgentResourcesLocked(c *api.Command) error {
	rec := c.GetAgentResources()
	if rec.GetAgentId() == "" {
		return fmt.Errorf("registry: AGENT_RESOURCES_SET without an agent id")
	}
	if len(rec.Resources) == 0 {
		delete(r.held, rec.AgentId)
		return nil
	}
	r.held[rec.AgentId] = rec
	return nil
}

// AgentResources returns a copy of every agent's checkpointed resources,
// sorted by agent id.
func (r *Registry) AgentResources() []*api.AgentResourcesRecord {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*api.AgentResourcesRecord, 0, len(r.held))
	for _, rec := range r.held {
		out = append(out, proto.Clone(rec).(*api.AgentResourcesRecord))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AgentId < out[j].AgentId })
	return out
}

// heldRecords lists the checkpointed resources as snapshot records.
func (r *Registry) heldRecords() []*api.SnapshotRecord {
	var out []*api.SnapshotRecord
	for _, rec := range r.AgentResources() {
		out = append(out, &api.SnapshotRecord{Record: &api.SnapshotRecord_AgentResources{AgentResources: rec}})
	}
	return out
}
