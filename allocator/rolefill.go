package allocator

import (
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// The role-aware cycle (Mesos 1.11's two allocation stages), which runs
// instead of the fill path while the allocator is in role mode:
//
//  1. quota stage: agents in random order; on each, roles with an unmet
//     guarantee in hierarchical order get their reservations and
//     unreserved resources up to the unmet guarantee (other unreserved
//     resources only while the headroom holds);
//  2. fair-share stage: agents in random order; on each, every role in
//     hierarchical order gets its reservations and what is unreserved,
//     holding back enough unreserved resources (the headroom) that every
//     unmet guarantee can still be met.
//
// In both, offers of unreserved resources are clipped so that no role's
// consumption exceeds its limit or an ancestor's. Roles are sorted level
// by level by weighted dominant share of what their subtree holds (a role
// with frameworks of its own and children competes with its children as
// a virtual leaf, as in Mesos's sorter); within a role, frameworks are
// picked by the allocator's criterion on the agent.

// roleCycle is the per-cycle state of the role-aware fill.
type roleCycle struct {
	availHead    resources.Resources // free unreserved resources in the cluster
	reqHead      resources.Resources // what unmet guarantees still need
	nunmet       int32               // roles with an unmet guarantee and frameworks
	touched      []*roleNode         // leaves granted on the current agent
	granted      []int32             // frameworks granted on the current agent and role
	resv         []poolPart          // scratch: the pools of the offer being built
	unresOK      bool                // the current agent's free unreserved part is allocatable
	unresFree    resources.Resources // the current agent's free unreserved part
	cycle        uint32              // counts role-aware cycles, for agent.qcycle
	inQuotaStage bool
	lastOffers   int    // offers the last cycle made, to size the next one's
	visit        uint64 // counts agent visits, for roleNode.poolPath and poolSelf
	// the role orders the picks read (roleorder.go): which, the capacity
	// classes by number, and the moves a grant makes in them
	orders     orderKind
	classCrit  sorter.CapacityScored
	classOf    map[resources.Vector]int
	classViews []sorter.Agent
	moves      []orderMove
	floors     []floor // the min-allocatable floors (allocatableAt)
}

// poolPart is a pool's free part in an offer being built.
type poolPart struct {
	pool *pool
	res  resources.Resources
}

// roleFill runs both stages.
func (a *Allocator) roleFill() {
	a.prepareRoleCycle()
	// about as many offers as the last cycle made, else an offer per
	// agent and more where pools split one: growing the slice offer by
	// offer was a tenth of a cycle, and every slot is cleared and scanned
	size := a.nAgents + a.nAgents/8 + 2*a.nResvAgents
	if last := a.rc.lastOffers; last > 0 {
		size = min(size, last+last/16+16)
	}
	a.out = make([]Offer, 0, size)
	perm := a.liveAgents()
	a.shuffle(perm)
	a.nextRoleCycle()
	if len(a.quotas) > 0 {
		a.rc.inQuotaStage = true
		for _, ai := range perm {
			if a.rc.nunmet == 0 {
				break // no agent is visited in the quota stage from here
			}
			a.roleVisit(a.agents[ai], true)
		}
		a.rc.inQuotaStage = false
	}
	for _, ai := range perm {
		a.roleVisit(a.agents[ai], false)
	}
	a.rc.lastOffers = len(a.out)
}

// nextRoleCycle counts a cycle for agent.qcycle; when the count wraps, no
// agent's mark may be mistaken for the new cycle's.
func (a *Allocator) nextRoleCycle() {
	a.rc.cycle++
	if a.rc.cycle == 0 {
		a.rc.cycle = 1
		for _, ag := range a.agents {
			if ag != nil {
				ag.qcycle = 0
			}
		}
		for _, n := range a.roleTree {
			for i := range n.orders {
				n.orders[i].cycle = 0
			}
		}
	}
}

// prepareRoleCycle computes shares, sorts the tree and sums the headroom.
func (a *Allocator) prepareRoleCycle() {
	rc := &a.rc
	rc.availHead, rc.reqHead, rc.nunmet = resources.Resources{}, resources.Resources{}, 0
	a.noteFloors()
	if a.roleOrderDirty {
		a.rankRoleNames()
	}
	for _, n := range a.roleTree {
		n.unmet, n.nunmet = false, 0
		n.weight = a.weight(n.name)
	}
	for _, n := range a.roleTree {
		a.roleShare(n)
		a.noteUnmet(n)
		n.headroom = resources.Resources{}
		n.hroot = a.headroomRoot(n) // quotas do not change within a cycle
		if n.hroot == n {
			n.headroom = scalarsOf(n.quota.Guarantees).Sub(n.consumption())
			rc.reqHead = rc.reqHead.Add(n.headroom)
		}
	}
	if !rc.reqHead.IsEmpty() {
		// only a headroom to hold back reads what is free (headroomHolds),
		// and the headroom only shrinks within a cycle: with none, the
		// pass over every agent is spared
		for _, ag := range a.agents {
			if ag != nil {
				a.addUnreservedFree(&rc.availHead, ag)
			}
		}
	}
	sortRoles(a.roleTop)
	for _, n := range a.roleTree {
		sortRoles(n.kids)
	}
	a.prepareOrders()
}

// noteUnmet keeps n.unmet, and the counts of unmet roles above it, in
// step with n's consumption: the quota stage walks only subtrees that
// hold an unmet role.
func (a *Allocator) noteUnmet(n *roleNode) {
	unmet := n.hasQ && len(n.fws) > 0 && !scalarsOf(n.quota.Guarantees).Sub(n.consumption()).IsEmpty()
	if unmet == n.unmet {
		return
	}
	d := int32(1)
	if !unmet {
		d = -1
	}
	n.unmet = unmet
	for m := n; m != nil; m = m.parent {
		m.nunmet += d
	}
	a.rc.nunmet += d
}

// addUnreservedFree adds ag's free unreserved scalars to sum: on the
// vectors alone where no named scalar is involved (every agent, every
// cycle), else as unreservedFree does.
func (a *Allocator) addUnreservedFree(sum *resources.Resources, ag *agent) {
	plain := len(ag.avail.Extra) == 0 && len(sum.Extra) == 0
	for _, pl := range ag.poolList {
		plain = plain && len(pl.free.Extra) == 0
	}
	if !plain {
		*sum = sum.Add(scalarsOf(a.unreservedFree(ag)))
		return
	}
	free := ag.avail.Reservable().Scalars
	for _, pl := range ag.poolList {
		free = free.Sub(pl.free.Scalars)
	}
	sum.Scalars = sum.Scalars.Add(free)
}

// headroomRoot is the topmost role at or above n with a guarantee (its
// guarantee covers those of the roles below it), or nil.
func (a *Allocator) headroomRoot(n *roleNode) *roleNode {
	var root *roleNode
	for m := n; m != nil; m = m.parent {
		if m.hasQ && !m.quota.Guarantees.IsEmpty() {
			root = m
		}
	}
	return root
}

// roleVisit offers what is free on ag, roles in hierarchical order, then
// re-sorts the roles that were granted.
func (a *Allocator) roleVisit(ag *agent, quotaStage bool) {
	if quotaStage && a.rc.nunmet == 0 || !a.allocatableAt(&ag.avail, true) {
		return
	}
	a.rc.touched = a.rc.touched[:0]
	a.noteUnreserved(ag)
	a.markPools(ag)
	a.walkRoles(a.roleTop, ag, quotaStage)
	for _, n := range a.rc.touched {
		a.resortPath(n)
	}
}

// walkRoles visits the subtrees in s in order; it stops once ag has
// nothing allocatable left.
func (a *Allocator) walkRoles(s []*roleNode, ag *agent, quotaStage bool) bool {
	for _, n := range s {
		if !a.walkRole(n, ag, quotaStage) {
			return false
		}
	}
	return true
}

// markPools marks, for this visit of ag, the roles of its pools and
// their ancestors: once ag's unreserved part is gone, only subtrees
// holding such a role, or under one, can be offered anything.
func (a *Allocator) markPools(ag *agent) {
	if len(ag.poolList) == 0 {
		return
	}
	a.rc.visit++
	for _, pl := range ag.poolList {
		pl.node.poolSelf = a.rc.visit
		for m := pl.node; m != nil && m.poolPath != a.rc.visit; m = m.parent {
			m.poolPath = a.rc.visit
		}
	}
}

// poolsOut reports whether n's subtree holds no role that ag's pools are
// for, nor lies under one, once only pools are left on ag: every role in
// it would be passed over (offerRole), so the walk skips it whole.
func (a *Allocator) poolsOut(n *roleNode, ag *agent) bool {
	if a.rc.unresOK || len(ag.poolList) == 0 || n.poolPath == a.rc.visit {
		return false
	}
	for m := n.parent; m != nil; m = m.parent {
		if m.poolSelf == a.rc.visit {
			return false
		}
	}
	return true
}

// walkRole visits n's subtree: n's own frameworks compete with its
// children as a virtual leaf named "." (which sorts before any child of
// equal share).
func (a *Allocator) walkRole(n *roleNode, ag *agent, quotaStage bool) bool {
	if n.nsub == 0 || quotaStage && n.nunmet == 0 || a.poolsOut(n, ag) {
		return true
	}
	if len(n.kids) == 0 {
		return a.offerRole(n, ag, quotaStage)
	}
	self := len(n.fws) == 0 // done, or nothing to do
	for _, k := range n.kids {
		if !self && n.ownShare <= k.share {
			self = true
			if !a.offerRole(n, ag, quotaStage) {
				return false
			}
		}
		if !a.walkRole(k, ag, quotaStage) {
			return false
		}
	}
	return self || a.offerRole(n, ag, quotaStage)
}

// offerRole offers ag's free resources to role n's frameworks, best
// first, while something allocatable is left; false once nothing is.
func (a *Allocator) offerRole(n *roleNode, ag *agent, quotaStage bool) bool {
	rc := &a.rc
	if !rc.unresOK && !hasPoolFor(n, ag) {
		return true // only reservations are left here, none of them n's
	}
	rc.granted = rc.granted[:0]
	for {
		unres, resv, ok := a.roleOffer(n, ag, quotaStage)
		if !ok {
			break
		}
		offer := unres
		for _, r := range resv {
			r := r.res
			offer = offer.Add(r)
		}
		if !a.allocatableAt(&offer, false) {
			break
		}
		f, score := a.pickInRole(n, ag, offer)
		if f == nil {
			break
		}
		a.roleGrant(f, n, ag, offer, unres, resv, score)
		rc.granted = append(rc.granted, f.idx)
		if !a.allocatableAt(&ag.avail, true) {
			return false // what is left of the agent is no offer, for anyone
		}
		a.noteUnreserved(ag)
	}
	return a.allocatableAt(&ag.avail, true)
}

// noteUnreserved notes ag's free unreserved resources, for the offers
// made on it until the next grant, and whether they are allocatable: once
// they are not, only the roles its pools are for need visiting, which
// spares an agent with a reservation a walk of every role.
func (a *Allocator) noteUnreserved(ag *agent) {
	if len(ag.poolList) == 0 {
		a.rc.unresFree, a.rc.unresOK = ag.avail.Reservable(), true
		return
	}
	a.rc.unresFree = a.unreservedFree(ag)
	a.rc.unresOK = a.allocatableAt(&a.rc.unresFree, false)
}

// hasPoolFor reports whether ag has a pool with free resources for n.
func hasPoolFor(n *roleNode, ag *agent) bool {
	for _, pl := range ag.poolList {
		if !emptyAt(&pl.free) && resources.IsRoleOrDescendant(n.name, pl.name) {
			return true
		}
	}
	return false
}

// roleOffer is what role n may be offered on ag now: the unreserved part
// (clipped to the unmet guarantee in the quota stage, held back for the
// headroom, clipped to limits) and the free pools of n and its ancestors.
func (a *Allocator) roleOffer(n *roleNode, ag *agent, quotaStage bool) (unres resources.Resources, resv []poolPart, ok bool) {
	var unmet resources.Resources
	if quotaStage {
		if !n.hasQ {
			return unres, nil, false
		}
		if unmet = scalarsOf(n.quota.Guarantees).Sub(n.consumption()); unmet.IsEmpty() {
			return unres, nil, false
		}
	}
	resv = a.rc.resv[:0]
	for _, pl := range ag.poolList {
		if !emptyAt(&pl.free) && resources.IsRoleOrDescendant(n.name, pl.name) {
			resv = append(resv, poolPart{pl, pl.free})
		}
	}
	a.rc.resv = resv
	free := a.rc.unresFree // noted since the last grant on ag
	if quotaStage {
		// guaranteed kinds up to the unmet guarantee; the others only if
		// the headroom holds
		g := n.quota.Guarantees
		var guaranteed, other resources.Resources
		for k, q := range free.Scalars {
			if q <= 0 {
				continue
			}
			if g.Scalars[k] > 0 {
				guaranteed.Scalars[k] = min(q, unmet.Scalars[k])
			} else {
				other.Scalars[k] = q
			}
		}
		for _, e := range free.Extra {
			if g.Scalar(e.Name) > 0 {
				guaranteed = guaranteed.WithScalar(e.Name, min(e.Value, unmet.Scalar(e.Name)))
			} else {
				other = other.WithScalar(e.Name, e.Value)
			}
		}
		if !a.headroomHolds(other) {
			other = resources.Resources{}
		}
		unres = guaranteed.Add(other)
		unres.Ports = free.Ports
	} else {
		unres = free
		if !emptyAt(&a.rc.reqHead) && !a.headroomHolds(scalarsOf(free)) {
			unres = resources.Resources{Ports: free.Ports}
		}
	}
	a.clipToLimits(n, &unres)
	return unres, resv, true
}

// headroomHolds reports whether taking x from the free unreserved
// resources still leaves what unmet guarantees need.
func (a *Allocator) headroomHolds(x resources.Resources) bool {
	if emptyAt(&a.rc.reqHead) || emptyAt(&x) {
		return true
	}
	return a.rc.availHead.Sub(x).Contains(a.rc.reqHead)
}

// clipToLimits shrinks *x so that neither n nor any ancestor consumes
// more than its limit once it holds x.
func (a *Allocator) clipToLimits(n *roleNode, x *resources.Resources) {
	for m := n; m != nil; m = m.parent {
		if !m.hasQ || len(m.quota.Limited) == 0 {
			continue
		}
		if len(m.limExtra) == 0 && len(m.reserved.Extra) == 0 && len(m.unres.Extra) == 0 {
			// m's consumption on the vectors, kind by kind, as
			// consumption would sum it
			for k := resources.Kind(0); k < resources.NumKinds; k++ {
				if !m.limKind[k] {
					continue
				}
				used := m.reserved.Scalars[k] + m.unres.Scalars[k]
				if room := m.quota.Limits.Scalars[k] - used; x.Scalars[k] > room {
					x.Scalars[k] = max(room, 0)
				}
			}
			continue
		}
		used := m.consumption()
		for k := resources.Kind(0); k < resources.NumKinds; k++ {
			if !m.limKind[k] {
				continue
			}
			if room := m.quota.Limits.Scalars[k] - used.Scalars[k]; x.Scalars[k] > room {
				x.Scalars[k] = max(room, 0)
			}
		}
		for _, nm := range m.limExtra {
			room := max(m.quota.Limits.Scalar(nm)-used.Scalar(nm), 0)
			if x.Scalar(nm) > room {
				*x = x.WithScalar(nm, room)
			}
		}
	}
}

// wantsRole reports whether f takes offers for role n: active, the role
// not suppressed, and, with a declared demand, tasks still wanted.
func (a *Allocator) wantsRole(f *framework, n *roleNode) bool {
	return f.active && !f.roleSuppressed(n.name) && !(a.cfg.Mode == Characterized && f.hasDemand && f.want == 0)
}

// granted reports whether f was granted on the current agent for the
// current role already.
func (a *Allocator) granted(f *framework) bool {
	for _, g := range a.rc.granted {
		if g == f.idx {
			return true
		}
	}
	return false
}

// roleGrant allocates unres and the pools in resv on ag to f for role n,
// keeps the books and the headroom, and records the offer.
func (a *Allocator) roleGrant(f *framework, n *roleNode, ag *agent, offer, unres resources.Resources, resv []poolPart, score float64) {
	a.reorderBefore(f, n)
	a.grant(f, ag, offer, 0)
	a.reorderAfter(f)
	a.acctNode(ag, f.idx, n, "", unres, +1)
	var reserved map[string]resources.Resources
	for _, pp := range resv {
		name, r := pp.pool.name, pp.res
		a.acctPart(ag, f.idx, n, name, pp.pool, r, +1)
		if reserved == nil {
			reserved = map[string]resources.Resources{}
		}
		reserved[name] = r // pool values are replaced, never changed in place
	}
	// a grant only adds to consumption: a met guarantee stays met and a
	// headroom of nothing stays nothing, so only unmet ones are redone
	for m := n; m != nil; m = m.parent {
		if m.unmet {
			a.noteUnmet(m)
		}
	}
	rc := &a.rc
	addScalars(&rc.availHead, &unres, -1)
	if root := n.hroot; root != nil && !emptyAt(&root.headroom) {
		rc.reqHead = rc.reqHead.Sub(root.headroom)
		root.headroom = scalarsOf(root.quota.Guarantees).Sub(root.consumption())
		rc.reqHead = rc.reqHead.Add(root.headroom)
	}
	if len(rc.touched) == 0 || rc.touched[len(rc.touched)-1] != n {
		rc.touched = append(rc.touched, n)
	}
	a.trace(f, ag, offer, score)
	f.lastOffer = a.cycles + 1 // what notePlaced stamps, once the cycle is counted
	if !a.mergeRole(f, ag, n, offer, reserved) {
		a.out = append(a.out, Offer{
			Framework: f.id, Agent: ag.id, Resources: offer, // built for this offer; never changed in place
			Reason: a.reason(score), Role: n.name, Reserved: reserved,
		})
	}
}

// mergeRole adds offer to the quota stage's offer to f on ag for role n
// and reports whether there was one: a framework offered part of an agent
// for a role in the quota stage and more in the fair-share stage gets one
// offer with both, as Mesos merges what one cycle offers a framework on
// an agent for a role. The quota stage visits an agent once, so its
// offers on ag are the run of a.out from ag.qfirst to ag.qend; in the
// quota stage mergeRole notes where the offer about to be appended goes.
func (a *Allocator) mergeRole(f *framework, ag *agent, n *roleNode, offer resources.Resources, reserved map[string]resources.Resources) bool {
	rc := &a.rc
	if ag.qcycle != rc.cycle {
		if rc.inQuotaStage {
			ag.qcycle, ag.qfirst, ag.qend = rc.cycle, int32(len(a.out)), int32(len(a.out))+1
		}
		return false // no quota-stage offer on ag this cycle
	}
	for i := ag.qfirst; i < ag.qend; i++ {
		if prev := &a.out[i]; prev.Framework == f.id && prev.Role == n.name {
			prev.Resources = prev.Resources.Add(offer)
			for pool, r := range reserved {
				if prev.Reserved == nil {
					prev.Reserved = map[string]resources.Resources{}
				}
				prev.Reserved[pool] = prev.Reserved[pool].Add(r)
			}
			return true
		}
	}
	if rc.inQuotaStage {
		ag.qend = int32(len(a.out)) + 1
	}
	return false
}
