package master

// Reserved resources in offers and back: the allocator offers each
// reservation pool by quantity (allocator.Offer.Reserved); the master
// makes the exact resources of it, Resource.reservations (principal,
// labels, refinement stack) and disk.persistence included, as Mesos fills
// them, and returns what comes back to the pool it came from.

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/resources"
)

// reservationsChangedLocked gives the allocator the agent's reserved
// quantities by role. Caller holds m.mu.
func (m *Master) reservationsChangedLocked(a *agentState) {
	if !a.inAlloc {
		return
	}
	m.allocOK("set_reservations", m.alloc.SetReservations(a.rec.Id, a.reservedQuantities()), "agent_id", a.rec.Id)
}

// reserveOfferLocked fills the exact reserved resources of o, which the
// allocator offered from the pools in reserved: what of each pool neither
// a live task nor another outstanding offer holds. Caller holds m.mu.
func (m *Master) reserveOfferLocked(o *offer, a *agentState, reserved map[string]resources.Resources) {
	if len(reserved) == 0 {
		return
	}
	o.reserved = make(map[string]resources.Resources, len(reserved))
	for role, q := range reserved {
		o.reserved[role] = q.Clone()
	}
	used, _ := m.usedExactLocked(a.rec.Id)
	free := a.resv.total.Minus(used...)
	for _, other := range a.offers {
		if other != o {
			free = free.Minus(other.exact...)
		}
	}
	for role, q := range reserved {
		var pool mesos.Resources
		for i := range free {
			if free[i].ReservationRole() == role {
				pool = append(pool, free[i])
			}
		}
		o.exact = append(o.exact, resources.Take(pool, q)...)
	}
}

// unreservedPart is what of o is unreserved.
func (o *offer) unreservedPart() resources.Resources {
	r := o.res
	for _, q := range o.reserved {
		r = r.Sub(q)
	}
	return r
}

// mesosResources is o's resources as the framework sees them: the
// unreserved quantities, then the exact reserved resources, each with
// allocation_info when allocRole is set (MULTI_ROLE frameworks).
func (o *offer) mesosResources(allocRole string) []mesos.Resource {
	if o.reserved == nil {
		return resources.ToMesos(o.res, "", allocRole)
	}
	out := resources.ToMesos(o.unreservedPart(), "", allocRole)
	for _, r := range o.exact {
		if allocRole != "" {
			role := allocRole
			r.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &role}
		}
		out = append(out, r)
	}
	return out
}

// reservedOfferFields is offerFields for an offer with reserved
// resources: encoded afresh each time, as such offers differ by their
// reservations' labels and volumes.
func (w *agentWire) reservedOfferFields(o *offer, allocRole string) []byte {
	res := o.mesosResources(allocRole)
	n := len(w.head) + len(w.tail)
	for i := range res {
		n += sizeMessageField(&res[i])
	}
	enc := append(make([]byte, 0, n), w.head...)
	for i := range res {
		enc = appendMessage(enc, tagOfferRes, &res[i])
	}
	return append(enc, w.tail...)
}

// byPool splits exact resources into quantities by reservation role.
func byPool(list []mesos.Resource) map[string]resources.Resources {
	out, err := resources.FromMesos(list)
	if err != nil {
		return nil
	}
	return out
}

// recoverPooledLocked returns total to the allocator for framework fwID on
// agentID, allocated to role (a MULTI_ROLE framework's; "" for the
// framework's one role): the parts in reserved to their pools, the rest as
// unreserved. A part the allocator does not count in its pool (it took the
// agent back with the tasks as unreserved) is returned unreserved. Caller
// holds m.mu.
func (m *Master) recoverPooledLocked(fwID, agentID, role string, total resources.Resources, reserved map[string]resources.Resources, fl *allocator.Filter) {
	rest := total
	for pool, q := range reserved {
		if pool == resources.Unreserved || q.IsEmpty() {
			continue
		}
		rest = rest.Sub(q)
		if err := m.recoverPoolAs(fwID, agentID, role, pool, q, fl); err != nil {
			rest = rest.Add(q)
		}
	}
	if !rest.IsEmpty() {
		m.allocOK("recover", m.recoverAs(fwID, agentID, role, rest, fl), "framework_id", fwID, "agent_id", agentID)
	}
}

// recoverPoolAs returns q of pool's reservation to the allocator, booked
// under allocation role where the framework holds it there.
func (m *Master) recoverPoolAs(fwID, agentID, role, pool string, q resources.Resources, fl *allocator.Filter) error {
	if role != "" && m.alloc.RecoverFor(fwID, agentID, role, pool, q, fl) == nil {
		return nil
	}
	return m.alloc.RecoverReserved(fwID, agentID, pool, q, fl)
}

// recoverOfferLocked returns an offer's resources with filter fl.
// Caller holds m.mu.
func (m *Master) recoverOfferLocked(o *offer, fl *allocator.Filter) {
	if o.reserved == nil {
		if err := m.recoverAs(o.fw, o.agent, o.role, o.res, fl); err != nil {
			// The id is built only for the log: a decline of every offer
			// of a cycle comes through here.
			m.allocOK("recover", err, "framework_id", o.fw, "agent_id", o.agent, "offer_id", o.id())
		}
		return
	}
	m.recoverPooledLocked(o.fw, o.agent, o.role, o.res, o.reserved, fl)
}

// recoverTaskLocked returns an ended task's resources to their pools,
// booked back under the role they were allocated to (a MULTI_ROLE
// framework's task carries it in allocation_info), so that the role
// accounting of a framework in several roles stays exact. Caller holds
// m.mu.
func (m *Master) recoverTaskLocked(fwID, agentID string, t *task) {
	m.recoverPooledLocked(fwID, agentID, allocRoleOf(t.info.Resources), t.res, byPool(t.info.Resources), nil)
}

// allocRoleOf is the allocation role of a task's resources ("" where none
// says: a framework in one role).
func allocRoleOf(list []mesos.Resource) string {
	for i := range list {
		if role := list[i].GetAllocationInfo().GetRole(); role != "" {
			return role
		}
	}
	return ""
}
