package allocator

import (
	"fmt"
	"sort"

	"github.com/allot-sched/allot/resources"
)

// Roles, quota and multi-role frameworks (Mesos's hierarchical roles).
//
// The allocator keeps a tree of roles: a node per role named anywhere (a
// framework's role, a weight, a quota, a reservation) and per ancestor of
// each. What the role-aware cycle (rolefill.go) reads of a node is kept
// up to date incrementally while the allocator is in role mode (see
// settleRoleMode); outside it, the fast fill paths run unchanged and a
// role's allocation is derived from its frameworks on demand.

// Quota is a role's guarantee and limit (Mesos's QuotaConfig). Guarantees
// are met first, before any role is offered resources by fair share;
// limits cap what the role consumes (allocated plus reserved, with its
// descendants). Only scalars count.
type Quota struct {
	Guarantees resources.Resources
	Limits     resources.Resources
	// Limited names the resources that have a limit; a resource not named
	// has none, so a limit of 0 (named, absent from Limits) can be told
	// apart from no limit.
	Limited []string
}

// IsEmpty reports whether q guarantees nothing and limits nothing, which
// is how Mesos removes a role's quota.
func (q Quota) IsEmpty() bool {
	return q.Guarantees.Reservable().IsEmpty() && len(q.Limited) == 0
}

// limited reports whether resource name has a limit.
func (q *Quota) limited(name string) bool {
	for _, n := range q.Limited {
		if n == name {
			return true
		}
	}
	return false
}

// RoleState is what Roles reports of one role.
type RoleState struct {
	Name   string
	Weight float64
	Quota  Quota
	// Allocated is what frameworks hold under this role and its
	// descendants (offered or in use).
	Allocated resources.Resources
	// Reserved is what is reserved for this role and its descendants,
	// allocated or not.
	Reserved resources.Resources
	// Frameworks subscribed to exactly this role, sorted.
	Frameworks []string
}

// roleNode is one role in the tree. What the role walk and the sibling
// order read of every role they pass (rolefill.go, rolesort.go) fills the
// first cache line, so that passing over a role costs one line; what a
// grant reads comes next; the quota, read where a role has one, last.
type roleNode struct {
	// per cycle: the shares the sibling order compares
	share, ownShare float64
	parent          *roleNode
	// the agent visit (roleCycle.visit) in which it was marked as holding,
	// or being above, a pool of the agent (poolPath), or being the role of
	// one (poolSelf)
	poolPath, poolSelf uint64
	nameRank           int   // its place in name order (rankRoleNames)
	nsub               int32 // subscriptions in this subtree
	nunmet             int32 // roles in this subtree that are unmet
	unmet              bool  // its own guarantee is not met and it has frameworks
	hasQ               bool
	weight             float64 // its weight, noted for the cycle
	name               string
	kids               []*roleNode // sorted by (share, name) during a role-mode cycle
	fws                []int32     // frameworks subscribed to exactly this role
	orders             []roleOrder // its members by score, per capacity class (roleorder.go)
	// role mode only: what frameworks hold under this subtree (alloc), the
	// unreserved part of it (unres), and what is held by frameworks in
	// exactly this role (own, the share of the role's virtual leaf).
	alloc, own, unres resources.Resources
	// reserved is the reservation totals of this role and its
	// descendants, kept in every mode.
	reserved resources.Resources
	quota    Quota
	// the kinds quota.Limited names, as flags on the well-known kinds and
	// the other names, so that clipping an offer looks up no strings
	limKind  [resources.NumKinds]bool
	limExtra []string
	headroom resources.Resources // unmet guarantee counted in the required headroom
	hroot    *roleNode           // headroomRoot, noted for the cycle
}

// role returns the node of name, creating it and its ancestors.
func (a *Allocator) role(name string) *roleNode {
	if n, ok := a.roleTree[name]; ok {
		return n
	}
	n := &roleNode{name: name}
	if a.roleTree == nil {
		a.roleTree = map[string]*roleNode{}
	}
	a.roleTree[name] = n
	if p := resources.RoleParent(name); p != "" {
		n.parent = a.role(p)
		n.parent.kids = append(n.parent.kids, n)
	} else {
		a.roleTop = append(a.roleTop, n)
	}
	a.roleOrderDirty = true
	return n
}

// consumption is what counts against a role's quota: everything reserved
// under it plus the unreserved resources its subtree holds.
func (n *roleNode) consumption() resources.Resources {
	if len(n.reserved.Extra) == 0 && len(n.unres.Extra) == 0 {
		return resources.Resources{Scalars: n.reserved.Scalars.Add(n.unres.Scalars)}
	}
	return n.reserved.Add(n.unres)
}

// addScalars adds (sign > 0) or takes r's scalars to x, on the vectors
// alone in the common case of no named scalars: the role books are
// updated on every grant, so r is passed by pointer and the common case
// is small enough to inline.
func addScalars(x *resources.Resources, r *resources.Resources, sign int) {
	if len(r.Extra) != 0 || len(x.Extra) != 0 {
		addNamedScalars(x, r, sign)
	} else if sign > 0 {
		addVec(&x.Scalars, &r.Scalars)
	} else {
		subVec(&x.Scalars, &r.Scalars)
	}
}

// addNamedScalars is addScalars where named scalars are involved.
func addNamedScalars(x *resources.Resources, r *resources.Resources, sign int) {
	q := resources.Resources{Scalars: r.Scalars, Extra: r.Extra}
	if sign > 0 {
		*x = x.Add(q)
	} else {
		*x = x.Sub(q)
	}
}

// SetQuota sets role's quota; an empty Quota removes it. It checks what
// Mesos checks: the role name, guarantees within limits, and that the
// guarantees of a parent's children fit in the parent's guarantee (and
// its limit) where it has them, and the errors name the role.
func (a *Allocator) SetQuota(role string, q Quota) error {
	if err := resources.ValidateRole(role); err != nil {
		return fmt.Errorf("set quota: %w", err)
	}
	if role == resources.Unreserved {
		return fmt.Errorf("set quota: role %q cannot have a quota", role)
	}
	q = Quota{Guarantees: scalarsOf(q.Guarantees), Limits: scalarsOf(q.Limits), Limited: sortedUnique(q.Limited)}
	for _, e := range q.Limits.Extra {
		if !q.limited(e.Name) {
			q.Limited = sortedUnique(append(q.Limited, e.Name))
		}
	}
	for k, v := range q.Limits.Scalars {
		if v > 0 && !q.limited(resources.KindNames[k]) {
			q.Limited = sortedUnique(append(q.Limited, resources.KindNames[k]))
		}
	}
	if name, over := guaranteeAboveLimit(q.Guarantees, q); over {
		return fmt.Errorf("set quota for role %q: guarantee of %s (%s) is above its limit (%s)", role, name, q.Guarantees.Scalar(name), q.Limits.Scalar(name))
	}
	if err := a.checkQuotaTree(role, q); err != nil {
		return err
	}
	n := a.role(role)
	n.quota, n.hasQ = q, !q.IsEmpty()
	n.limKind, n.limExtra = [resources.NumKinds]bool{}, nil
	for _, nm := range q.Limited {
		if k, ok := resources.KindOf(nm); ok {
			n.limKind[k] = true
		} else {
			n.limExtra = append(n.limExtra, nm)
		}
	}
	if n.hasQ {
		if a.quotas == nil {
			a.quotas = map[string]bool{}
		}
		a.quotas[role] = true
	} else {
		n.quota = Quota{}
		delete(a.quotas, role)
	}
	a.settleRoleMode()
	return nil
}

// checkQuotaTree checks role's new quota q against its parent's and its
// children's: where a parent has a guarantee its children's guarantees
// sum to no more than it, and no child's guarantee or limit exceeds its
// parent's limit.
func (a *Allocator) checkQuotaTree(role string, q Quota) error {
	quotaOf := func(name string) Quota {
		if name == role {
			return q
		}
		if n, ok := a.roleTree[name]; ok && n.hasQ {
			return n.quota
		}
		return Quota{}
	}
	check := func(parent string, kids []string) error {
		pq := quotaOf(parent)
		var sum resources.Resources
		for _, k := range kids {
			kq := quotaOf(k)
			sum = sum.Add(kq.Guarantees)
			if name, over := guaranteeAboveLimit(kq.Guarantees, pq); over {
				return fmt.Errorf("set quota for role %q: guarantee of %s for role %q (%s) is above the limit of its parent %q (%s)", role, name, k, kq.Guarantees.Scalar(name), parent, pq.Limits.Scalar(name))
			}
			for _, name := range kq.Limited {
				if pq.limited(name) && kq.Limits.Scalar(name) > pq.Limits.Scalar(name) {
					return fmt.Errorf("set quota for role %q: limit of %s for role %q (%s) is above the limit of its parent %q (%s)", role, name, k, kq.Limits.Scalar(name), parent, pq.Limits.Scalar(name))
				}
			}
		}
		if pq.Guarantees.IsEmpty() {
			return nil
		}
		if name, over := guaranteeAboveGuarantee(sum, pq.Guarantees); over {
			return fmt.Errorf("set quota for role %q: the guarantees of the children of role %q sum to %s of %s, above its guarantee (%s)", role, parent, sum.Scalar(name), name, pq.Guarantees.Scalar(name))
		}
		return nil
	}
	if p := resources.RoleParent(role); p != "" {
		if err := check(p, a.childNames(p, role)); err != nil {
			return err
		}
	}
	return check(role, a.childNames(role, ""))
}

// childNames lists the children of parent that exist, plus extra if it is
// one of them and not yet a node.
func (a *Allocator) childNames(parent, extra string) []string {
	var out []string
	if n, ok := a.roleTree[parent]; ok {
		for _, k := range n.kids {
			out = append(out, k.name)
		}
	}
	if extra != "" {
		if _, ok := a.roleTree[extra]; !ok {
			out = append(out, extra)
		}
	}
	return out
}

// guaranteeAboveLimit names a resource whose guarantee g exceeds q's limit.
func guaranteeAboveLimit(g resources.Resources, q Quota) (string, bool) {
	for k, v := range g.Scalars {
		name := resources.KindNames[k]
		if v > 0 && q.limited(name) && v > q.Limits.Scalars[k] {
			return name, true
		}
	}
	for _, e := range g.Extra {
		if q.limited(e.Name) && e.Value > q.Limits.Scalar(e.Name) {
			return e.Name, true
		}
	}
	return "", false
}

// guaranteeAboveGuarantee names a resource where sum exceeds g.
func guaranteeAboveGuarantee(sum, g resources.Resources) (string, bool) {
	for k, v := range sum.Scalars {
		if v > g.Scalars[k] {
			return resources.KindNames[k], true
		}
	}
	for _, e := range sum.Extra {
		if e.Value > g.Scalar(e.Name) {
			return e.Name, true
		}
	}
	return "", false
}

// scalarsOf returns r's reservable scalars: quota counts nothing else.
func scalarsOf(r resources.Resources) resources.Resources {
	r = r.Reservable()
	return resources.Resources{Scalars: r.Scalars, Extra: append([]resources.Named(nil), r.Extra...)}
}

// scalarNames lists the scalars r has.
func scalarNames(r resources.Resources) []string {
	var out []string
	for k, q := range r.Scalars {
		if q > 0 {
			out = append(out, resources.KindNames[k])
		}
	}
	for _, e := range r.Extra {
		out = append(out, e.Name)
	}
	return out
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := append([]string(nil), s...)
	sort.Strings(out)
	w := 1
	for i := 1; i < len(out); i++ {
		if out[i] != out[w-1] {
			out[w] = out[i]
			w++
		}
	}
	return out[:w]
}

// Quotas returns every role's quota, by role.
func (a *Allocator) Quotas() map[string]Quota {
	out := map[string]Quota{}
	for name := range a.quotas {
		q := a.roleTree[name].quota
		out[name] = Quota{Guarantees: q.Guarantees.Clone(), Limits: q.Limits.Clone(), Limited: append([]string(nil), q.Limited...)}
	}
	return out
}

// Roles lists every role with a weight, a quota, a reservation or a
// framework, and their ancestors, sorted by name.
func (a *Allocator) Roles() []RoleState {
	alloc := a.roleAllocations()
	keep := map[string]bool{}
	mark := func(name string) {
		keep[name] = true
		for _, p := range resources.RoleAncestors(name) {
			keep[p] = true
		}
	}
	for name := range a.weights {
		mark(name)
	}
	for name, n := range a.roleTree {
		if n.hasQ || len(n.fws) > 0 || !n.reserved.IsEmpty() {
			mark(name)
		}
	}
	for name := range alloc {
		mark(name)
	}
	out := make([]RoleState, 0, len(keep))
	for name := range keep {
		st := RoleState{Name: name, Weight: a.weight(name), Allocated: alloc[name]}
		if n, ok := a.roleTree[name]; ok {
			if n.hasQ {
				st.Quota = Quota{Guarantees: n.quota.Guarantees.Clone(), Limits: n.quota.Limits.Clone(), Limited: append([]string(nil), n.quota.Limited...)}
			}
			st.Reserved = n.reserved.Clone()
			for _, i := range n.fws {
				st.Frameworks = append(st.Frameworks, a.fws[i].id)
			}
			sort.Strings(st.Frameworks)
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// roleAllocations is what each role's subtree holds: from the nodes in
// role mode, else from the frameworks (each in its one role, unreserved).
func (a *Allocator) roleAllocations() map[string]resources.Resources {
	out := map[string]resources.Resources{}
	if a.rm {
		for name, n := range a.roleTree {
			if !n.alloc.IsEmpty() {
				out[name] = n.alloc.Clone()
			}
		}
		return out
	}
	for _, f := range a.fws {
		if f == nil || f.alloc.IsEmpty() {
			continue
		}
		out[f.role] = out[f.role].Add(f.alloc)
		for _, p := range resources.RoleAncestors(f.role) {
			out[p] = out[p].Add(f.alloc)
		}
	}
	return out
}
