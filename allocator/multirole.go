package allocator

import (
	"fmt"
	"strings"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/resources"
)

// MULTI_ROLE frameworks: a framework subscribes to several roles and is
// offered resources for each, every offer saying which (Offer.Role).
// Suppression is per role, as on Mesos's wire; a framework all of whose
// roles are suppressed is suppressed, which is what the fast fill paths
// read.

// SetFrameworkRoles replaces the roles framework id is subscribed to; the
// first role's weight is the framework's weight in the criteria. Each role
// must be valid; an empty list means "*". Suppression of roles it keeps is
// kept; what it holds for a role it leaves stays allocated to that role
// until recovered, as in Mesos.
func (a *Allocator) SetFrameworkRoles(id string, roles []string) error {
	f, err := a.framework(id)
	if err != nil {
		return fmt.Errorf("set framework roles: %w", err)
	}
	if len(roles) == 0 {
		roles = []string{resources.Unreserved}
	}
	var uniq []string
	seen := map[string]bool{}
	for _, r := range roles {
		if err := resources.ValidateRole(r); err != nil {
			return fmt.Errorf("set roles of framework %q: %w", id, err)
		}
		if !seen[r] {
			seen[r] = true
			uniq = append(uniq, r)
		}
	}
	a.leaveSets(f)
	a.unsubscribe(f)
	a.subscribe(f, uniq)
	f.role = uniq[0]
	for r := range f.roff {
		if !seen[r] {
			delete(f.roff, r)
		}
	}
	a.frameworkChanged(f)
	a.settleRoleMode()
	return nil
}

// subscribe records f in each of roles.
func (a *Allocator) subscribe(f *framework, roles []string) {
	f.roles = roles
	for _, r := range roles {
		n := a.role(r)
		n.fws = append(n.fws, f.idx)
		for m := n; m != nil; m = m.parent {
			m.nsub++
		}
		if strings.Contains(r, "/") {
			a.nHier++
		}
	}
	if len(roles) > 1 {
		a.nMulti++
	}
}

// unsubscribe takes f out of every role it is subscribed to.
func (a *Allocator) unsubscribe(f *framework) {
	for _, r := range f.roles {
		n := a.roleTree[r]
		for i, m := range n.fws {
			if m == f.idx {
				n.fws = append(n.fws[:i], n.fws[i+1:]...)
				break
			}
		}
		for m := n; m != nil; m = m.parent {
			m.nsub--
		}
		if strings.Contains(r, "/") {
			a.nHier--
		}
	}
	if len(f.roles) > 1 {
		a.nMulti--
	}
	f.roles = nil
}

// roleSuppressed reports whether f takes no offers for role.
func (f *framework) roleSuppressed(role string) bool {
	return f.suppressed || len(f.roff) > 0 && f.roff[role]
}

// SuppressRoles stops offers to framework id for roles (all of its roles
// when roles is empty) until they are revived. A role it is not
// subscribed to is an error that names it.
func (a *Allocator) SuppressRoles(id string, roles []string) error {
	f, err := a.framework(id)
	if err != nil {
		return fmt.Errorf("suppress: %w", err)
	}
	if len(roles) == 0 {
		return a.Suppress(id)
	}
	if err := f.checkSubscribed(roles); err != nil {
		return fmt.Errorf("suppress: %w", err)
	}
	if f.roff == nil {
		f.roff = map[string]bool{}
	}
	for _, r := range roles {
		f.roff[r] = true
	}
	for _, r := range f.roles {
		if !f.roff[r] {
			return nil
		}
	}
	return a.Suppress(id)
}

// ReviveRoles resumes offers to framework id for roles (all of its roles
// when roles is empty) and clears its filters.
func (a *Allocator) ReviveRoles(id string, roles []string) error {
	f, err := a.framework(id)
	if err != nil {
		return fmt.Errorf("revive: %w", err)
	}
	if len(roles) == 0 {
		return a.Revive(id)
	}
	if err := f.checkSubscribed(roles); err != nil {
		return fmt.Errorf("revive: %w", err)
	}
	if f.suppressed {
		// suppressed as a whole: every other role stays suppressed
		f.roff = map[string]bool{}
		for _, r := range f.roles {
			f.roff[r] = true
		}
	}
	for _, r := range roles {
		delete(f.roff, r)
	}
	f.suppressed = false
	a.clearFilters(f)
	a.frameworkChanged(f)
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.Revived, Framework: id})
	}
	return nil
}

// checkSubscribed names the first of roles f is not subscribed to.
func (f *framework) checkSubscribed(roles []string) error {
	for _, r := range roles {
		ok := false
		for _, s := range f.roles {
			ok = ok || s == r
		}
		if !ok {
			return fmt.Errorf("framework %q is not subscribed to role %q (its roles: %s)", f.id, r, strings.Join(f.roles, ", "))
		}
	}
	return nil
}
