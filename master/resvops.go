package master

// The reservation and volume operations, from operators (RESERVE_RESOURCES,
// UNRESERVE_RESOURCES, CREATE_VOLUMES, DESTROY_VOLUMES, GROW_VOLUME,
// SHRINK_VOLUME) and from frameworks (the offer operations of the same
// names in ACCEPT, resvaccept.go). Both end in applyOperationLocked, which
// changes the agent's exact resources, replicates and checkpoints them and
// tells the allocator.

import (
	"fmt"
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/resources"
)

// isResourceCall reports whether t is one of the operator calls served by
// operatorResources.
func isResourceCall(t mmaster.Call_Type) bool {
	switch t {
	case mmaster.Call_RESERVE_RESOURCES, mmaster.Call_UNRESERVE_RESOURCES, mmaster.Call_CREATE_VOLUMES,
		mmaster.Call_DESTROY_VOLUMES, mmaster.Call_GROW_VOLUME, mmaster.Call_SHRINK_VOLUME:
		return true
	}
	return false
}

// operatorEmptyStatus is the status of an operator call answered without
// a body: 202 for the resource calls, as Mesos answers them, else 200.
func operatorEmptyStatus(t mmaster.Call_Type) int {
	if isResourceCall(t) {
		return http.StatusAccepted
	}
	return http.StatusOK
}

// operatorResources serves the operator's reservation and volume calls:
// decoded into the offer operation of the same meaning, authorized and
// checked as Mesos checks them, then applied. Takes m.mu.
func (m *Master) operatorResources(who auth.Subject, call *mmaster.Call) (*mmaster.Response, error) {
	agentID, op, err := operatorOperation(call)
	if err != nil {
		return nil, err
	}
	name := call.Type.String()
	if err := principalMatches(who, op, name); err != nil {
		return nil, err
	}
	if err := m.authorizeOperation(who, op); err != nil {
		return nil, err
	}
	m.mu.Lock()
	a := m.agents[agentID]
	if a == nil || a.rec == nil {
		m.mu.Unlock()
		return nil, api.Errorf(http.StatusBadRequest, "%s: no agent found with id %q", name, agentID)
	}
	// What an operator converts must be neither in use nor offered: the
	// agent's offers are rescinded first, as Mesos rescinds the offers
	// holding what the operation needs.
	m.removeAgentOffersLocked(agentID, true)
	used, users := m.usedExactLocked(agentID)
	free := a.resv.total.Minus(used...)
	_, err = m.applyOperationLocked(a, op, name, free, users)
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	m.triggerAllocation()
	return nil, nil
}

// operatorOperation turns an operator call into its agent and offer
// operation; a call without its body is a 400 naming the field.
func operatorOperation(call *mmaster.Call) (string, *mesos.Offer_Operation, error) {
	missing := func(field string) error {
		return api.Errorf(http.StatusBadRequest, "%s call without %s", call.Type, field)
	}
	op := &mesos.Offer_Operation{}
	var agent *mesos.AgentID
	switch call.Type {
	case mmaster.Call_RESERVE_RESOURCES:
		c := call.ReserveResources
		if c == nil {
			return "", nil, missing("reserve_resources")
		}
		op.Type, op.Reserve, agent = mesos.Offer_Operation_RESERVE, &mesos.Offer_Operation_Reserve{Source: c.Source, Resources: c.Resources}, &c.AgentID
	case mmaster.Call_UNRESERVE_RESOURCES:
		c := call.UnreserveResources
		if c == nil {
			return "", nil, missing("unreserve_resources")
		}
		op.Type, op.Unreserve, agent = mesos.Offer_Operation_UNRESERVE, &mesos.Offer_Operation_Unreserve{Resources: c.Resources}, &c.AgentID
	case mmaster.Call_CREATE_VOLUMES:
		c := call.CreateVolumes
		if c == nil {
			return "", nil, missing("create_volumes")
		}
		op.Type, op.Create, agent = mesos.Offer_Operation_CREATE, &mesos.Offer_Operation_Create{Volumes: c.Volumes}, &c.AgentID
	case mmaster.Call_DESTROY_VOLUMES:
		c := call.DestroyVolumes
		if c == nil {
			return "", nil, missing("destroy_volumes")
		}
		op.Type, op.Destroy, agent = mesos.Offer_Operation_DESTROY, &mesos.Offer_Operation_Destroy{Volumes: c.Volumes}, &c.AgentID
	case mmaster.Call_GROW_VOLUME:
		c := call.GrowVolume
		if c == nil {
			return "", nil, missing("grow_volume")
		}
		op.Type, op.GrowVolume, agent = mesos.Offer_Operation_GROW_VOLUME, &mesos.Offer_Operation_GrowVolume{Volume: c.Volume, Addition: c.Addition}, c.AgentID
	case mmaster.Call_SHRINK_VOLUME:
		c := call.ShrinkVolume
		if c == nil {
			return "", nil, missing("shrink_volume")
		}
		op.Type, op.ShrinkVolume, agent = mesos.Offer_Operation_SHRINK_VOLUME, &mesos.Offer_Operation_ShrinkVolume{Volume: c.Volume, Subtract: c.Subtract}, c.AgentID
	}
	if agent.GetValue() == "" {
		return "", nil, missing("agent_id")
	}
	return agent.GetValue(), op, nil
}

// principalMatches applies Mesos's rule that what an authenticated caller
// reserves or creates carries its own principal, if any.
func principalMatches(who auth.Subject, op *mesos.Offer_Operation, name string) error {
	if !who.Authenticated {
		return nil
	}
	switch op.Type {
	case mesos.Offer_Operation_RESERVE:
		for _, r := range op.Reserve.Resources {
			if n := len(r.Reservations); n > 0 && r.Reservations[n-1].Principal != nil && r.Reservations[n-1].GetPrincipal() != who.Principal {
				return api.Errorf(http.StatusBadRequest, "%s: a reserve operation was attempted by authenticated principal %q, which does not match a reserved resource in the request with principal %q",
					name, who.Principal, r.Reservations[n-1].GetPrincipal())
			}
		}
	case mesos.Offer_Operation_CREATE:
		for _, v := range op.Create.Volumes {
			if p := v.GetDisk().GetPersistence(); p != nil && p.Principal != nil && p.GetPrincipal() != who.Principal {
				return api.Errorf(http.StatusBadRequest, "%s: a create operation was attempted by authenticated principal %q, which does not match a persistent volume in the request with principal %q",
					name, who.Principal, p.GetPrincipal())
			}
		}
	}
	return nil
}

// authorizeOperation asks the ACLs about every resource op touches, with
// Mesos's action and object for each operation.
func (m *Master) authorizeOperation(who auth.Subject, op *mesos.Offer_Operation) error {
	check := func(act auth.Action, list []mesos.Resource, object func(*mesos.Resource) string) error {
		for i := range list {
			if err := m.authorize(who, act, object(&list[i]), false); err != nil {
				return err
			}
		}
		return nil
	}
	role := func(r *mesos.Resource) string { return r.ReservationRole() }
	switch op.Type {
	case mesos.Offer_Operation_RESERVE:
		return check(auth.ReserveResources, op.Reserve.Resources, role)
	case mesos.Offer_Operation_UNRESERVE:
		return check(auth.UnreserveResources, op.Unreserve.Resources, func(r *mesos.Resource) string {
			if n := len(r.Reservations); n > 0 {
				return r.Reservations[n-1].GetPrincipal()
			}
			return ""
		})
	case mesos.Offer_Operation_CREATE:
		return check(auth.CreateVolumes, op.Create.Volumes, role)
	case mesos.Offer_Operation_DESTROY:
		return check(auth.DestroyVolumes, op.Destroy.Volumes, func(r *mesos.Resource) string {
			return r.GetDisk().GetPersistence().GetPrincipal()
		})
	case mesos.Offer_Operation_GROW_VOLUME:
		return check(auth.ResizeVolume, []mesos.Resource{op.GrowVolume.Volume}, role)
	case mesos.Offer_Operation_SHRINK_VOLUME:
		return check(auth.ResizeVolume, []mesos.Resource{op.ShrinkVolume.Volume}, role)
	}
	return nil
}

// applyOperationLocked converts what op consumes of free (the exact
// resources the caller may convert) and makes the result the agent's:
// replicated, sent to the agent, given to the allocator. users names the
// task using each persistent volume in use; such a volume is neither
// destroyed nor resized. It returns the conversion. Caller holds m.mu.
func (m *Master) applyOperationLocked(a *agentState, op *mesos.Offer_Operation, name string, free mesos.Resources, users map[string]string) (resources.Conversion, error) {
	conv, err := resources.Convert(a.resv.total, op)
	if err != nil {
		return conv, api.Errorf(http.StatusBadRequest, "%s: %v", name, err)
	}
	if op.Type == mesos.Offer_Operation_DESTROY || op.Type == mesos.Offer_Operation_GROW_VOLUME || op.Type == mesos.Offer_Operation_SHRINK_VOLUME {
		for i := range conv.Consumed {
			if user, busy := users[volumeName(&conv.Consumed[i])]; busy && conv.Consumed[i].IsPersistentVolume() {
				return conv, api.Errorf(http.StatusBadRequest, "%s: persistent volume %s is in use by %s; a volume in use cannot be destroyed or resized",
					name, volumeName(&conv.Consumed[i]), user)
			}
		}
	}
	if err := resources.Holds(free, conv.Consumed); err != nil {
		return conv, api.Errorf(http.StatusConflict, "%s: %v", name, err)
	}
	total, err := conv.Apply(a.resv.total)
	if err != nil {
		return conv, api.Errorf(http.StatusConflict, "%s: %v", name, err)
	}
	a.resv.total = total
	m.replicateResvLocked(a)
	m.reservationsChangedLocked(a)
	m.log.Info().Str("agent_id", a.rec.Id).Str("operation", name).Str("consumed", fmt.Sprint(conv.Consumed)).
		Str("converted", fmt.Sprint(conv.Converted)).Msg("agent resources converted")
	return conv, nil
}
