package allocator

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

func quota(guarantee, limit string) Quota {
	q := Quota{Guarantees: resources.MustParse(guarantee), Limits: resources.MustParse(limit)}
	for _, nm := range scalarNames(q.Limits) {
		q.Limited = append(q.Limited, nm)
	}
	return q
}

func (fx *fixture) quota(role, guarantee, limit string) *fixture {
	fx.t.Helper()
	if err := fx.a.SetQuota(role, quota(guarantee, limit)); err != nil {
		fx.t.Fatal(err)
	}
	return fx
}

func (fx *fixture) reserve(agent string, byRole map[string]string) *fixture {
	fx.t.Helper()
	m := map[string]resources.Resources{}
	for role, r := range byRole {
		m[role] = resources.MustParse(r)
	}
	if err := fx.a.SetReservations(agent, m); err != nil {
		fx.t.Fatal(err)
	}
	return fx
}

func (fx *fixture) roles(id string, roles ...string) *fixture {
	fx.t.Helper()
	if err := fx.a.SetFrameworkRoles(id, roles); err != nil {
		fx.t.Fatal(err)
	}
	return fx
}

// gotRoles maps "framework@agent/role" to the offered resources.
func gotRoles(out []Offer) map[string]string {
	m := map[string]string{}
	for _, o := range out {
		m[o.Framework+"@"+o.Agent+"/"+o.Role] = o.Resources.String()
	}
	return m
}

func TestSetQuotaValidation(t *testing.T) {
	cases := []struct {
		name  string
		setup map[string]Quota // applied in name order first
		role  string
		q     Quota
		want  string // "" for success; else a substring of the error
	}{
		{"guarantee within limit", nil, "eng", quota("cpus:2", "cpus:4"), ""},
		{"guarantee without limit", nil, "eng", quota("cpus:2", ""), ""},
		{"guarantee above limit", nil, "eng", quota("cpus:5", "cpus:4"), `role "eng": guarantee of cpus (5) is above its limit (4)`},
		{"limit of zero", nil, "eng", Quota{Guarantees: resources.MustParse("cpus:1"), Limited: []string{"cpus"}}, `role "eng": guarantee of cpus (1) is above its limit (0)`},
		{"invalid role", nil, "/eng", quota("cpus:1", ""), "cannot start with a slash"},
		{"star", nil, "*", quota("cpus:1", ""), `role "*" cannot have a quota`},
		{"children within parent", map[string]Quota{"eng": quota("cpus:4", ""), "eng/a": quota("cpus:2", "")}, "eng/b", quota("cpus:2", ""), ""},
		{"children above parent guarantee", map[string]Quota{"eng": quota("cpus:4", ""), "eng/a": quota("cpus:3", "")}, "eng/b", quota("cpus:2", ""), `children of role "eng" sum to 5 of cpus, above its guarantee (4)`},
		{"parent lowered below children", map[string]Quota{"eng": quota("cpus:4", ""), "eng/a": quota("cpus:3", "")}, "eng", quota("cpus:2", ""), `set quota for role "eng": the guarantees of the children of role "eng" sum to 3`},
		{"parent without guarantee", map[string]Quota{"eng": quota("", "mem:100")}, "eng/a", quota("cpus:3", ""), ""},
		{"child guarantee above parent limit", map[string]Quota{"eng": quota("", "cpus:2")}, "eng/a", quota("cpus:3", ""), `guarantee of cpus for role "eng/a" (3) is above the limit of its parent "eng" (2)`},
		{"child limit above parent limit", map[string]Quota{"eng": quota("", "cpus:2")}, "eng/a", quota("", "cpus:3"), `limit of cpus for role "eng/a" (3) is above the limit of its parent "eng" (2)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newFixture(t, Config{})
			var names []string
			for r := range c.setup {
				names = append(names, r)
			}
			sort.Strings(names)
			for _, r := range names {
				if err := fx.a.SetQuota(r, c.setup[r]); err != nil {
					t.Fatal(err)
				}
			}
			err := fx.a.SetQuota(c.role, c.q)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("SetQuota: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("SetQuota = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestQuotasAndRemoval(t *testing.T) {
	fx := newFixture(t, Config{}).quota("eng", "cpus:2", "cpus:4;mem:100")
	q := fx.a.Quotas()["eng"]
	if q.Guarantees.String() != "cpus:2" || q.Limits.String() != "cpus:4;mem:100" || !reflect.DeepEqual(q.Limited, []string{"cpus", "mem"}) {
		t.Fatalf("Quotas()[eng] = %+v", q)
	}
	if err := fx.a.SetQuota("eng", Quota{}); err != nil {
		t.Fatal(err)
	}
	if len(fx.a.Quotas()) != 0 || fx.a.rm {
		t.Fatalf("an empty quota removes it and leaves role mode: %v, role mode %v", fx.a.Quotas(), fx.a.rm)
	}
}

func TestMultiRoleOffersPerRole(t *testing.T) {
	fx := newFixture(t, Config{Seed: 1}).agent("a1", "cpus:4;mem:1024").agent("a2", "cpus:4;mem:1024").
		framework("f1", "a").roles("f1", "a", "b")
	out := fx.cycle()
	byRole := map[string]int{}
	for _, o := range out {
		byRole[o.Role]++
		if o.Framework != "f1" {
			t.Fatalf("offer to %s", o.Framework)
		}
	}
	if byRole["a"] != 1 || byRole["b"] != 1 {
		t.Fatalf("offers by role %v, want one agent for each of a and b", byRole)
	}
}

func TestSuppressRoles(t *testing.T) {
	fx := newFixture(t, Config{Seed: 1}).agent("a1", "cpus:4;mem:1024").agent("a2", "cpus:4;mem:1024").
		framework("f1", "a").roles("f1", "a", "b")
	if err := fx.a.SuppressRoles("f1", []string{"a"}); err != nil {
		t.Fatal(err)
	}
	for _, o := range fx.cycle() {
		if o.Role != "b" {
			t.Fatalf("offer for suppressed role %q", o.Role)
		}
	}
	if err := fx.a.SuppressRoles("f1", []string{"c"}); err == nil || !strings.Contains(err.Error(), `not subscribed to role "c"`) {
		t.Fatalf("suppressing a role not subscribed: %v", err)
	}
	if err := fx.a.SuppressRoles("f1", []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := fx.a.Framework("f1"); !st.Suppressed {
		t.Fatal("every role suppressed: the framework is suppressed")
	}
	if err := fx.a.ReviveRoles("f1", []string{"a"}); err != nil {
		t.Fatal(err)
	}
	fx.a.RemoveAgent("a1")
	fx.agent("a3", "cpus:4;mem:1024")
	out := fx.cycle()
	if len(out) != 1 || out[0].Role != "a" {
		t.Fatalf("after reviving a: %v, want one offer for a", gotRoles(out))
	}
}

func TestReservationsOfferedInSubtree(t *testing.T) {
	fx := newFixture(t, Config{Seed: 3}).agent("a1", "cpus:4;mem:1024").
		framework("ads", "ads").framework("ml", "eng/ml").
		reserve("a1", map[string]string{"eng": "cpus:2;mem:512"})
	out := fx.cycle()
	for _, o := range out {
		if o.Framework == "ads" && len(o.Reserved) > 0 {
			t.Fatalf("reserved resources offered outside eng's subtree: %+v", o)
		}
	}
	var ml *Offer
	for i := range out {
		if out[i].Framework == "ml" {
			ml = &out[i]
		}
	}
	if ml == nil || ml.Reserved["eng"].String() != "cpus:2;mem:512" || ml.Role != "eng/ml" {
		t.Fatalf("eng/ml should be offered eng's whole pool: %+v", out)
	}
	// recovered, the pool is offered again, and only to eng/ml
	if err := fx.a.RecoverReserved("ml", "a1", "eng", ml.Reserved["eng"], nil); err != nil {
		t.Fatal(err)
	}
	if err := fx.a.RecoverReserved("ml", "a1", "eng", resources.MustParse("cpus:1"), nil); err == nil {
		t.Fatal("recovering more of a pool than is held should fail")
	}
	checkInvariants(t, fx.a)
	out = fx.cycle()
	if len(out) != 1 || out[0].Framework != "ml" || out[0].Reserved["eng"].String() != "cpus:2;mem:512" {
		t.Fatalf("pool offered again: %v", gotRoles(out))
	}
}

func TestReservationRefinementAndExceedingTotal(t *testing.T) {
	fx := newFixture(t, Config{}).agent("a1", "cpus:4;mem:1024")
	err := fx.a.SetReservations("a1", map[string]resources.Resources{"eng": resources.MustParse("cpus:5")})
	if err == nil || !strings.Contains(err.Error(), "exceed the agent's total") {
		t.Fatalf("reservation above the total: %v", err)
	}
	// a reservation for eng/ml stacked on one for eng is keyed by eng/ml:
	// a framework in eng is not offered it, one in eng/ml is
	fx.framework("eng", "eng").reserve("a1", map[string]string{"eng/ml": "cpus:4;mem:1024"})
	if out := fx.cycle(); len(out) != 0 {
		t.Fatalf("eng offered eng/ml's reservation: %v", gotRoles(out))
	}
	fx.framework("ml", "eng/ml")
	if out := fx.cycle(); len(out) != 1 || out[0].Framework != "ml" {
		t.Fatalf("eng/ml's reservation: %v", gotRoles(out))
	}
}

func TestQuotaLimitClipsOffers(t *testing.T) {
	// a limit on cpus clips the cpus of an offer and leaves other kinds
	fx := newFixture(t, Config{Seed: 1}).agent("a1", "cpus:4;mem:1024").
		framework("f1", "capped").quota("capped", "", "cpus:3")
	out := fx.cycle()
	if want := map[string]string{"f1@a1/capped": "cpus:3;mem:1024"}; !reflect.DeepEqual(gotRoles(out), want) {
		t.Fatalf("limit cpus:3: %v, want %v", gotRoles(out), want)
	}
	if out := fx.cycle(); len(out) != 0 {
		t.Fatalf("at its limit the role gets no more: %v", gotRoles(out))
	}
}

func TestGuaranteeMetFirstAndHeadroomHeld(t *testing.T) {
	// two agents of 4 cpus; g is guaranteed 4 cpus. Its framework is
	// suppressed, so the flood role may take only what leaves the
	// guarantee's headroom: one agent.
	fx := newFixture(t, Config{Seed: 5}).agent("a1", "cpus:4;mem:1024").agent("a2", "cpus:4;mem:1024").
		framework("flood", "flood").framework("g", "g").quota("g", "cpus:4", "")
	fx.a.Suppress("g")
	out := fx.cycle()
	var cpus resources.Quantity
	for _, o := range out {
		cpus += o.Resources.Scalar("cpus")
	}
	if want := resources.MustParse("cpus:4").Scalar("cpus"); cpus != want {
		t.Fatalf("flood took %v cpus, want %v (the rest held back for g): %v", cpus, want, gotRoles(out))
	}
	// g revives: the next cycle gives it its guarantee
	if err := fx.a.Revive("g"); err != nil {
		t.Fatal(err)
	}
	out = fx.cycle()
	if len(out) != 1 || out[0].Framework != "g" || out[0].Resources.Scalar("cpus") != resources.MustParse("cpus:4").Scalar("cpus") {
		t.Fatalf("g's guarantee: %v", gotRoles(out))
	}
}

func TestHierarchicalSortsLevelByLevel(t *testing.T) {
	// a/x, a/y and b: level by level, a's subtree and b share equally
	// (flat, the three roles would split three ways).
	fx := newFixture(t, Config{Seed: 2})
	for _, id := range []string{"a1", "a2", "a3", "a4"} {
		fx.agent(id, "cpus:2;mem:512")
	}
	fx.framework("fx", "a/x").framework("fy", "a/y").framework("fb", "b")
	count := map[string]int{}
	for _, o := range fx.cycle() {
		count[o.Role]++
	}
	if want := map[string]int{"a/x": 1, "a/y": 1, "b": 2}; !reflect.DeepEqual(count, want) {
		t.Fatalf("agents by role %v, want %v", count, want)
	}
}

func TestRolesState(t *testing.T) {
	fx := newFixture(t, Config{Seed: 2}).agent("a1", "cpus:4;mem:1024").
		framework("f1", "eng/ml").quota("eng", "cpus:1", "").
		reserve("a1", map[string]string{"eng/ml": "cpus:1"})
	if err := fx.a.SetWeights(map[string]float64{"ops": 2}); err != nil {
		t.Fatal(err)
	}
	fx.cycle()
	var names []string
	byName := map[string]RoleState{}
	for _, r := range fx.a.Roles() {
		names = append(names, r.Name)
		byName[r.Name] = r
	}
	if want := []string{"eng", "eng/ml", "ops"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("roles %v, want %v", names, want)
	}
	ml := byName["eng/ml"]
	if ml.Allocated.String() != "cpus:4;mem:1024" || ml.Reserved.String() != "cpus:1" || !reflect.DeepEqual(ml.Frameworks, []string{"f1"}) {
		t.Fatalf("eng/ml: %+v", ml)
	}
	if eng := byName["eng"]; eng.Allocated.String() != "cpus:4;mem:1024" || eng.Quota.Guarantees.String() != "cpus:1" {
		t.Fatalf("eng: %+v", eng)
	}
	if byName["ops"].Weight != 2 {
		t.Fatalf("ops: %+v", byName["ops"])
	}
}

func TestReconfigureKeepsRoleBooks(t *testing.T) {
	fx := newFixture(t, Config{Seed: 4}).agent("a1", "cpus:4;mem:1024").agent("a2", "cpus:4;mem:1024").
		framework("f1", "eng/ml").roles("f1", "eng/ml", "ops").framework("f2", "ads").
		quota("eng", "cpus:2", "cpus:6").reserve("a1", map[string]string{"eng": "cpus:1;mem:128"})
	if err := fx.a.SuppressRoles("f1", []string{"ops"}); err != nil {
		t.Fatal(err)
	}
	fx.cycle()
	b, dropped, err := fx.a.Reconfigure(Reconfiguration{Sorter: mustLookup(t, "psdsf")})
	if err != nil || len(dropped) > 0 {
		t.Fatalf("Reconfigure: %v, dropped %v", err, dropped)
	}
	checkInvariants(t, b)
	if !reflect.DeepEqual(fx.a.Roles(), b.Roles()) || !reflect.DeepEqual(fx.a.Quotas(), b.Quotas()) {
		t.Fatalf("roles after reconfigure:\n%+v\nwant\n%+v", b.Roles(), fx.a.Roles())
	}
	if f := b.fws[b.fwByID["f1"]]; !f.roff["ops"] || len(f.roles) != 2 {
		t.Fatalf("f1 after reconfigure: roles %v, suppressed %v", f.roles, f.roff)
	}
}

func mustLookup(t *testing.T, name string) sorter.Criterion {
	t.Helper()
	c, err := sorter.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestQuotaAndFairShareStagesMakeOneOffer(t *testing.T) {
	// g's guarantee takes half the agent in the quota stage and the
	// fair-share stage the rest: one offer, as Mesos merges them
	fx := newFixture(t, Config{}).agent("a1", "cpus:4;mem:1024").framework("f1", "g").quota("g", "cpus:2", "")
	out := fx.cycle()
	if want := map[string]string{"f1@a1/g": "cpus:4;mem:1024"}; len(out) != 1 || !reflect.DeepEqual(gotRoles(out), want) {
		t.Fatalf("offers %v, want %v", gotRoles(out), want)
	}
}

func TestRecoverForNamesRoleAndPool(t *testing.T) {
	fx := newFixture(t, Config{Seed: 1}).agent("a1", "cpus:4;mem:1024").agent("a2", "cpus:4;mem:1024").
		framework("f1", "a").roles("f1", "a", "b")
	out := fx.cycle()
	if len(out) != 2 {
		t.Fatalf("offers %v", gotRoles(out))
	}
	o := out[0]
	other := "b"
	if o.Role == "b" {
		other = "a"
	}
	err := fx.a.RecoverFor("f1", o.Agent, other, "", o.Resources, nil)
	if err == nil || !strings.Contains(err.Error(), `unreserved for role "`+other+`"`) {
		t.Fatalf("recovering for the other role: %v", err)
	}
	if err := fx.a.RecoverFor("f1", o.Agent, o.Role, "*", o.Resources, nil); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, fx.a)
}

func TestRolesInFlatMode(t *testing.T) {
	// without role mode, a role's allocation is its frameworks'
	fx := newFixture(t, Config{}).agent("a1", "cpus:4;mem:1024").framework("f1", "web")
	fx.cycle()
	if fx.a.rm {
		t.Fatal("flat roles, no quota, no reservation: not role mode")
	}
	roles := fx.a.Roles()
	if len(roles) != 1 || roles[0].Name != "web" || roles[0].Allocated.String() != "cpus:4;mem:1024" || roles[0].Weight != 1 {
		t.Fatalf("Roles() = %+v", roles)
	}
}
