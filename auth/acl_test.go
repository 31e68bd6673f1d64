package auth

import (
	"errors"
	"os"
	"strings"
	"testing"
)

const exampleACLs = `{
  "permissive": false,
  "register_frameworks": [
    {"principals": {"values": ["ops"]}, "roles": {"type": "ANY"}},
    {"principals": {"values": ["batch", "spark"]}, "roles": {"values": ["batch"]}},
    {"principals": {"type": "ANY"}, "roles": {"values": ["prod"]}},
    {"principals": {"type": "ANY"}, "roles": {"type": "NONE"}}
  ],
  "run_tasks": [
    {"principals": {"type": "NONE"}, "users": {"values": ["root"]}},
    {"principals": {"type": "ANY"}, "users": {"type": "ANY"}}
  ],
  "teardown_frameworks": [
    {"principals": {"values": ["ops"]}, "framework_principals": {"type": "ANY"}}
  ],
  "update_sorter": [
    {"principals": {"values": ["ops"]}}
  ]
}`

func who(p string) Subject { return Subject{Principal: p, Authenticated: true} }

var nobody = Subject{}

func TestAuthorize(t *testing.T) {
	a, err := ParseACLs([]byte(exampleACLs))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		who    Subject
		act    Action
		object string
		acl    string // "" allowed; "-" denied by permissive=false; else the denying ACL
	}{
		{"listed principal, ANY role", who("ops"), RegisterFrameworks, "prod", ""},
		{"listed principal, listed role", who("spark"), RegisterFrameworks, "batch", ""},
		{"a later rule allows what an earlier one does not match", who("spark"), RegisterFrameworks, "prod", ""},
		{"first matching rule wins: spark in dev falls to [3]", who("spark"), RegisterFrameworks, "dev", "register_frameworks[3]"},
		{"ANY principal, NONE roles denies", who("eve"), RegisterFrameworks, "dev", "register_frameworks[3]"},
		{"ANY does not match an unauthenticated caller; permissive false", nobody, RegisterFrameworks, "dev", "-"},
		{"NONE principals match everyone and deny", who("ops"), RunTasks, "root", "run_tasks[0]"},
		{"NONE principals match the unauthenticated too", nobody, RunTasks, "root", "run_tasks[0]"},
		{"ANY principal ANY user", who("eve"), RunTasks, "alice", ""},
		{"unauthenticated, no match, permissive false", nobody, RunTasks, "alice", "-"},
		{"ANY object matches a missing object", who("ops"), TeardownFrameworks, "", ""},
		{"listed subject only", who("eve"), TeardownFrameworks, "spark", "-"},
		{"no-object action allowed", who("ops"), UpdateSorter, "", ""},
		{"no-object action, other principal", who("eve"), UpdateSorter, "", "-"},
		{"action without rules, permissive false", who("ops"), ManageRaft, "", "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := a.Authorize(tt.who, tt.act, tt.object)
			if tt.acl == "" {
				if err != nil {
					t.Fatalf("denied: %v", err)
				}
				return
			}
			var de *DeniedError
			if !errors.As(err, &de) {
				t.Fatalf("got %v, want a denial", err)
			}
			want := tt.acl
			if want == "-" {
				want = ""
			}
			if de.ACL != want {
				t.Fatalf("denied by %q, want %q (%v)", de.ACL, want, err)
			}
			if want != "" && !strings.Contains(err.Error(), want) {
				t.Fatalf("message %q does not name %s", err, want)
			}
			if tt.object != "" && !strings.Contains(err.Error(), tt.object) {
				t.Fatalf("message %q does not name the object %q", err, tt.object)
			}
		})
	}
}

func TestPermissiveDefault(t *testing.T) {
	a, err := ParseACLs([]byte(`{"register_frameworks": [{"principals": {"values": ["a"]}, "roles": {"type": "NONE"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Permissive {
		t.Fatal("permissive must default to true")
	}
	if err := a.Authorize(who("b"), RegisterFrameworks, "r"); err != nil {
		t.Fatalf("no rule matches b: permissive should allow, got %v", err)
	}
	if err := a.Authorize(nobody, ViewTasks, "x"); err != nil {
		t.Fatalf("permissive should allow the unauthenticated, got %v", err)
	}
	if err := a.Authorize(who("a"), RegisterFrameworks, "r"); err == nil || !strings.Contains(err.Error(), "register_frameworks[0]") {
		t.Fatalf("a in any role: want register_frameworks[0] to deny, got %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not an object", `[]`, "want a JSON object"},
		{"null", `null`, "want a JSON object"},
		{"unknown top key", `{"run_task": []}`, `unknown key "run_task"`},
		{"permissive not bool", `{"permissive": "no"}`, `"permissive" must be true or false`},
		{"list not a list", `{"run_tasks": {}}`, "run_tasks must be a list"},
		{"unknown rule key", `{"run_tasks": [{"principals": {"type": "ANY"}, "roles": {"type": "ANY"}}]}`, `run_tasks[0]: unknown key "roles"`},
		{"missing object", `{"run_tasks": [{"principals": {"type": "ANY"}}]}`, `run_tasks[0]: "users" is required`},
		{"missing principals", `{"update_sorter": [{}]}`, `update_sorter[0]: "principals" is required`},
		{"object on no-object action", `{"manage_raft": [{"principals": {"type": "ANY"}, "users": {"type": "ANY"}}]}`, `manage_raft[0]: unknown key "users"`},
		{"bad type", `{"update_sorter": [{"principals": {"type": "SOME"}}]}`, `update_sorter[0].principals: unknown type "SOME"`},
		{"type and values", `{"update_sorter": [{"principals": {"type": "ANY", "values": ["a"]}}]}`, "not both"},
		{"empty values", `{"update_sorter": [{"principals": {"values": []}}]}`, "no values"},
		{"empty value", `{"update_sorter": [{"principals": {"values": [""]}}]}`, "an empty value"},
		{"unknown entity key", `{"update_sorter": [{"principals": {"value": ["a"]}}]}`, `unknown field "value"`},
		{"values not strings", `{"update_sorter": [{"principals": {"values": [1]}}]}`, "update_sorter[0].principals"},
		{"trailing data", `{} {}`, "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseACLs([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseACLs(%s) = %v, want an error containing %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	a, err := ParseACLs([]byte(exampleACLs))
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseACLs(b)
	if err != nil {
		t.Fatalf("re-parse of %s: %v", b, err)
	}
	b2, _ := back.MarshalJSON()
	if string(b) != string(b2) {
		t.Fatalf("round trip changed the ACLs:\n%s\n%s", b, b2)
	}
	if got := a.Summary(); !strings.Contains(got, "permissive=false") || !strings.Contains(got, "register_frameworks=4") {
		t.Fatalf("Summary = %q", got)
	}
}

// The example in docs/security-acl.md is a file an operator will copy: it
// must parse and mean what the page says.
func TestDocExampleParses(t *testing.T) {
	doc, err := os.ReadFile("../docs/security-acl.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```json\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no ```json block in docs/security-acl.md")
	}
	a, err := ParseACLs([]byte(block))
	if err != nil {
		t.Fatalf("the documented example does not parse: %v", err)
	}
	if a.Authorize(who("ops"), RunTasks, "root") == nil || a.Authorize(who("eve"), RunTasks, "batch") != nil ||
		a.Authorize(who("eve"), UpdateSorter, "") == nil || a.Authorize(who("ops"), UpdateSorter, "") != nil {
		t.Fatal("the documented example does not mean what the page says")
	}
}
