package resources

import (
	"reflect"
	"strings"
	"testing"
)

func TestValidateRole(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string // substring of the error; "" for valid
	}{
		{"*", ""},
		{"eng", ""},
		{"eng/ml/training", ""},
		{"a.b", ""},
		{"a-b", ""},
		{"...", ""},
		{"", "empty role"},
		{"/eng", "cannot start with a slash"},
		{"eng/", "cannot end with a slash"},
		{"eng//ml", "two adjacent slashes"},
		{".", `"." as a path component`},
		{"eng/..", `".." as a path component`},
		{"eng/*", `"*" as a path component`},
		{"*/eng", `"*" as a path component`},
		{"-eng", "starts with a dash"},
		{"eng/-ml", "starts with a dash"},
		{"eng ml", "whitespace"},
		{"eng\tml", "whitespace"},
		{"eng/m\x00l", "control character"},
		{"eng\x7f", "control character"},
	} {
		err := ValidateRole(tc.name)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ValidateRole(%q) = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ValidateRole(%q) = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestRoleAncestors(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"*", nil},
		{"a", nil},
		{"a/b", []string{"a"}},
		{"a/b/c", []string{"a/b", "a"}},
	} {
		if got := RoleAncestors(tc.name); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("RoleAncestors(%q) = %q, want %q", tc.name, got, tc.want)
		}
		wantParent := ""
		if len(tc.want) > 0 {
			wantParent = tc.want[0]
		}
		if got := RoleParent(tc.name); got != wantParent {
			t.Errorf("RoleParent(%q) = %q, want %q", tc.name, got, wantParent)
		}
	}
}

func TestIsRoleOrDescendant(t *testing.T) {
	for _, tc := range []struct {
		role, of string
		want     bool
	}{
		{"a", "a", true},
		{"a/b", "a", true},
		{"a/b/c", "a", true},
		{"ab", "a", false},
		{"a", "a/b", false},
		{"b/a", "a", false},
		{"*", "*", true},
		{"a", "*", false},
	} {
		if got := IsRoleOrDescendant(tc.role, tc.of); got != tc.want {
			t.Errorf("IsRoleOrDescendant(%q, %q) = %v, want %v", tc.role, tc.of, got, tc.want)
		}
	}
}
