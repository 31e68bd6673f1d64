package allocator

import (
	"fmt"
	"sort"
	"time"

	"github.com/allot-sched/allot/resources"
)

// AgentState is a copy of what the allocator knows about an agent.
type AgentState struct {
	ID         string
	Index      int
	Total      resources.Resources
	Available  resources.Resources
	Attributes map[string]string
	// Allocated maps framework id to what it holds on the agent.
	Allocated map[string]resources.Resources
	Filters   int
}

// FrameworkState is a copy of what the allocator knows about a framework.
type FrameworkState struct {
	ID         string
	Index      int
	Role       string
	Weight     float64
	Active     bool
	Suppressed bool
	Allocated  resources.Resources // scalars; ports are per agent
	Demand     Demand              // Task is zero if none declared
	// Tasks is x_n, tasks' worth held (characterized mode).
	Tasks int64
	// Share is the framework's weighted dominant share a_n / (phi C).
	Share float64
}

// Agent returns a copy of an agent's state.
func (a *Allocator) Agent(id string) (AgentState, error) {
	ag, err := a.agent(id)
	if err != nil {
		return AgentState{}, err
	}
	st := AgentState{ID: ag.id, Index: int(ag.idx), Total: ag.total.Clone(), Available: ag.avail.Clone(),
		Attributes: ag.attrs, Allocated: map[string]resources.Resources{}, Filters: len(ag.filters)}
	for i := range ag.holds {
		h := &ag.holds[i]
		st.Allocated[a.fws[h.fw].id] = h.res().Clone()
	}
	return st, nil
}

// Framework returns a copy of a framework's state.
func (a *Allocator) Framework(id string) (FrameworkState, error) {
	f, err := a.framework(id)
	if err != nil {
		return FrameworkState{}, err
	}
	d := Demand{Tasks: int(f.want)}
	if f.hasDemand {
		d.Task = f.demand.Clone()
	}
	return FrameworkState{ID: f.id, Index: int(f.idx), Role: f.role, Weight: a.weight(f.role),
		Active: f.active, Suppressed: f.suppressed, Allocated: f.alloc.Clone(), Demand: d,
		Tasks: f.view.Tasks, Share: f.alloc.Scalars.DominantShare(a.cluster.Total) / a.weight(f.role)}, nil
}

// Agents lists agent ids in registration order.
func (a *Allocator) Agents() []string {
	out := make([]string, 0, a.nAgents)
	for _, ag := range a.agents {
		if ag != nil {
			out = append(out, ag.id)
		}
	}
	return out
}

// Frameworks lists framework ids in registration order.
func (a *Allocator) Frameworks() []string {
	out := make([]string, 0, len(a.fwByID))
	for _, f := range a.fws {
		if f != nil {
			out = append(out, f.id)
		}
	}
	return out
}

// Total is the cluster's total resources C (scalars).
func (a *Allocator) Total() resources.Vector { return a.cluster.Total }

// RoleShares returns each role's weighted dominant share, as Mesos reports
// per-role shares (the master exports them as metrics).
func (a *Allocator) RoleShares() map[string]float64 {
	alloc := map[string]resources.Vector{}
	for _, f := range a.fws {
		if f != nil {
			alloc[f.role] = alloc[f.role].Add(f.alloc.Scalars)
		}
	}
	out := make(map[string]float64, len(alloc))
	for role, v := range alloc {
		out[role] = v.DominantShare(a.cluster.Total) / a.weight(role)
	}
	return out
}

// Explain says, in words an operator can act on, whether framework fw can
// be offered resources of agent ag in the next cycle and if not, why: it is
// inactive or suppressed, its demand is met, a filter refuses the agent
// until a given time, its task does not fit, or the agent is below the
// min-allocatable floor.
func (a *Allocator) Explain(fwID, agentID string) string {
	f, err := a.framework(fwID)
	if err != nil {
		return err.Error()
	}
	ag, err := a.agent(agentID)
	if err != nil {
		return err.Error()
	}
	switch {
	case !f.active:
		return fmt.Sprintf("framework %q is inactive (disconnected): no offers until it re-subscribes", f.id)
	case f.suppressed:
		return fmt.Sprintf("framework %q suppressed offers: no offers until it revives", f.id)
	}
	want := ag.avail.Reservable()
	if a.cfg.Mode == Characterized && f.hasDemand {
		if f.want == 0 {
			return fmt.Sprintf("framework %q has no outstanding demand: it declared 0 more tasks", f.id)
		}
		want = resources.Resources{Scalars: f.task}
		if !ag.avail.Contains(want) {
			return fmt.Sprintf("task %s of framework %q does not fit in what agent %q has left (%s)", want, f.id, ag.id, ag.avail.Reservable())
		}
	} else if !a.allocatable(want) {
		return fmt.Sprintf("agent %q has %s left, below the min-allocatable floor %s", ag.id, want, a.minAlloc)
	}
	now := a.clock.Now()
	var until []time.Time
	for _, fl := range ag.filters {
		if fl.fw == f.idx && now.Before(fl.until) && fl.res.Contains(want) {
			until = append(until, fl.until)
		}
	}
	if len(until) > 0 {
		sort.Slice(until, func(i, j int) bool { return until[i].After(until[j]) })
		return fmt.Sprintf("framework %q declined agent %q with a filter: refused until %s (in %s) or a revive",
			f.id, ag.id, until[0].UTC().Format(time.RFC3339), HumanDuration(until[0].Sub(now)))
	}
	return fmt.Sprintf("framework %q is eligible for agent %q; %s decides the order (its score %.6g)", f.id, ag.id, a.crit.Name(), f.skey)
}

// FilterState is one live decline filter: the framework refuses what the
// agent has, up to Resources, until Until (or a revive).
type FilterState struct {
	Agent     string
	Until     time.Time
	Resources resources.Resources
}

// Filters lists framework fwID's decline filters that have not expired, by
// agent registration order (the operator's "why does it get nothing").
func (a *Allocator) Filters(fwID string) ([]FilterState, error) {
	f, err := a.framework(fwID)
	if err != nil {
		return nil, err
	}
	now := a.clock.Now()
	var out []FilterState
	for _, ag := range a.agents {
		if ag == nil {
			continue
		}
		for _, fl := range ag.filters {
			if fl.fw == f.idx && now.Before(fl.until) {
				out = append(out, FilterState{Agent: ag.id, Until: fl.until, Resources: fl.res.Clone()})
			}
		}
	}
	return out, nil
}
