package allocator

import (
	"math"
	"slices"
	"sort"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Which framework of a role the role-aware cycle serves on an agent: the
// criterion's best (lowest score, then lowest index) among those that
// want the role's offers, were not granted on the agent for the role yet
// and have no filter against the offer.
//
// Where the score does not depend on what is left on the agent (an
// Ordering's key, or a CapacityScored criterion's score on the agent's
// capacity), each role keeps its members sorted by score, one order per
// capacity class, and the pick is the first eligible member: scoring
// every member on every agent was most of a pick. An order is built the
// first time a cycle needs it (keys change between cycles: recovered
// resources, new totals) and kept sorted through the cycle's grants, the
// only thing that changes a score within a cycle. Other criteria, a score
// that does not order (NaN), and Config.bruteForce take the scan, which
// the orders are tested against.

// rankedFw is a member of a role order: its score and index.
type rankedFw struct {
	key float64
	idx int32
}

func rankedLess(x, y rankedFw) bool {
	if x.key != y.key {
		return x.key < y.key
	}
	return x.idx < y.idx
}

// roleOrder is one role's members sorted by (score, index) on agents of
// one capacity class.
type roleOrder struct {
	cycle uint32       // the role-aware cycle it was built in; stale if another
	nan   bool         // a score is NaN: no order, the pick scans
	view  sorter.Agent // the class's capacity, for a CapacityScored score
	items []rankedFw
}

// orderKind says which orders the cycle keeps, set by prepareOrders.
type orderKind uint8

const (
	noOrders    orderKind = iota // scan every member on every agent
	keyOrders                    // an Ordering: one order per role
	classOrders                  // a CapacityScored criterion: one per role and capacity
)

// prepareOrders decides, at the start of a cycle, which orders the picks
// read, and numbers the capacity classes.
func (a *Allocator) prepareOrders() {
	rc := &a.rc
	rc.orders, rc.classCrit = noOrders, nil
	if a.cfg.bruteForce {
		return
	}
	switch a.rank.(type) {
	case byKey:
		rc.orders = keyOrders
		return
	case byFactors, byScore:
		cs, ok := a.crit.(sorter.CapacityScored)
		if !ok || len(a.capClasses) > maxClassOrders {
			return
		}
		rc.orders, rc.classCrit = classOrders, cs
	default:
		return
	}
	clear(rc.classOf)
	if rc.classOf == nil {
		rc.classOf = map[resources.Vector]int{}
	}
	rc.classViews = rc.classViews[:0]
	for c := range a.capClasses {
		rc.classOf[c] = len(rc.classViews)
		rc.classViews = append(rc.classViews, sorter.Agent{Capacity: c})
	}
}

// orderOf is n's order for ag, built if this cycle has not yet; nil where
// the pick must scan.
func (a *Allocator) orderOf(n *roleNode, ag *agent) *roleOrder {
	rc := &a.rc
	ci := 0
	switch rc.orders {
	case noOrders:
		return nil
	case classOrders:
		if len(rc.classViews) > 1 {
			ci = rc.classOf[ag.view.Capacity]
		}
	}
	for len(n.orders) <= ci {
		n.orders = append(n.orders, roleOrder{})
	}
	o := &n.orders[ci]
	if o.cycle != rc.cycle {
		if rc.orders == classOrders {
			o.view = rc.classViews[ci]
		}
		a.buildOrder(n, o)
	}
	if o.nan {
		return nil
	}
	return o
}

// buildOrder sorts n's members into o for this cycle.
func (a *Allocator) buildOrder(n *roleNode, o *roleOrder) {
	o.cycle, o.nan = a.rc.cycle, false
	o.items = o.items[:0]
	for _, i := range n.fws {
		k := a.orderScore(a.fws[i], o)
		o.nan = o.nan || math.IsNaN(k)
		o.items = append(o.items, rankedFw{k, i})
	}
	if !o.nan {
		slices.SortFunc(o.items, func(x, y rankedFw) int {
			if rankedLess(x, y) {
				return -1
			}
			return 1 // (score, index) pairs are distinct
		})
	}
}

// orderScore is f's score in o: what rank.score gives on any agent of
// o's class.
func (a *Allocator) orderScore(f *framework, o *roleOrder) float64 {
	if a.rc.orders == keyOrders {
		return f.skey
	}
	return a.rc.classCrit.Score(&f.view, &o.view, &a.cluster)
}

// reorderBefore notes, before f is granted, where f sits in every order
// of this cycle that holds it; reorderAfter moves it to its new score.
func (a *Allocator) reorderBefore(f *framework, n *roleNode) {
	rc := &a.rc
	rc.moves = rc.moves[:0]
	if rc.orders == noOrders {
		return
	}
	note := func(m *roleNode) {
		for i := range m.orders {
			if o := &m.orders[i]; o.cycle == rc.cycle && !o.nan {
				rc.moves = append(rc.moves, orderMove{o, a.orderScore(f, o)})
			}
		}
	}
	if len(f.roles) == 1 {
		note(n) // f's one role is the role it is granted for
		return
	}
	for _, r := range f.roles {
		note(a.roleTree[r])
	}
}

// orderMove is an order to move a framework in, and its score there before
// the grant.
type orderMove struct {
	o   *roleOrder
	old float64
}

func (a *Allocator) reorderAfter(f *framework) {
	for _, mv := range a.rc.moves {
		o := mv.o
		k := a.orderScore(f, o)
		if math.IsNaN(k) {
			o.nan = true
			continue
		}
		o.move(rankedFw{mv.old, f.idx}, rankedFw{k, f.idx})
	}
}

// move repositions from (found by binary search at its old score) at to,
// shifting only the members in between.
func (o *roleOrder) move(from, to rankedFw) {
	s := o.items
	i := sort.Search(len(s), func(k int) bool { return !rankedLess(s[k], from) })
	if i == len(s) || s[i] != from {
		i = slices.IndexFunc(s, func(r rankedFw) bool { return r.idx == from.idx })
	}
	if right := s[i+1:]; len(right) > 0 && rankedLess(right[0], to) {
		j := sort.Search(len(right), func(k int) bool { return rankedLess(to, right[k]) })
		copy(s[i:i+j], right[:j])
		s[i+j] = to
		return
	}
	left := s[:i]
	j := sort.Search(len(left), func(k int) bool { return rankedLess(to, left[k]) })
	copy(s[j+1:i+1], s[j:i])
	s[j] = to
}

// pickInRole is the framework of role n that the criterion serves first
// on ag with offer: active, the role not suppressed, wanting something,
// not filtered, not already granted on this agent for this role.
func (a *Allocator) pickInRole(n *roleNode, ag *agent, offer resources.Resources) (*framework, float64) {
	if d, isDraw := a.rank.(byDraw); isDraw {
		return a.sampleExact(d.s, n.fws, func(f *framework) bool { return a.mayOffer(f, n, ag, offer) })
	}
	if o := a.orderOf(n, ag); o != nil {
		for _, r := range o.items {
			if f := a.fws[r.idx]; a.mayOffer(f, n, ag, offer) {
				return f, r.key
			}
		}
		return nil, math.Inf(1)
	}
	// The best by score is seldom filtered: find it first and look at the
	// filters once, rather than once per framework that betters the best
	// so far. Scores that do not order (NaN) take the full scan.
	var best *framework
	bs := math.Inf(1)
	for _, i := range n.fws {
		f := a.fws[i]
		if !a.wantsRole(f, n) || a.granted(f) {
			continue
		}
		s := a.rank.score(f, ag, &a.cluster)
		if math.IsNaN(s) {
			return a.pickInRoleScan(n, ag, offer)
		}
		if best == nil || s < bs || s == bs && f.idx < best.idx {
			best, bs = f, s
		}
	}
	if best == nil || !a.blocked(best, ag, offer) {
		return best, bs
	}
	return a.pickInRoleScan(n, ag, offer)
}

// pickInRoleScan is pickInRole's full scan, which checks the filters of
// every framework that betters the best so far.
func (a *Allocator) pickInRoleScan(n *roleNode, ag *agent, offer resources.Resources) (*framework, float64) {
	var best *framework
	bs := math.Inf(1)
	for _, i := range n.fws {
		f := a.fws[i]
		if !a.wantsRole(f, n) {
			continue
		}
		s := a.rank.score(f, ag, &a.cluster)
		if best != nil && !(s < bs || s == bs && f.idx < best.idx) {
			continue // the filter check is the dear part: only for a better one
		}
		if a.granted(f) || a.blocked(f, ag, offer) {
			continue
		}
		best, bs = f, s
	}
	return best, bs
}

// mayOffer reports whether f may be offered offer on ag for role n.
func (a *Allocator) mayOffer(f *framework, n *roleNode, ag *agent, offer resources.Resources) bool {
	return a.wantsRole(f, n) && !a.granted(f) && !a.blocked(f, ag, offer)
}
