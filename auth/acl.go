package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

// Authorizer decides whether a caller may perform an action on an object.
// It answers nil (allowed) or a *DeniedError that names the rule that
// denied, so an HTTP handler can answer 403 with it as it is.
type Authorizer interface {
	Authorize(who Subject, act Action, object string) error
}

var _ Authorizer = (*ACLs)(nil)

// Subject is who asks: an authenticated principal, or nobody (a request
// that carried no credential). Use SubjectFrom to read it off a request.
type Subject struct {
	Principal     string
	Authenticated bool
}

// SubjectFrom is the subject of a request whose context an authenticator
// may have marked with WithPrincipal.
func SubjectFrom(ctx context.Context) Subject {
	p, ok := PrincipalFrom(ctx)
	return Subject{Principal: p, Authenticated: ok}
}

func (s Subject) String() string {
	if !s.Authenticated {
		return "an unauthenticated caller"
	}
	return fmt.Sprintf("principal %q", s.Principal)
}

// Action is one kind of ACL, named as its key in the ACL file.
type Action string

// The actions: Mesos's (a subset) and allot's own (update_sorter,
// manage_raft, kill_tasks).
const (
	RegisterFrameworks Action = "register_frameworks" // object: a role
	RunTasks           Action = "run_tasks"           // object: a Unix user
	TeardownFrameworks Action = "teardown_frameworks" // object: the framework's principal
	UpdateWeights      Action = "update_weights"      // object: a role
	ViewFrameworks     Action = "view_frameworks"     // object: the framework's user
	ViewTasks          Action = "view_tasks"          // object: the task's user
	AccessSandboxes    Action = "access_sandboxes"    // object: the executor's user
	UpdateSorter       Action = "update_sorter"       // no object: the allocation policy
	ManageRaft         Action = "manage_raft"         // no object: raft peers and snapshots
	SetLogLevel        Action = "set_log_level"       // object: "level", ANY or NONE (Mesos's)
	PruneImages        Action = "prune_images"        // object: "images", ANY or NONE (Mesos's)

	// Maintenance and drain (the master's maintenance.go, drain.go).
	UpdateMaintenanceSchedules Action = "update_maintenance_schedules" // object: a machine's hostname (else IP)
	GetMaintenanceSchedules    Action = "get_maintenance_schedules"    // object: a machine
	GetMaintenanceStatuses     Action = "get_maintenance_statuses"     // object: a machine
	StartMaintenances          Action = "start_maintenances"           // object: a machine
	StopMaintenances           Action = "stop_maintenances"            // object: a machine
	DrainAgents                Action = "drain_agents"                 // object: the agent id
	DeactivateAgents           Action = "deactivate_agents"            // object: the agent id
	ReactivateAgents           Action = "reactivate_agents"            // object: the agent id
	MarkAgentsGone             Action = "mark_agents_gone"             // object: the agent id

	ReserveResources   Action = "reserve_resources"   // object: the reservation's role
	UnreserveResources Action = "unreserve_resources" // object: the reservation's principal
	CreateVolumes      Action = "create_volumes"      // object: the volume's role
	DestroyVolumes     Action = "destroy_volumes"     // object: the volume's creator principal
	ResizeVolume       Action = "resize_volume"       // object: the volume's role
	UpdateQuota        Action = "update_quotas"       // object: a role (Mesos's ACL key)
	ViewRoles          Action = "view_roles"          // object: a role

	// KillTasks is allot's own (Mesos's operator API cannot kill one
	// task): POST /api/v1/allot/kill. Object: the framework's principal,
	// as teardown_frameworks.
	KillTasks Action = "kill_tasks"
)

// objectKeys is each action's object key in the file ("" for none), and so
// also the list of known actions.
var objectKeys = map[Action]string{
	RegisterFrameworks: "roles",
	RunTasks:           "users",
	TeardownFrameworks: "framework_principals",
	KillTasks:          "framework_principals",
	UpdateWeights:      "roles",
	ViewFrameworks:     "users",
	ViewTasks:          "users",
	AccessSandboxes:    "users",
	UpdateSorter:       "",
	ManageRaft:         "",
	SetLogLevel:        "level",
	PruneImages:        "images",

	UpdateMaintenanceSchedules: "machines",
	GetMaintenanceSchedules:    "machines",
	GetMaintenanceStatuses:     "machines",
	StartMaintenances:          "machines",
	StopMaintenances:           "machines",
	DrainAgents:                "agents",
	DeactivateAgents:           "agents",
	ReactivateAgents:           "agents",
	MarkAgentsGone:             "agents",

	ReserveResources:   "roles",
	UnreserveResources: "reserver_principals",
	CreateVolumes:      "roles",
	DestroyVolumes:     "creator_principals",
	ResizeVolume:       "roles",
	UpdateQuota:        "roles",
	ViewRoles:          "roles",
}

// objectNames is how a denial names an action's object.
var objectNames = map[string]string{"roles": "role", "users": "user", "framework_principals": "framework principal",
	"machines": "machine", "agents": "agent", "reserver_principals": "reserver principal", "creator_principals": "creator principal"}

// EntityType is how an entity matches: by its values, or ANY, or NONE.
type EntityType int

const (
	Some EntityType = iota // {"values": [...]}
	Any                    // {"type": "ANY"}
	None                   // {"type": "NONE"}
)

// Entity is one side of an ACL: the principals it is about, or the objects.
type Entity struct {
	Type   EntityType
	Values []string // Type Some only
}

// Rule is one ACL: Principals may (or, with a NONE entity, may not) act
// on Objects. Objects is unused by actions without an object.
type Rule struct {
	Principals Entity
	Objects    Entity
}

// ACLs is a parsed ACL file: the rules of each action in file order, and
// what happens when none matches.
type ACLs struct {
	Permissive bool
	Rules      map[Action][]Rule
}

// Permissive is the authorizer of a master given no ACLs: everything is
// allowed, as in Mesos.
func Permissive() *ACLs { return &ACLs{Permissive: true, Rules: map[Action][]Rule{}} }

// DeniedError is a denial: which ACL denied (ACL "register_frameworks[1]",
// or "" when no ACL matched and "permissive" is false), whom and what.
type DeniedError struct {
	ACL     string
	Action  Action
	Subject Subject
	Object  string
}

func (e *DeniedError) Error() string {
	what := ""
	if key := objectKeys[e.Action]; key != "" {
		if e.Object == "" {
			what = fmt.Sprintf(" (no %s)", objectNames[key])
		} else {
			what = fmt.Sprintf(" %s %q", objectNames[key], e.Object)
		}
	}
	if e.ACL == "" {
		return fmt.Sprintf("not authorized: no %s ACL matches %s%s and \"permissive\" is false", e.Action, e.Subject, what)
	}
	return fmt.Sprintf("not authorized: ACL %s denies %s %s%s", e.ACL, e.Subject, e.Action, what)
}

// Authorize applies the first of act's rules that matches both who and
// object; when none does, Permissive decides. An object "" is "none" (a
// framework that registered without a principal): only ANY and NONE
// match it.
func (a *ACLs) Authorize(who Subject, act Action, object string) error {
	hasObject := objectKeys[act] != ""
	for i, r := range a.Rules[act] {
		pm, pa := r.Principals.principal(who)
		if !pm {
			continue
		}
		om, oa := true, true
		if hasObject {
			om, oa = r.Objects.object(object)
		}
		if !om {
			continue
		}
		if pa && oa {
			return nil
		}
		return &DeniedError{ACL: fmt.Sprintf("%s[%d]", act, i), Action: act, Subject: who, Object: object}
	}
	if a.Permissive {
		return nil
	}
	return &DeniedError{Action: act, Subject: who, Object: object}
}

// principal reports whether e matches the subject and, if so, allows it.
// ANY and a list match only authenticated principals: a caller without
// one must not pass a rule written for "anyone who logged in". NONE
// matches everyone and allows no one.
func (e Entity) principal(who Subject) (matches, allows bool) {
	switch e.Type {
	case None:
		return true, false
	case Any:
		return who.Authenticated, who.Authenticated
	}
	in := who.Authenticated && slices.Contains(e.Values, who.Principal)
	return in, in
}

// object reports whether e matches the object and, if so, allows it.
func (e Entity) object(obj string) (matches, allows bool) {
	switch e.Type {
	case None:
		return true, false
	case Any:
		return true, true
	}
	in := obj != "" && slices.Contains(e.Values, obj)
	return in, in
}

// LoadACLs reads and parses an ACL file (--acls).
func LoadACLs(path string) (*ACLs, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("acls: %w", err)
	}
	a, err := ParseACLs(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// ParseACLs parses ACLs in (a subset of) Mesos's JSON format. Unknown keys
// are errors, not ignored: a misspelt "run_task" silently dropped would
// leave the cluster open.
func ParseACLs(b []byte) (*ACLs, error) {
	var top map[string]json.RawMessage
	if err := strictUnmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("acls: want a JSON object: %v", err)
	}
	if top == nil {
		return nil, fmt.Errorf("acls: want a JSON object, got null")
	}
	a := Permissive()
	for _, key := range sortedKeys(top) {
		raw := top[key]
		if key == "permissive" {
			if err := strictUnmarshal(raw, &a.Permissive); err != nil {
				return nil, fmt.Errorf("acls: \"permissive\" must be true or false")
			}
			continue
		}
		objKey, ok := objectKeys[Action(key)]
		if !ok {
			return nil, fmt.Errorf("acls: unknown key %q (known: permissive, %s)", key, strings.Join(actionNames(), ", "))
		}
		rules, err := parseRules(Action(key), objKey, raw)
		if err != nil {
			return nil, err
		}
		a.Rules[Action(key)] = rules
	}
	return a, nil
}

// parseRules parses the list of one action's ACLs.
func parseRules(act Action, objKey string, raw json.RawMessage) ([]Rule, error) {
	var list []map[string]json.RawMessage
	if err := strictUnmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("acls: %s must be a list of {\"principals\": ..., %s}: %v", act, objHint(objKey), err)
	}
	rules := make([]Rule, 0, len(list))
	for i, fields := range list {
		where := fmt.Sprintf("%s[%d]", act, i)
		r, err := parseRule(where, objKey, fields)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func objHint(objKey string) string {
	if objKey == "" {
		return "nothing else"
	}
	return fmt.Sprintf("%q: ...", objKey)
}

// parseRule parses one ACL: "principals" and the action's object key, both
// required (as in Mesos's protobuf), nothing else.
func parseRule(where, objKey string, fields map[string]json.RawMessage) (Rule, error) {
	var r Rule
	for _, k := range sortedKeys(fields) {
		if k != "principals" && (objKey == "" || k != objKey) {
			return r, fmt.Errorf("acls: %s: unknown key %q (want \"principals\" and %s)", where, k, objHint(objKey))
		}
	}
	var err error
	if r.Principals, err = parseEntity(where, "principals", fields); err != nil {
		return r, err
	}
	if objKey != "" {
		if r.Objects, err = parseEntity(where, objKey, fields); err != nil {
			return r, err
		}
	}
	return r, nil
}

// parseEntity parses {"values": [...]}, {"type": "ANY"} or {"type": "NONE"}.
func parseEntity(where, key string, fields map[string]json.RawMessage) (Entity, error) {
	raw, ok := fields[key]
	if !ok {
		return Entity{}, fmt.Errorf("acls: %s: %q is required", where, key)
	}
	bad := func(why string) error {
		return fmt.Errorf("acls: %s.%s: %s (want {\"values\": [\"...\"]}, {\"type\": \"ANY\"} or {\"type\": \"NONE\"})", where, key, why)
	}
	var e struct {
		Type   *string   `json:"type"`
		Values *[]string `json:"values"`
	}
	if err := strictUnmarshal(raw, &e); err != nil {
		return Entity{}, bad(err.Error())
	}
	switch {
	case e.Type != nil && e.Values != nil:
		return Entity{}, bad("give either type or values, not both")
	case e.Type != nil && *e.Type == "ANY":
		return Entity{Type: Any}, nil
	case e.Type != nil && *e.Type == "NONE":
		return Entity{Type: None}, nil
	case e.Type != nil:
		return Entity{}, bad(fmt.Sprintf("unknown type %q", *e.Type))
	case e.Values == nil || len(*e.Values) == 0:
		return Entity{}, bad("no values")
	}
	for _, v := range *e.Values {
		if v == "" {
			return Entity{}, bad("an empty value")
		}
	}
	return Entity{Type: Some, Values: *e.Values}, nil
}

// strictUnmarshal decodes exactly one JSON value, refusing unknown fields
// of structs and trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

// MarshalJSON writes the ACLs in the format ParseACLs reads.
func (a *ACLs) MarshalJSON() ([]byte, error) {
	out := map[string]any{"permissive": a.Permissive}
	for act, rules := range a.Rules {
		list := make([]map[string]any, 0, len(rules))
		for _, r := range rules {
			m := map[string]any{"principals": r.Principals.jsonValue()}
			if k := objectKeys[act]; k != "" {
				m[k] = r.Objects.jsonValue()
			}
			list = append(list, m)
		}
		out[string(act)] = list
	}
	return json.Marshal(out)
}

func (e Entity) jsonValue() map[string]any {
	switch e.Type {
	case Any:
		return map[string]any{"type": "ANY"}
	case None:
		return map[string]any{"type": "NONE"}
	}
	return map[string]any{"values": e.Values}
}

// Summary counts the rules per action, for the master's start-up log.
func (a *ACLs) Summary() string {
	var parts []string
	for _, act := range actionNames() {
		if n := len(a.Rules[Action(act)]); n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", act, n))
		}
	}
	return fmt.Sprintf("permissive=%v %s", a.Permissive, strings.Join(parts, " "))
}

func actionNames() []string {
	out := make([]string, 0, len(objectKeys))
	for act := range objectKeys {
		out = append(out, string(act))
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
