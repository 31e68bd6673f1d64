package resources

import (
	"fmt"
	"sort"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// ParseByRole reads the Mesos text form with static reservations, as an
// agent's --resources takes it: "cpus(ads):4;mem(ads):8192;cpus:2". A part
// without "(role)", or with "(*)", is unreserved (key Unreserved). Each
// role's parts follow Parse's rules; a bad role is named with its part.
func ParseByRole(s string) (map[string]Resources, error) {
	out := map[string]Resources{}
	if t := strings.TrimSpace(s); t == "" || t == "{}" {
		return out, nil
	}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("resource %q: want name:value", part)
		}
		name, role, err := splitRole(part, strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		r, err := out[role].parsePart(part, name, value)
		if err != nil {
			return nil, err
		}
		out[role] = r
	}
	return out, nil
}

// splitRole takes "name(role)" apart; a name without parentheses is
// unreserved.
func splitRole(part, name string) (string, string, error) {
	open := strings.IndexByte(name, '(')
	if open < 0 {
		if strings.ContainsRune(name, ')') {
			return "", "", fmt.Errorf("resource %q: unbalanced parentheses", part)
		}
		return name, Unreserved, nil
	}
	if !strings.HasSuffix(name, ")") || strings.Count(name, "(") != 1 || strings.Count(name, ")") != 1 {
		return "", "", fmt.Errorf("resource %q: want name(role):value", part)
	}
	role := strings.TrimSpace(name[open+1 : len(name)-1])
	if err := checkStaticRole(role); err != nil {
		return "", "", fmt.Errorf("resource %q: %v", part, err)
	}
	return strings.TrimSpace(name[:open]), role, nil
}

// checkStaticRole applies Mesos's role name rules (ValidateRole) to the
// role of a static reservation.
func checkStaticRole(role string) error { return ValidateRole(role) }

// FormatByRole writes byRole in the text form ParseByRole reads:
// unreserved first, then each role's parts in role order.
func FormatByRole(byRole map[string]Resources) string {
	var parts []string
	for _, role := range sortedRoles(byRole) {
		r := byRole[role]
		if r.IsEmpty() {
			continue
		}
		for _, p := range strings.Split(r.String(), ";") {
			if role != Unreserved {
				name, value, _ := strings.Cut(p, ":")
				p = name + "(" + role + "):" + value
			}
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "{}"
	}
	return strings.Join(parts, ";")
}

// Total sums byRole.
func Total(byRole map[string]Resources) Resources {
	var sum Resources
	for _, r := range byRole {
		sum = sum.Add(r)
	}
	return sum
}

// StaticMesos converts byRole into Mesos resources: the unreserved ones
// plain, each role's with one STATIC reservation, as Mesos makes an agent's
// --resources.
func StaticMesos(byRole map[string]Resources) mesos.Resources {
	var out mesos.Resources
	for _, role := range sortedRoles(byRole) {
		out = append(out, ToMesos(byRole[role], role, "")...)
	}
	return out
}

// sortedRoles lists byRole's keys, Unreserved first.
func sortedRoles(byRole map[string]Resources) []string {
	roles := make([]string, 0, len(byRole))
	for role := range byRole {
		roles = append(roles, role)
	}
	sort.Slice(roles, func(i, j int) bool {
		if (roles[i] == Unreserved) != (roles[j] == Unreserved) {
			return roles[i] == Unreserved
		}
		return roles[i] < roles[j]
	})
	return roles
}
