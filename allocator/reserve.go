package allocator

import (
	"fmt"
	"sort"

	"github.com/allot-sched/allot/resources"
)

// Reservation pools and role accounting.
//
// An agent's reservations are pools keyed by the reservation's role (the
// innermost of a refined stack); what of the agent is in no pool is
// unreserved. A pool's free part is offered whole, and only to frameworks
// subscribed to its role or a descendant of it.
//
// In role mode every holding is split into parts, one per (framework,
// allocation role, pool), so that each role's allocation, the unreserved
// part of it, and each pool's free part are known exactly; outside it the
// fast paths keep no parts and a role's allocation is its frameworks'.

// pool is one reservation on an agent.
type pool struct {
	name  string
	node  *roleNode // the node of its role (nodes are never removed)
	total resources.Resources
	free  resources.Resources // role mode: total less what frameworks hold of it
}

// part is what framework fw holds on an agent for role, from pool ("" for
// unreserved resources).
type part struct {
	fw   int32
	role string
	pool string
	res  resources.Resources
}

// wantRoleMode reports whether anything needs the role-aware cycle: a
// quota, a reservation, a framework with several roles or a nested role.
// Without them the fast paths decide exactly as they always have.
func (a *Allocator) wantRoleMode() bool {
	return len(a.quotas) > 0 || a.nResvAgents > 0 || a.nMulti > 0 || a.nHier > 0
}

// settleRoleMode enters or leaves role mode after a change.
func (a *Allocator) settleRoleMode() {
	switch want := a.wantRoleMode(); {
	case want && !a.rm:
		a.rm = true
		a.roleOrderDirty = true
		for _, ag := range a.agents {
			if ag != nil {
				a.materialize(ag)
			}
		}
		a.resetSets()
	case !want && a.rm:
		a.rm = false
		for _, ag := range a.agents {
			if ag != nil {
				ag.parts = nil
			}
		}
		for _, n := range a.roleTree {
			n.alloc, n.unres, n.own = resources.Resources{}, resources.Resources{}, resources.Resources{}
		}
		a.resetSets()
	}
}

// resetSets puts every framework in the sets it belongs to after the mode
// changed (wantsGlobal, wantsShape).
func (a *Allocator) resetSets() {
	for _, f := range a.fws {
		if f != nil {
			a.leaveSets(f)
			a.joinSets(f)
		}
	}
	a.keysDirty = true
}

// materialize splits ag's holdings into parts on entering role mode (or
// on an agent joining in it): each is unreserved and for the framework's
// first role, as the fast paths allocated it; then the pools' free parts
// are derived from what is left.
func (a *Allocator) materialize(ag *agent) {
	ag.parts = ag.parts[:0]
	for i := range ag.holds {
		h := &ag.holds[i]
		f := a.fws[h.fw]
		a.acct(ag, f.idx, f.role, "", h.res(), +1)
	}
	a.clampPools(ag)
}

// acct adds (sign +1) or takes (-1) r to framework fw's part for (role,
// pool) on ag, and to the role's and its ancestors' books.
func (a *Allocator) acct(ag *agent, fw int32, role, pool string, r resources.Resources, sign int) {
	if r.IsEmpty() {
		return
	}
	a.acctNode(ag, fw, a.role(role), pool, r, sign)
}

// acctNode is acct for the node of the role, which the cycle has at hand
// (a look-up by name per grant was a good part of the books' cost).
func (a *Allocator) acctNode(ag *agent, fw int32, n *roleNode, from string, r resources.Resources, sign int) {
	var pl *pool
	if from != "" {
		pl = ag.pools[from] // nil for a pool that is gone: its parts are booked by name
	}
	a.acctPart(ag, fw, n, from, pl, r, sign)
}

// acctPart is acctNode with from's pool pl (nil if none), which a grant
// has at hand.
func (a *Allocator) acctPart(ag *agent, fw int32, n *roleNode, from string, pl *pool, r resources.Resources, sign int) {
	if emptyAt(&r) {
		return
	}
	role := n.name
	pi := -1
	for i := range ag.parts {
		if p := &ag.parts[i]; p.fw == fw && p.role == role && p.pool == from {
			pi = i
			break
		}
	}
	if pi < 0 {
		pi = len(ag.parts)
		ag.parts = append(ag.parts, part{fw: fw, role: role, pool: from})
	}
	p := &ag.parts[pi]
	addScalars(&n.own, &r, sign)
	for m := n; m != nil; m = m.parent {
		addScalars(&m.alloc, &r, sign)
		if from == "" {
			addScalars(&m.unres, &r, sign)
		}
	}
	if sign > 0 {
		if emptyAt(&p.res) {
			// resources are values no operation changes in place: a new
			// part may share r's lists rather than copy them
			p.res = r
		} else {
			p.res = p.res.Add(r)
		}
		if pl != nil {
			pl.free = pl.free.Sub(r)
		}
	} else {
		p.res = p.res.Sub(r)
		if pl != nil {
			pl.free = pl.free.Add(r)
		}
	}
	if emptyAt(&p.res) {
		ag.parts = append(ag.parts[:pi], ag.parts[pi+1:]...)
	}
}

// clampPools re-derives each pool's free part from its total and the
// parts held from it, never more than the agent has free: pools in name
// order take what is free first, the rest is unreserved. Parts of a pool
// that is gone become unreserved.
func (a *Allocator) clampPools(ag *agent) {
	for i := 0; i < len(ag.parts); i++ {
		p := ag.parts[i]
		if p.pool != "" && ag.pools[p.pool] == nil {
			a.acct(ag, p.fw, p.role, p.pool, p.res, -1)
			a.acct(ag, p.fw, p.role, "", p.res, +1)
			i = -1 // the parts moved: start over
		}
	}
	left := ag.avail.Reservable()
	for _, pl := range ag.poolList {
		free := pl.total.Sub(a.heldFromPoolAll(ag, pl.name))
		free = minRes(free, left)
		pl.free = free
		left = left.Sub(free)
	}
}

// minRes is the kind-wise minimum of x and y.
func minRes(x, y resources.Resources) resources.Resources {
	return x.Sub(x.Sub(y))
}

// heldFromPoolAll is what all frameworks hold of pool on ag.
func (a *Allocator) heldFromPoolAll(ag *agent, pool string) resources.Resources {
	var out resources.Resources
	for i := range ag.parts {
		if ag.parts[i].pool == pool {
			out = out.Add(ag.parts[i].res)
		}
	}
	return out
}

// heldFrom is what f holds on ag from src (role mode).
func (a *Allocator) heldFrom(ag *agent, f *framework, src source) resources.Resources {
	var out resources.Resources
	for i := range ag.parts {
		if p := &ag.parts[i]; p.fw == f.idx && src.matches(p, true) {
			out = out.Add(p.res)
		}
	}
	return out
}

func (src source) matches(p *part, unreservedPass bool) bool {
	if src.role != "" && p.role != src.role {
		return false
	}
	if src.strict {
		return p.pool == src.pool
	}
	return (p.pool == "") == unreservedPass
}

func (src source) String() string {
	what := "unreserved"
	if src.pool != "" {
		what = fmt.Sprintf("of role %q's reservation", src.pool)
	}
	if src.role != "" {
		what += fmt.Sprintf(" for role %q", src.role)
	}
	return what
}

// takeParts takes r from f's parts on ag when it recovers r, from the
// parts src names; a source that is not strict takes unreserved parts
// first, then the pools' (a caller that does not say which pool still
// gets its books right).
func (a *Allocator) takeParts(ag *agent, f *framework, src source, r resources.Resources) {
	for pass := 0; pass < 2 && !r.IsEmpty(); pass++ {
		for i := 0; i < len(ag.parts) && !r.IsEmpty(); i++ {
			p := ag.parts[i]
			if p.fw != f.idx || !src.matches(&p, pass == 0) {
				continue
			}
			take := p.res // the whole part, as minRes gives where r holds it
			if !r.Contains(p.res) {
				take = minRes(p.res, r)
			}
			if take.IsEmpty() {
				continue
			}
			a.acct(ag, p.fw, p.role, p.pool, take, -1)
			r = r.Sub(take)
			i = -1 // parts may have moved
		}
	}
}

// dropParts returns everything f holds to the books (it is leaving).
func (a *Allocator) dropParts(f *framework) {
	if !a.rm {
		return
	}
	for _, ag := range a.agents {
		if ag == nil {
			continue
		}
		for i := 0; i < len(ag.parts); i++ {
			if p := ag.parts[i]; p.fw == f.idx {
				a.acct(ag, p.fw, p.role, p.pool, p.res, -1)
				i--
			}
		}
	}
}

// forgetAgentRoles takes a leaving agent's reservations and parts off the
// roles' books.
func (a *Allocator) forgetAgentRoles(ag *agent) {
	if a.rm {
		for len(ag.parts) > 0 {
			p := ag.parts[0]
			a.acct(ag, p.fw, p.role, p.pool, p.res, -1)
		}
	}
	a.setPools(ag, nil)
}

// setPools replaces ag's reservations, keeping the roles' reserved totals.
func (a *Allocator) setPools(ag *agent, byRole map[string]resources.Resources) {
	for name, pl := range ag.pools {
		for m := a.role(name); m != nil; m = m.parent {
			m.reserved = m.reserved.Sub(scalarsOf(pl.total))
		}
	}
	if len(ag.pools) > 0 {
		a.nResvAgents--
	}
	ag.pools, ag.poolNames, ag.poolList = nil, nil, nil
	for name, r := range byRole {
		if ag.pools == nil {
			ag.pools = map[string]*pool{}
		}
		ag.pools[name] = &pool{name: name, node: a.role(name), total: r.Clone()}
		ag.poolNames = append(ag.poolNames, name)
		for m := a.role(name); m != nil; m = m.parent {
			m.reserved = m.reserved.Add(scalarsOf(r))
		}
	}
	sort.Strings(ag.poolNames)
	for _, name := range ag.poolNames {
		ag.poolList = append(ag.poolList, ag.pools[name])
	}
	if len(ag.pools) > 0 {
		a.nResvAgents++
	}
}

// SetReservations says what of an agent's total is reserved, by the
// reservation's role (the innermost role of a refined stack); the rest is
// unreserved. It replaces what was said before. Reserved resources are
// offered only to frameworks subscribed to that role or a descendant of
// it, and count towards that role's (and its ancestors') quota
// consumption whether allocated or not.
func (a *Allocator) SetReservations(agentID string, byRole map[string]resources.Resources) error {
	ag, err := a.agent(agentID)
	if err != nil {
		return fmt.Errorf("set reservations: %w", err)
	}
	clean := map[string]resources.Resources{}
	var sum resources.Resources
	for role, r := range byRole {
		if err := resources.ValidateRole(role); err != nil {
			return fmt.Errorf("set reservations on agent %q: %w", agentID, err)
		}
		if role == resources.Unreserved {
			return fmt.Errorf("set reservations on agent %q: role %q is the unreserved role, not a reservation", agentID, role)
		}
		if r = r.Reservable(); !r.IsEmpty() {
			clean[role] = r
			sum = sum.Add(r)
		}
	}
	if !ag.total.Reservable().Contains(sum) {
		return fmt.Errorf("set reservations on agent %q: reservations %s exceed the agent's total %s", agentID, sum, ag.total.Reservable())
	}
	a.setPools(ag, clean)
	if a.rm {
		a.clampPools(ag)
	}
	a.settleRoleMode()
	return nil
}

// RecoverReserved is Recover for resources of role's reservation pool on
// the agent: they return to the pool, to be offered again inside role's
// subtree.
func (a *Allocator) RecoverReserved(fwID, agentID, role string, r resources.Resources, fl *Filter) error {
	if role == "" || role == resources.Unreserved {
		return a.Recover(fwID, agentID, r, fl)
	}
	if !a.rm {
		return fmt.Errorf("recover %s: there are no reservations for role %q on agent %q", r, role, agentID)
	}
	return a.recover(fwID, agentID, source{pool: role, strict: true}, r, fl)
}

// unreservedFree is what of ag is free and in no pool (role mode). A pool
// of well-known scalars only is taken off the vectors alone, which is
// what Sub would do, without copying the ports.
func (a *Allocator) unreservedFree(ag *agent) resources.Resources {
	free := ag.avail.Reservable()
	for _, pl := range ag.poolList {
		if len(pl.free.Extra) == 0 && len(pl.free.Ports) == 0 && len(free.Extra) == 0 {
			free.Scalars = free.Scalars.Sub(pl.free.Scalars)
		} else {
			free = free.Sub(pl.free)
		}
	}
	return free
}

// replayQuotas sets a's quotas in b, parents before children.
func (a *Allocator) replayQuotas(b *Allocator) error {
	names := make([]string, 0, len(a.quotas))
	for name := range a.quotas {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := b.SetQuota(name, a.roleTree[name].quota); err != nil {
			return fmt.Errorf("reconfigure: %w", err)
		}
	}
	return nil
}

// carryRoleBooks gives b, rebuilt from a, a's parts: which role and pool
// each holding is for (replaying holdings alone would count them all
// unreserved, for each framework's first role).
func (a *Allocator) carryRoleBooks(b *Allocator, fwMap map[int32]int32) {
	if !a.rm || !b.rm {
		return
	}
	for _, ag := range a.agents {
		if ag == nil {
			continue
		}
		bg := b.agents[b.agentByID[ag.id]]
		for len(bg.parts) > 0 {
			p := bg.parts[0]
			b.acct(bg, p.fw, p.role, p.pool, p.res, -1)
		}
		for _, p := range ag.parts {
			b.acct(bg, fwMap[p.fw], p.role, p.pool, p.res, +1)
		}
		for name, pl := range ag.pools {
			bg.pools[name].free = pl.free.Clone()
		}
	}
}
