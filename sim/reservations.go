package sim

import (
	"fmt"
	"math"
	"path"
	"sort"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/resources"
)

// Reservation is resources of some agents set aside for a role, as the
// roles file declares them (Roles.Reservations):
//
//	{"agent": "t1-*", "role": "eng", "resources": {"cpus": 4, "mem": 8192}}
//	{"agent": "t2-1", "role": "eng/ml", "resources": {"gpus": 1}, "at": 600}
//
// Without "at" it is static, as an agent started with --resources
// 'cpus(eng):4;mem(eng):8192' holds it from registration. With "at" it is
// dynamic, made at that virtual second, as a framework's RESERVE or an
// operator's RESERVE_RESOURCES would make it: the master reserves only
// resources that are free and unreserved, so the simulator makes it at
// the first moment from then on when the agent has them free (tasks
// running on them are not preempted). Reservations of one agent for one
// role add up; refinement is a reservation for the descendant role.
type Reservation struct {
	// Agent is a node id, or a pattern (path.Match: "t1-*", "*") for
	// every node it matches.
	Agent     string             `json:"agent"`
	Role      string             `json:"role"`
	Resources map[string]float64 `json:"resources"`
	At        *float64           `json:"at,omitempty"`
}

// check validates a reservation without the cluster.
func (r *Reservation) check() error {
	if _, err := path.Match(r.Agent, ""); err != nil || r.Agent == "" {
		return fmt.Errorf("agent %q is not a node id or pattern", r.Agent)
	}
	if err := resources.ValidateRole(r.Role); err != nil {
		return err
	}
	if r.Role == resources.Unreserved {
		return fmt.Errorf("role %q is the unreserved role, not a reservation", r.Role)
	}
	if r.At != nil && (*r.At < 0 || math.IsNaN(*r.At) || math.IsInf(*r.At, 0)) {
		return fmt.Errorf("at %v: want seconds from the start, 0 or more", *r.At)
	}
	v, err := r.vector()
	if err != nil {
		return err
	}
	if v == (resources.Vector{}) {
		return fmt.Errorf("reserves nothing")
	}
	return nil
}

// vector is the reserved amounts: cpus, mem (MB), disk (MB) and gpus,
// which the allocator sets aside; bandwidths are advisory and never
// reserved.
func (r *Reservation) vector() (resources.Vector, error) {
	var v resources.Vector
	for _, name := range sortedNames(r.Resources) {
		k, ok := resources.KindOf(name)
		if !ok || k.Advisory() {
			return v, fmt.Errorf("resources: %q cannot be reserved in the simulator (cpus, mem, disk, gpus)", name)
		}
		x, err := quotaQuantity(name, r.Resources[name])
		if err != nil {
			return v, fmt.Errorf("resources: %w", err)
		}
		v[k] = x
	}
	return v, nil
}

// poolPart is an amount of one reservation pool (by role).
type poolPart struct {
	role string
	v    resources.Vector
}

// agentPools is the simulator's book of an agent's reservations.
type agentPools struct {
	total   map[string]resources.Vector // by role
	used    map[string]resources.Vector // by running tasks
	pending []resources.Vector          // dynamic ones waiting for free resources
	roles   []string                    // of pending, in declared order
}

// reservedTotal is what the agent's reservations hold, all roles.
func (p *agentPools) reservedTotal() (sum resources.Vector) {
	for _, v := range p.total {
		sum = sum.Add(v)
	}
	return sum
}

// setupReservations gives the allocator the static reservations and
// schedules the dynamic ones; the agents are known.
func (e *engine) setupReservations() error {
	if e.cfg.Roles == nil {
		return nil
	}
	for i := range e.cfg.Roles.Reservations {
		r := &e.cfg.Roles.Reservations[i]
		v, err := r.vector()
		if err != nil {
			return fmt.Errorf("roles file: reservation %d: %w", i+1, err)
		}
		matched := false
		for ai := range e.agents {
			if ok, _ := path.Match(r.Agent, e.agents[ai].id); !ok {
				continue
			}
			matched = true
			p := e.poolsOf(int32(ai))
			if r.At != nil {
				continue
			}
			p.total[r.Role] = p.total[r.Role].Add(v)
		}
		if !matched {
			return fmt.Errorf("roles file: reservation %d: agent %q matches no node of the cluster", i+1, r.Agent)
		}
		if r.At != nil {
			e.q.push(qItem{t: *r.At, kind: evReserve, ref: int32(i)})
		}
	}
	for ai := range e.agents {
		if err := e.pushReservations(int32(ai)); err != nil {
			return fmt.Errorf("roles file: %w", err)
		}
	}
	return nil
}

func (e *engine) poolsOf(ai int32) *agentPools {
	a := &e.agents[ai]
	if a.pools == nil {
		a.pools = &agentPools{total: map[string]resources.Vector{}, used: map[string]resources.Vector{}}
	}
	return a.pools
}

// pushReservations tells the allocator agent ai's reservations.
func (e *engine) pushReservations(ai int32) error {
	a := &e.agents[ai]
	if a.pools == nil || len(a.pools.total) == 0 {
		return nil
	}
	byRole := make(map[string]resources.Resources, len(a.pools.total))
	for role, v := range a.pools.total {
		byRole[role] = resources.Resources{Scalars: v}
	}
	return e.al.SetReservations(a.id, byRole)
}

// reserveAt queues dynamic reservation i on the agents it names, and
// makes it where the resources are free.
func (e *engine) reserveAt(i int32) error {
	r := &e.cfg.Roles.Reservations[i]
	v, _ := r.vector() // checked at setup
	for ai := range e.agents {
		if ok, _ := path.Match(r.Agent, e.agents[ai].id); ok {
			p := e.poolsOf(int32(ai))
			p.pending = append(p.pending, v)
			p.roles = append(p.roles, r.Role)
			if err := e.tryReserve(int32(ai)); err != nil {
				return err
			}
		}
	}
	return nil
}

// tryReserve makes agent ai's waiting reservations, in the order they were
// declared, while its free unreserved resources hold the next one.
func (e *engine) tryReserve(ai int32) error {
	a := &e.agents[ai]
	p := a.pools
	if p == nil || len(p.pending) == 0 {
		return nil
	}
	var resvUsed resources.Vector
	for _, v := range p.used {
		resvUsed = resvUsed.Add(v)
	}
	// unreserved and free: the total less what runs on unreserved
	// resources and less every reservation
	free := reservable(a.total).Sub(reservable(a.used).Sub(resvUsed)).Sub(p.reservedTotal())
	changed := false
	for len(p.pending) > 0 && free.Contains(p.pending[0]) {
		free = free.Sub(p.pending[0])
		p.total[p.roles[0]] = p.total[p.roles[0]].Add(p.pending[0])
		p.pending, p.roles = p.pending[1:], p.roles[1:]
		changed = true
	}
	if !changed {
		return nil
	}
	e.markDirty()
	if err := e.pushReservations(ai); err != nil {
		return fmt.Errorf("t=%.3fs: dynamic reservation: %w", e.now, err)
	}
	return nil
}

// offerPools is what of offer o comes from reservation pools, by role in
// name order; nil for an offer of unreserved resources only.
func offerPools(o *allocator.Offer) []poolPart {
	if len(o.Reserved) == 0 {
		return nil
	}
	out := make([]poolPart, 0, len(o.Reserved))
	for role, r := range o.Reserved {
		if v := reservable(r.Scalars); v != (resources.Vector{}) {
			out = append(out, poolPart{role, v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].role < out[j].role })
	return out
}

// takePools takes need from the offer's pools left, first pool first, as
// a framework in the role uses its reservation before the resources
// everyone may use; it returns the parts taken (nil: all unreserved).
func takePools(left []poolPart, need resources.Vector) []poolPart {
	var out []poolPart
	for i := range left {
		take := minVec(left[i].v, need)
		if take == (resources.Vector{}) {
			continue
		}
		left[i].v = left[i].v.Sub(take)
		need = need.Sub(take)
		out = append(out, poolPart{left[i].role, take})
	}
	return out
}

func minVec(x, y resources.Vector) resources.Vector {
	return x.Sub(x.Sub(y))
}

// recoverParts returns r (of which parts came from pools) to the allocator,
// each part to its pool and the rest unreserved.
func (e *engine) recoverParts(f *simFramework, a *simAgent, r resources.Vector, parts []poolPart, fl *allocator.Filter) error {
	for _, p := range parts {
		if err := e.al.RecoverReserved(f.id, a.id, p.role, resources.Resources{Scalars: p.v}, fl); err != nil {
			return err
		}
		r = r.Sub(p.v)
	}
	if r == (resources.Vector{}) {
		return nil
	}
	return e.al.Recover(f.id, a.id, resources.Resources{Scalars: r}, fl)
}

// usePools books run ri's parts of its agent's pools.
func (e *engine) usePools(ri, ai int32, parts []poolPart) {
	if len(parts) == 0 {
		return
	}
	if e.runPools == nil {
		e.runPools = map[int32][]poolPart{}
	}
	e.runPools[ri] = parts
	p := e.agents[ai].pools
	for _, q := range parts {
		p.used[q.role] = p.used[q.role].Add(q.v)
	}
}

// releasePools takes run ri's pool parts off the books and returns them.
func (e *engine) releasePools(ri, ai int32) []poolPart {
	parts, ok := e.runPools[ri]
	if !ok {
		return nil
	}
	delete(e.runPools, ri)
	p := e.agents[ai].pools
	for _, q := range parts {
		p.used[q.role] = p.used[q.role].Sub(q.v)
	}
	return parts
}
