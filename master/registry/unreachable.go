package registry

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// The registry's unreachable agents, as Mesos's registry keeps them: an
// agent that failed its health checks leaves the admitted agents for this
// list (AGENT_UNREACHABLE) and leaves the list when it re-registers
// (AGENT_UPSERT) or is marked gone (AGENT_REMOVE). The leader prunes it by
// age and count (AGENT_UNREACHABLE_GC); the bounds travel in the command, so
// every replica forgets the same agents.

// DefaultMaxAgentCount is Mesos's --registry_max_agent_count default.
const DefaultMaxAgentCount = 100 * 1024

// unreachableAgents is the unreachable list in the order the log marked
// them. Guarded by Registry.mu.
type unreachableAgents struct {
	byID  map[string]*api.UnreachableAgent
	order []string // oldest first
}

func newUnreachableAgents() unreachableAgents {
	return unreachableAgents{byID: map[string]*api.UnreachableAgent{}}
}

// mark adds u (a newer mark of the same agent replaces the older).
func (x *unreachableAgents) mark(u *api.UnreachableAgent) {
	id := u.GetAgent().GetId()
	x.forget(id)
	x.byID[id] = u
	x.order = append(x.order, id)
}

// forget drops id from the list, if it is there.
func (x *unreachableAgents) forget(id string) {
	if x.byID[id] == nil {
		return
	}
	delete(x.byID, id)
	for i, o := range x.order {
		if o == id {
			x.order = append(x.order[:i], x.order[i+1:]...)
			return
		}
	}
}

// gc forgets the agents marked before cutoff (unix nanoseconds; 0: none by
// age), then the oldest beyond limit (0: DefaultMaxAgentCount).
func (x *unreachableAgents) gc(cutoff int64, limit int) {
	limit = orLimit(limit, DefaultMaxAgentCount)
	keep := x.order[:0]
	for i, id := range x.order {
		if x.byID[id].GetUnreachableUnixNano() < cutoff || len(x.order)-i > limit {
			delete(x.byID, id)
			continue
		}
		keep = append(keep, id)
	}
	x.order = keep
}

// applyUnreachableLocked applies AGENT_UNREACHABLE and AGENT_UNREACHABLE_GC.
// Caller holds r.mu.
func (r *Registry) applyUnreachableLocked(c *api.Command) error {
	if c.GetType() == api.CommandType_AGENT_UNREACHABLE_GC {
		r.unreachable.gc(c.GetUnixNano(), int(c.GetLimit()))
		return nil
	}
	if c.GetAgent().GetId() == "" {
		return fmt.Errorf("registry: AGENT_UNREACHABLE without an agent")
	}
	delete(r.agents, c.Agent.Id)
	r.unreachable.mark(&api.UnreachableAgent{Agent: c.Agent, UnreachableUnixNano: c.GetUnixNano()})
	return nil
}

// Unreachable returns the unreachable agents, oldest mark first.
func (r *Registry) Unreachable() []*api.UnreachableAgent {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*api.UnreachableAgent, 0, len(r.unreachable.order))
	for _, id := range r.unreachable.order {
		out = append(out, proto.Clone(r.unreachable.byID[id]).(*api.UnreachableAgent))
	}
	return out
}

// unreachableRecords lists the unreachable agents as snapshot records.
func (r *Registry) unreachableRecords() []*api.SnapshotRecord {
	var out []*api.SnapshotRecord
	for _, u := range r.Unreachable() {
		out = append(out, &api.SnapshotRecord{Record: &api.SnapshotRecord_UnreachableAgent{UnreachableAgent: u}})
	}
	return out
}
