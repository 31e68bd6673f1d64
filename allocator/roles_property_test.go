package allocator

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// roleDriver plays a random, seeded master against an allocator with
// nested roles, multi-role frameworks, reservations and quota, and checks
// the role properties after every cycle from its own books: what it holds
// (offers kept, by role and pool) and what it reserved.
type roleDriver struct {
	t      *testing.T
	rng    *rand.Rand
	fx     *fixture
	agents map[string]resources.Resources            // totals
	resv   map[string]map[string]resources.Resources // agent -> role -> reserved
	fws    map[string][]string                       // framework -> roles
	off    map[string]map[string]bool                // framework -> suppressed roles
	holds  []Offer
	until  map[string]time.Time // framework -> its last filter's expiry
	ids    int
	idle   map[string]bool // frameworks that declared they want no tasks
	// onCycle, if set, sees every cycle's offers (the recorded decisions)
	onCycle func([]Offer)
}

var roleNames = []string{"a", "a/x", "a/y", "b", "b/z", "c"}

func newRoleDriver(t *testing.T, crit string, seed uint64) *roleDriver {
	c, err := sorter.Lookup(crit)
	if err != nil {
		t.Fatal(err)
	}
	return &roleDriver{t: t, rng: rand.New(rand.NewPCG(seed, 27)), fx: newFixture(t, Config{Sorter: c, Seed: seed}),
		agents: map[string]resources.Resources{}, resv: map[string]map[string]resources.Resources{},
		fws: map[string][]string{}, off: map[string]map[string]bool{}, until: map[string]time.Time{},
		idle: map[string]bool{}}
}

func (d *roleDriver) pick(m []string) string { return m[d.rng.IntN(len(m))] }

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (d *roleDriver) step() {
	a := d.fx.a
	switch r := d.rng.IntN(100); {
	case r < 8 || len(d.agents) == 0:
		d.ids++
		id := fmt.Sprintf("a%d", d.ids)
		total := resources.MustParse(propertyAgents[d.rng.IntN(len(propertyAgents))])
		d.must(a.AddAgent(id, AgentInfo{Total: total}))
		d.agents[id] = total
	case r < 14 || len(d.fws) == 0:
		d.ids++
		id := fmt.Sprintf("f%d", d.ids)
		roles := []string{d.pick(roleNames)}
		d.must(a.AddFramework(id, roles[0]))
		if d.rng.IntN(3) == 0 {
			if r2 := d.pick(roleNames); r2 != roles[0] {
				roles = append(roles, r2)
			}
			d.must(a.SetFrameworkRoles(id, roles))
		}
		d.fws[id] = roles
	case r < 16 && len(d.agents) > 1:
		id := d.pick(keys(d.agents))
		d.must(a.RemoveAgent(id))
		delete(d.agents, id)
		delete(d.resv, id)
		d.holds = slices.DeleteFunc(d.holds, func(o Offer) bool { return o.Agent == id })
	case r < 18 && len(d.fws) > 1:
		id := d.pick(keys(d.fws))
		d.must(a.RemoveFramework(id))
		delete(d.fws, id)
		delete(d.off, id)
		d.holds = slices.DeleteFunc(d.holds, func(o Offer) bool { return o.Framework == id })
	case r < 24:
		d.reserve()
	case r < 30:
		d.setQuota()
	case r < 34:
		id := d.pick(keys(d.fws))
		role := d.pick(d.fws[id])
		d.must(a.SuppressRoles(id, []string{role}))
		if d.off[id] == nil {
			d.off[id] = map[string]bool{}
		}
		d.off[id][role] = true
	case r < 38:
		id := d.pick(keys(d.fws))
		d.must(a.ReviveRoles(id, nil))
		delete(d.off, id)
		delete(d.until, id)
	case r < 46 && len(d.holds) > 0:
		i := d.rng.IntN(len(d.holds))
		d.recover(d.holds[i], nil)
		d.holds = append(d.holds[:i], d.holds[i+1:]...)
	case r < 50:
		d.fx.clk.Advance(time.Duration(d.rng.IntN(3000)) * time.Millisecond)
	default:
		d.cycle()
	}
	checkInvariants(d.t, a)
}

func (d *roleDriver) must(err error) {
	d.t.Helper()
	if err != nil {
		d.t.Fatal(err)
	}
}

// reserve reserves part of, or unreserves, an agent where nothing is held
// (so that the driver's books and the allocator's agree exactly).
func (d *roleDriver) reserve() {
	id := d.pick(keys(d.agents))
	if slices.ContainsFunc(d.holds, func(o Offer) bool { return o.Agent == id }) {
		return
	}
	var byRole map[string]resources.Resources
	if d.rng.IntN(3) > 0 {
		total := d.agents[id]
		half := resources.Resources{Scalars: total.Scalars}
		for k := range half.Scalars {
			half.Scalars[k] /= 2
		}
		byRole = map[string]resources.Resources{d.pick(roleNames): half.Reservable()}
	}
	d.must(d.fx.a.SetReservations(id, byRole))
	d.resv[id] = byRole
}

// setQuota sets a random quota, which the allocator may refuse (it must
// say why); or removes one.
func (d *roleDriver) setQuota() {
	role := d.pick(roleNames)
	q := Quota{}
	if d.rng.IntN(4) > 0 {
		g := resources.Resources{}.WithScalar("cpus", resources.Quantity(d.rng.IntN(8))*resources.MustParse("cpus:1").Scalars[resources.CPUs])
		q.Guarantees = g
		if d.rng.IntN(2) == 0 {
			q.Limits = g.WithScalar("cpus", g.Scalar("cpus")+resources.MustParse("cpus:"+fmt.Sprint(d.rng.IntN(8))).Scalar("cpus"))
			q.Limited = []string{"cpus"}
		}
	}
	if err := d.fx.a.SetQuota(role, q); err != nil && err.Error() == "" {
		d.t.Fatal("a refused quota must say why")
	}
}

// recover gives back a held offer: its unreserved part with Recover, each
// pool with RecoverReserved; sometimes with a filter.
func (d *roleDriver) recover(o Offer, fl *Filter) {
	unres := o.Resources
	for pool, r := range o.Reserved {
		d.must(d.fx.a.RecoverFor(o.Framework, o.Agent, o.Role, pool, r, fl))
		unres = unres.Sub(r)
	}
	d.must(d.fx.a.RecoverFor(o.Framework, o.Agent, o.Role, "", unres, fl))
	if fl != nil {
		until := d.fx.clk.Now().Add(time.Duration(max(fl.RefuseSeconds, 1) * float64(time.Second)))
		if until.After(d.until[o.Framework]) {
			d.until[o.Framework] = until
		}
	}
}

func (d *roleDriver) cycle() {
	a := d.fx.a
	out := a.Allocate().Offers
	if d.onCycle != nil {
		d.onCycle(out)
	}
	for _, o := range out {
		d.checkOffer(o)
	}
	d.holds = append(d.holds, out...)
	d.checkHeld()
	d.checkLimits(out)
	d.checkHeadroom(out)
	d.checkGuarantees()
	// keep some, decline the rest (some with a filter)
	var kept []Offer
	for _, o := range d.holds {
		if !slices.ContainsFunc(out, func(n Offer) bool { return n.Agent == o.Agent && n.Framework == o.Framework && n.Role == o.Role }) || d.rng.IntN(2) == 0 {
			kept = append(kept, o)
			continue
		}
		var fl *Filter
		if d.rng.IntN(2) == 0 {
			fl = &Filter{RefuseSeconds: 2}
		}
		d.recover(o, fl)
	}
	d.holds = kept
}

// checkOffer: the role is one of the framework's and not suppressed; a
// reservation is offered only inside its role's subtree, whole.
func (d *roleDriver) checkOffer(o Offer) {
	if !slices.Contains(d.fws[o.Framework], o.Role) {
		d.t.Fatalf("offer to %s for role %q, not one of its roles %v", o.Framework, o.Role, d.fws[o.Framework])
	}
	if d.off[o.Framework][o.Role] {
		d.t.Fatalf("offer to %s for suppressed role %q", o.Framework, o.Role)
	}
	for pool, r := range o.Reserved {
		if !resources.IsRoleOrDescendant(o.Role, pool) {
			d.t.Fatalf("%s offered %s reserved for %q to role %q, outside its subtree", o.Framework, r, pool, o.Role)
		}
		if !o.Resources.Contains(r) {
			d.t.Fatalf("offer %s does not contain its reserved part %s", o.Resources, r)
		}
	}
}

// checkHeld: nothing is allocated twice: per agent, what is held fits the
// total, and what is held of each pool fits the pool.
func (d *roleDriver) checkHeld() {
	held := map[string]resources.Resources{}
	pools := map[string]resources.Resources{}
	for _, o := range d.holds {
		held[o.Agent] = held[o.Agent].Add(o.Resources)
		for pool, r := range o.Reserved {
			pools[o.Agent+"/"+pool] = pools[o.Agent+"/"+pool].Add(r)
		}
	}
	for ag, h := range held {
		if !d.agents[ag].Reservable().Contains(h) {
			d.t.Fatalf("agent %s: %s held, more than its total %s", ag, h, d.agents[ag])
		}
		for pool, r := range d.resv[ag] {
			if p := pools[ag+"/"+pool]; !r.Contains(p) {
				d.t.Fatalf("agent %s: %s held of %q's reservation %s", ag, p, pool, r)
			}
		}
	}
}

// consumption is, per role, what it has reserved plus what its subtree
// holds unreserved, from the driver's books.
func (d *roleDriver) consumption() map[string]resources.Resources {
	c := map[string]resources.Resources{}
	add := func(role string, r resources.Resources) {
		r = resources.Resources{Scalars: r.Scalars, Extra: r.Extra}
		c[role] = c[role].Add(r)
		for _, p := range resources.RoleAncestors(role) {
			c[p] = c[p].Add(r)
		}
	}
	for _, byRole := range d.resv {
		for role, r := range byRole {
			add(role, r)
		}
	}
	for _, o := range d.holds {
		unres := o.Resources
		for _, r := range o.Reserved {
			unres = unres.Sub(r)
		}
		add(o.Role, unres)
	}
	return c
}

// checkLimits: no role is above a limit in a kind it was offered
// unreserved resources of in this cycle (a limit lowered below what a role
// holds already is not a violation: Mesos does not take back).
func (d *roleDriver) checkLimits(out []Offer) {
	c := d.consumption()
	for role, q := range d.fx.a.Quotas() {
		for _, nm := range q.Limited {
			if c[role].Scalar(nm) <= q.Limits.Scalar(nm) {
				continue
			}
			for _, o := range out {
				unres := o.Resources
				for _, r := range o.Reserved {
					unres = unres.Sub(r)
				}
				if resources.IsRoleOrDescendant(o.Role, role) && unres.Scalar(nm) > 0 {
					d.t.Fatalf("role %q consumes %s of %s, above its limit %s, after an offer of %s to %s", role, c[role].Scalar(nm), nm, q.Limits.Scalar(nm), unres, o.Role)
				}
			}
		}
	}
}

// unmet is, per role with a guarantee, what of it is not consumed.
func (d *roleDriver) unmet() map[string]resources.Resources {
	c := d.consumption()
	out := map[string]resources.Resources{}
	for role, q := range d.fx.a.Quotas() {
		if u := q.Guarantees.Sub(c[role]); !u.IsEmpty() {
			out[role] = u
		}
	}
	return out
}

// freeUnreserved is, per agent, what is neither held nor reserved.
func (d *roleDriver) freeUnreserved() map[string]resources.Resources {
	free := map[string]resources.Resources{}
	for ag, total := range d.agents {
		f := total.Reservable()
		for _, r := range d.resv[ag] {
			f = f.Sub(r)
		}
		free[ag] = f
	}
	for _, o := range d.holds {
		unres := o.Resources
		for _, r := range o.Reserved {
			unres = unres.Sub(r)
		}
		free[o.Agent] = free[o.Agent].Sub(unres)
	}
	return free
}

// checkHeadroom: once a role without a guarantee was offered unreserved
// resources, what is left free and unreserved still covers every unmet
// guarantee (of the topmost guaranteed roles).
func (d *roleDriver) checkHeadroom(out []Offer) {
	quotas := d.fx.a.Quotas()
	fairShare := false
	for _, o := range out {
		unres := o.Resources
		for _, r := range o.Reserved {
			unres = unres.Sub(r)
		}
		if _, ok := quotas[o.Role]; !ok && !scalarsOf(unres).IsEmpty() {
			fairShare = true
		}
	}
	if !fairShare {
		return
	}
	var need, free resources.Resources
	for role, u := range d.unmet() {
		top := true
		for _, p := range resources.RoleAncestors(role) {
			if q, ok := quotas[p]; ok && !q.Guarantees.IsEmpty() {
				top = false
			}
		}
		if top {
			need = need.Add(u)
		}
	}
	for _, f := range d.freeUnreserved() {
		free = free.Add(scalarsOf(f))
	}
	if !free.Contains(need) {
		for role := range quotas {
			n := d.fx.a.roleTree[role]
			d.t.Logf("role %s: consumption %s (driver %s) unres %s reserved %s", role, n.consumption(), d.consumption()[role], n.unres, n.reserved)
		}
		d.t.Fatalf("roles without a guarantee were offered resources, leaving %s free for unmet guarantees of %s\noffers %+v\nquotas %+v\nresv %v", free, need, out, quotas, d.resv)
	}
}

// checkGuarantees: a role with an unmet guarantee and a framework that
// wants offers (active, the role not suppressed, no filters) is left no
// unreserved cpus or mem it could have been offered: the quota stage
// runs before any fair share.
func (d *roleDriver) checkGuarantees() {
	now := d.fx.clk.Now()
	c := d.consumption()
	quotas := d.fx.a.Quotas()
	free := d.freeUnreserved()
	floor := map[string]resources.Quantity{"cpus": resources.MustParse("cpus:0.01").Scalar("cpus"), "mem": resources.MustParse("mem:32").Scalar("mem")}
	for role, u := range d.unmet() {
		wants := false
		for id, roles := range d.fws {
			if slices.Contains(roles, role) && !d.off[id][role] && !now.Before(d.until[id]) && !d.idle[id] {
				wants = true
			}
		}
		if !wants {
			continue
		}
		for nm, fl := range floor {
			need := u.Scalar(nm)
			for _, p := range append([]string{role}, resources.RoleAncestors(role)...) {
				if q, ok := quotas[p]; ok && q.limited(nm) {
					need = min(need, q.Limits.Scalar(nm)-c[p].Scalar(nm))
				}
			}
			if need < fl {
				continue
			}
			for ag, f := range free {
				if min(f.Scalar(nm), need) >= fl {
					d.t.Fatalf("role %q is %s short of its guarantee of %s, yet agent %s has %s free and unreserved", role, u, nm, ag, f)
				}
			}
		}
	}
}

// TestPropertyRoles runs random event sequences with roles, quota and
// reservations under several criteria and checks the role properties
// after every cycle.
func TestPropertyRoles(t *testing.T) {
	steps := 600
	if testing.Short() {
		steps = 150
	}
	for _, crit := range []string{"drf", "psdsf", "random", "tsf"} {
		for seed := uint64(1); seed <= 6; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", crit, seed), func(t *testing.T) {
				d := newRoleDriver(t, crit, seed)
				for i := 0; i < steps; i++ {
					d.step()
				}
			})
		}
	}
}
