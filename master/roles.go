package master

import (
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/resources"
)

// Roles as the operator sees them: GET_ROLES (Mesos's v1 Role: name,
// weight, frameworks, resources allocated) and GET /roles (Mesos's /roles
// JSON, with quota and reservations). Both list what the allocator knows:
// every role with a weight, quota, reservation or framework, and the
// ancestors of each, filtered by view_roles.

// visibleRolesLocked is the allocator's roles who may view. Caller holds
// m.mu.
func (m *Master) visibleRolesLocked(who auth.Subject) []allocator.RoleState {
	var out []allocator.RoleState
	for _, r := range m.alloc.Roles() {
		if m.authorize(who, auth.ViewRoles, r.Name, true) == nil {
			out = append(out, r)
		}
	}
	return out
}

// getRolesLocked answers GET_ROLES for who. Caller holds m.mu.
func (m *Master) getRolesLocked(who auth.Subject) *mmaster.Response_GetRoles {
	out := &mmaster.Response_GetRoles{Roles: []mesos.Role{}}
	for _, r := range m.visibleRolesLocked(who) {
		role := mesos.Role{Name: r.Name, Weight: r.Weight, Resources: resources.ToMesos(r.Allocated, "", "")}
		for _, id := range r.Frameworks {
			role.Frameworks = append(role.Frameworks, mesos.FrameworkID{Value: id})
		}
		out.Roles = append(out.Roles, role)
	}
	return out
}

// rolesDocLocked is GET /roles for who. Caller holds m.mu.
func (m *Master) rolesDocLocked(who auth.Subject) operator.Roles {
	doc := operator.Roles{Roles: []operator.Role{}}
	for _, r := range m.visibleRolesLocked(who) {
		role := operator.Role{Name: r.Name, Weight: r.Weight, Frameworks: r.Frameworks,
			Allocated: stateScalars(r.Allocated), Resources: stateScalars(r.Allocated), Reserved: stateScalars(r.Reserved),
			Quota: operator.RoleQuota{Role: r.Name, Guarantee: stateScalars(r.Quota.Guarantees), Limit: map[string]float64{}}}
		for _, name := range r.Quota.Limited {
			role.Quota.Limit[name] = r.Quota.Limits.Scalar(name).Units()
		}
		if role.Frameworks == nil {
			role.Frameworks = []string{}
		}
		doc.Roles = append(doc.Roles, role)
	}
	return doc
}

// handleRoles serves GET /roles. Takes m.mu.
func (m *Master) handleRoles(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	doc := m.rolesDocLocked(auth.SubjectFrom(r.Context()))
	m.mu.Unlock()
	writeJSON(w, doc)
}
