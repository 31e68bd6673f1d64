package master

import (
	"net/http"
	"slices"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/resources"
)

// MULTI_ROLE frameworks: a framework with the MULTI_ROLE capability
// subscribes with FrameworkInfo.roles and is offered resources for each
// role, every offer's allocation_info naming the one it is for. Its roles
// may change with UPDATE_FRAMEWORK or a re-subscription, and SUPPRESS,
// REVIVE and suppressed_roles act per role, as in Mesos. A framework
// without the capability has the one role of FrameworkInfo.role.

// validateFrameworkRoles checks the roles info asks for, as Mesos's
// framework validation does: each a valid role name, none twice, and
// every suppressed role one of them. what names the call.
func validateFrameworkRoles(what string, info *mesos.FrameworkInfo, suppressed []string) error {
	roles := frameworkRoles(info)
	seen := map[string]bool{}
	for _, r := range roles {
		if err := resources.ValidateRole(r); err != nil {
			return api.Errorf(http.StatusBadRequest, "%s: invalid role %q: %v", what, r, err)
		}
		if seen[r] {
			return api.Errorf(http.StatusBadRequest, "%s: 'FrameworkInfo.roles' contains duplicate items", what)
		}
		seen[r] = true
	}
	for _, r := range suppressed {
		if !seen[r] {
			return api.Errorf(http.StatusBadRequest, "%s: suppressed role '%s' is not contained in the list of roles", what, r)
		}
	}
	return nil
}

// allRoles is every role fw is offered resources for.
func (fw *framework) allRoles() []string {
	if fw.multiRole && len(fw.info.Roles) > 0 {
		return fw.info.Roles
	}
	return []string{fw.role}
}

// addFrameworkLocked adds fw to the allocator with all its roles. Caller
// holds m.mu.
func (m *Master) addFrameworkLocked(fw *framework) error {
	if err := m.alloc.AddFramework(fw.id, fw.role); err != nil {
		return err
	}
	if roles := fw.allRoles(); len(roles) > 1 {
		return m.alloc.SetFrameworkRoles(fw.id, roles)
	}
	return nil
}

// changeRolesLocked moves fw to the roles of info (UPDATE_FRAMEWORK, a
// re-subscription): each role it did not hold must pass allow (nil: the
// caller authorized every role already), and its offers for roles it
// leaves are rescinded, as Mesos rescinds them. Caller holds m.mu; fw's
// info is not yet info.
func (m *Master) changeRolesLocked(fw *framework, info mesos.FrameworkInfo, allow func(role string) error) error {
	probe := &framework{id: fw.id}
	probe.setInfo(info)
	next, cur := probe.allRoles(), fw.allRoles()
	if slices.Equal(next, cur) {
		return nil
	}
	for _, r := range next {
		if allow != nil && !slices.Contains(cur, r) {
			if err := allow(r); err != nil {
				return err
			}
		}
	}
	if err := m.alloc.SetFrameworkRoles(fw.id, next); err != nil {
		return api.Errorf(http.StatusBadRequest, "changing roles to %v: %v", next, err)
	}
	for _, o := range fw.offers {
		if !slices.Contains(next, m.offerRoleLocked(fw, o)) {
			m.removeOfferLocked(o, true, nil)
			m.sendFrameworkLocked(fw, rescindEvent(o.id()))
		}
	}
	return nil
}

// offerRoleLocked is the role o was allocated to. Caller holds m.mu.
func (m *Master) offerRoleLocked(fw *framework, o *offer) string {
	if o.role != "" {
		return o.role
	}
	return fw.role
}

// suppressRolesLocked is SUPPRESS: roles (none: every role of fw) get no
// offers until revived. Caller holds m.mu.
func (m *Master) suppressRolesLocked(fw *framework, roles []string) {
	m.allocOK("suppress", m.alloc.SuppressRoles(fw.id, roles), "framework_id", fw.id)
	if fw.suppressedRoles == nil {
		fw.suppressedRoles = map[string]bool{}
	}
	for _, r := range orAll(fw, roles) {
		fw.suppressedRoles[r] = true
	}
	fw.suppressed = fw.allSuppressed()
}

// reviveRolesLocked is REVIVE: roles (none: every role of fw) are offered
// again, their decline filters cleared. Caller holds m.mu.
func (m *Master) reviveRolesLocked(fw *framework, roles []string) {
	m.allocOK("revive", m.alloc.ReviveRoles(fw.id, roles), "framework_id", fw.id)
	for _, r := range orAll(fw, roles) {
		delete(fw.suppressedRoles, r)
	}
	fw.suppressed = fw.allSuppressed()
}

// setSuppressedLocked makes exactly roles suppressed and every other role
// of fw revived, as SUBSCRIBE's and UPDATE_FRAMEWORK's suppressed_roles
// do. Caller holds m.mu.
func (m *Master) setSuppressedLocked(fw *framework, roles []string) {
	var revive []string
	for _, r := range fw.allRoles() {
		if !slices.Contains(roles, r) {
			revive = append(revive, r)
		}
	}
	fw.suppressedRoles = map[string]bool{}
	if len(revive) > 0 {
		m.reviveRolesLocked(fw, revive)
	}
	if len(roles) > 0 {
		m.suppressRolesLocked(fw, roles)
	}
	fw.suppressed = fw.allSuppressed()
}

func orAll(fw *framework, roles []string) []string {
	if len(roles) == 0 {
		return fw.allRoles()
	}
	return roles
}

// allSuppressed reports whether no role of fw is offered resources.
func (fw *framework) allSuppressed() bool {
	for _, r := range fw.allRoles() {
		if !fw.suppressedRoles[r] {
			return false
		}
	}
	return true
}

// recoverAs returns r, allocated to fwID on agentID for role, to the
// allocator's books of that role ("": whichever of the framework's roles
// holds it, for resources whose allocation role the master does not know,
// as a task's recovered after a failover). Where the allocator's books
// put them under another of the framework's roles (it attributes what a
// framework holds to its first role when it starts keeping books by role)
// they are recovered from whichever role holds them: returned somewhere
// rather than held forever. Caller holds m.mu.
func (m *Master) recoverAs(fwID, agentID, role string, r resources.Resources, fl *allocator.Filter) error {
	if role != "" && m.alloc.RecoverFor(fwID, agentID, role, "", r, fl) == nil {
		return nil
	}
	return m.alloc.Recover(fwID, agentID, r, fl)
}

// sameRole checks that o, accepted with p's offers so far, was allocated
// to the same role as they were: one ACCEPT uses one role's resources, as
// Mesos requires of aggregated offers. Caller holds m.mu.
func (p *acceptPlan) sameRole(fw *framework, o *offer) error {
	role := o.role
	if role == "" {
		role = fw.role
	}
	if len(p.offers) > 0 && role != p.role {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: aggregated offers must be allocated to the same role (%q and %q)", p.role, role)
	}
	p.role = role
	return nil
}

// stampRole gives a MULTI_ROLE framework's task (or executor) resources
// the allocation_info of the offers they come from, where the framework
// left it out, and refuses resources allocated to another role. what
// names them in the error.
func (c *taskChecker) stampRole(what string, list []mesos.Resource) error {
	if !c.fw.multiRole || c.role == "" {
		return nil
	}
	for i := range list {
		ai := list[i].AllocationInfo
		switch {
		case ai == nil || ai.Role == nil:
			role := c.role
			list[i].AllocationInfo = &mesos.Resource_AllocationInfo{Role: &role}
		case *ai.Role != c.role:
			return api.Errorf(http.StatusBadRequest, "ACCEPT: %s: resource %q is allocated to role %q, but the offers are allocated to %q", what, list[i].Name, *ai.Role, c.role)
		}
	}
	return nil
}
