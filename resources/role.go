package resources

import (
	"fmt"
	"strings"
)

// Role names follow Mesos: "*" (the default role of unreserved
// resources), or a path of components separated by "/" ("eng/ml/training"),
// where "eng" is the parent of "eng/ml". The checks, and the order they are
// made in, are Mesos's roles::validate, so a name Mesos refuses is refused
// here with the same reason.

// ValidateRole reports why name is not a valid role name, or nil.
func ValidateRole(name string) error {
	if name == Unreserved {
		return nil
	}
	if name == "" {
		return fmt.Errorf("empty role name is invalid")
	}
	if strings.HasPrefix(name, "/") {
		return fmt.Errorf("role %q cannot start with a slash", name)
	}
	if strings.HasSuffix(name, "/") {
		return fmt.Errorf("role %q cannot end with a slash", name)
	}
	for _, c := range strings.Split(name, "/") {
		switch {
		case c == "":
			return fmt.Errorf("role %q cannot contain two adjacent slashes", name)
		case c == "." || c == "..":
			return fmt.Errorf("role %q cannot include %q as a path component", name, c)
		case c == Unreserved:
			return fmt.Errorf("role %q cannot include %q as a path component", name, c)
		case strings.HasPrefix(c, "-"):
			return fmt.Errorf("role component %q in role %q is invalid because it starts with a dash", c, name)
		case strings.ContainsFunc(c, badRoleRune):
			return fmt.Errorf("role component %q in role %q is invalid because it contains a control character or whitespace", c, name)
		}
	}
	return nil
}

// badRoleRune is whitespace, a control character or DEL: Mesos refuses
// them in role names because they cannot be told apart in logs and flags.
func badRoleRune(r rune) bool {
	return r <= 0x20 || r == 0x7f
}

// RoleAncestors returns name's ancestors, nearest first: "a/b/c" gives
// ["a/b", "a"]; "*" and top-level roles have none.
func RoleAncestors(name string) []string {
	var out []string
	for {
		i := strings.LastIndexByte(name, '/')
		if i <= 0 {
			return out
		}
		name = name[:i]
		out = append(out, name)
	}
}

// RoleParent returns name's parent, or "" for "*" and top-level roles.
func RoleParent(name string) string {
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		return name[:i]
	}
	return ""
}

// IsRoleOrDescendant reports whether role is of or lies below it: "a/b"
// is a descendant of "a", "ab" is not.
func IsRoleOrDescendant(role, of string) bool {
	if role == of {
		return true
	}
	return len(role) > len(of) && role[len(of)] == '/' && strings.HasPrefix(role, of)
}
