package allocator

import (
	"fmt"
	"strings"
	"time"

	"github.com/allot-sched/allot/resources"
)

// Placement feedback: why a framework was offered nothing lately, in the
// terms an operator acts on (a resource and how many agents have it, a
// role's quota, a filter, a suppression). It is computed on demand from
// what the allocator already holds, so it costs the cycle only the
// bookkeeping of which frameworks were offered something (notePlaced).

// UnplacedKind names the reason a framework gets no offers.
type UnplacedKind string

// The reasons, from the framework's own state to the cluster's.
const (
	Placeable    UnplacedKind = ""           // nothing stands in its way
	Inactive     UnplacedKind = "inactive"   // disconnected
	Suppressed   UnplacedKind = "suppressed" // asked for no offers
	DemandMet    UnplacedKind = "demand_met" // declared 0 more tasks
	NoAgents     UnplacedKind = "no_agents"  // no agent registered
	TooBig       UnplacedKind = "too_big"    // larger than every agent's total
	QuotaLimit   UnplacedKind = "quota_limit"
	NoRoom       UnplacedKind = "no_room" // fits some agent's total, none's free
	Filtered     UnplacedKind = "filtered"
	WaitingOrder UnplacedKind = "waiting" // eligible; the criterion orders others first
)

// Blocked reports whether the reason is the cluster's, not the
// framework's own choice: what the unplaceable count counts.
func (k UnplacedKind) Blocked() bool {
	switch k {
	case NoAgents, TooBig, QuotaLimit, NoRoom, Filtered:
		return true
	}
	return false
}

// Unplaced is the allocator's account of why a framework was offered
// nothing.
type Unplaced struct {
	Framework string
	// Idle is how many cycles ran since its last offer (or since it
	// registered, if it never had one).
	Idle int64
	Kind UnplacedKind
	// Dimension is the resource that stands in the way ("cpus"), where
	// one does.
	Dimension string
	// Never is set when no registered agent could ever run its task: the
	// task is larger than every agent's total.
	Never   bool
	Message string
	// Agents are, for Filtered, the agents that had room and refused by
	// a filter: the master names a filter of its own (an agent with GPUs
	// withheld from a framework without GPU_RESOURCES) from them.
	Agents []string
}

// notePlaced counts the cycle and stamps the frameworks it offered to.
func (a *Allocator) notePlaced() {
	a.cycles++
	for i := range a.out {
		if j, ok := a.fwByID[a.out[i].Framework]; ok {
			a.fws[j].lastOffer = a.cycles
		}
	}
}

// WhyNothing says why framework fwID would get no offer in the next
// cycle, or that nothing stands in its way (Kind Placeable or
// WaitingOrder), with how many cycles it went without one.
func (a *Allocator) WhyNothing(fwID string) (Unplaced, error) {
	f, err := a.framework(fwID)
	if err != nil {
		return Unplaced{}, err
	}
	u := a.whyNothing(f)
	u.Framework, u.Idle = f.id, a.cycles-f.lastOffer
	return u, nil
}

// IdleCycles is how many cycles ran since framework fwID's last offer (or
// its registration): cheap, so callers ask it before WhyNothing, which
// walks every agent.
func (a *Allocator) IdleCycles(fwID string) (int64, error) {
	f, err := a.framework(fwID)
	if err != nil {
		return 0, err
	}
	return a.cycles - f.lastOffer, nil
}

// Unplaceable lists, in registration order, the frameworks that went at
// least minIdle cycles without an offer for a reason of the cluster's
// (Blocked), not their own.
func (a *Allocator) Unplaceable(minIdle int64) []Unplaced {
	var out []Unplaced
	for _, f := range a.fws {
		if f == nil || a.cycles-f.lastOffer < minIdle {
			continue
		}
		if u, _ := a.WhyNothing(f.id); u.Kind.Blocked() {
			out = append(out, u)
		}
	}
	return out
}

func (a *Allocator) whyNothing(f *framework) Unplaced {
	switch {
	case !f.active:
		return Unplaced{Kind: Inactive, Message: "inactive (disconnected): no offers until it re-subscribes"}
	case f.suppressed || a.allRolesSuppressed(f):
		return Unplaced{Kind: Suppressed, Message: "suppressed: it asked for no offers; a revive ends it"}
	case f.hasDemand && f.want == 0:
		return Unplaced{Kind: DemandMet, Message: "no outstanding demand: it declared 0 more tasks"}
	case a.nAgents == 0:
		return Unplaced{Kind: NoAgents, Message: "no agent is registered"}
	}
	if !f.hasDemand {
		return a.whyWhole(f)
	}
	if u, ok := a.whyTooBig(f.task); ok {
		return u
	}
	if u, ok := a.whyQuota(f, f.task); ok {
		return u
	}
	return a.whyTask(f)
}

func (a *Allocator) allRolesSuppressed(f *framework) bool {
	if len(f.roff) == 0 {
		return false
	}
	for _, r := range a.rolesOf(f) {
		if !f.roff[r] {
			return false
		}
	}
	return true
}

func (a *Allocator) rolesOf(f *framework) []string {
	if len(f.roles) > 0 {
		return f.roles
	}
	return []string{f.role}
}

// dimStats is one resource's spread over the live agents.
type dimStats struct {
	k                  resources.Kind
	need               resources.Quantity
	maxTotal, maxFree  resources.Quantity
	atMaxTotal         int // agents whose total is maxTotal
	atMaxFree          int // agents whose free is maxFree
	totalFit, freeFitN int // agents whose total / free reach need
}

// stats measures each resource the task needs over the live agents; free
// is what the framework could be offered of an agent.
func (a *Allocator) stats(f *framework, task resources.Vector) []dimStats {
	var out []dimStats
	for k := resources.Kind(0); k < resources.NumKinds; k++ {
		if task[k] > 0 && !k.Advisory() {
			out = append(out, dimStats{k: k, need: task[k], maxTotal: -1, maxFree: -1})
		}
	}
	for _, ag := range a.agents {
		if ag == nil {
			continue
		}
		var free resources.Vector
		if f != nil {
			free = a.usableFree(f, ag).Scalars
		}
		for i := range out {
			d := &out[i]
			d.maxTotal, d.atMaxTotal = tally(d.maxTotal, d.atMaxTotal, ag.total.Scalars[d.k])
			d.maxFree, d.atMaxFree = tally(d.maxFree, d.atMaxFree, free[d.k])
			if ag.total.Scalars[d.k] >= d.need {
				d.totalFit++
			}
			if free[d.k] >= d.need {
				d.freeFitN++
			}
		}
	}
	return out
}

func tally(best resources.Quantity, n int, v resources.Quantity) (resources.Quantity, int) {
	switch {
	case v > best:
		return v, 1
	case v == best:
		return best, n + 1
	}
	return best, n
}

// whyTooBig reports a task no live agent's total holds.
func (a *Allocator) whyTooBig(task resources.Vector) (Unplaced, bool) {
	for _, ag := range a.agents {
		if ag != nil && ag.total.Scalars.Contains(task) {
			return Unplaced{}, false
		}
	}
	st := a.stats(nil, task)
	for _, d := range st {
		if d.totalFit == 0 {
			return Unplaced{Kind: TooBig, Dimension: d.k.String(), Never: true, Message: fmt.Sprintf(
				"needs %s %s; the largest agent has %s %s in total (%s); 0 of %s have %s %s in total: no agent can ever run this task",
				d.k, d.need, d.maxTotal, d.k, agentsN(d.atMaxTotal), agentsN(a.nAgents), d.need, d.k)}, true
		}
	}
	return Unplaced{Kind: TooBig, Dimension: st[0].k.String(), Never: true, Message: fmt.Sprintf(
		"needs %s on one agent; each resource fits some agent but no agent has them all in total: no agent can ever run this task",
		needText(task))}, true
}

// whyQuota reports a framework every one of whose roles (or an ancestor)
// has a limit that one more task would pass.
func (a *Allocator) whyQuota(f *framework, task resources.Vector) (Unplaced, bool) {
	if len(a.quotas) == 0 {
		return Unplaced{}, false
	}
	var first Unplaced
	for i, r := range a.rolesOf(f) {
		u, ok := a.roleAtLimit(r, task)
		if !ok {
			return Unplaced{}, false
		}
		if i == 0 {
			first = u
		}
	}
	return first, true
}

func (a *Allocator) roleAtLimit(role string, task resources.Vector) (Unplaced, bool) {
	for _, name := range append([]string{role}, resources.RoleAncestors(role)...) {
		n, ok := a.roleTree[name]
		if !ok || !n.hasQ {
			continue
		}
		used := n.consumption().Scalars
		for k := resources.Kind(0); k < resources.NumKinds; k++ {
			if task[k] == 0 || !n.quota.limited(k.String()) {
				continue
			}
			limit := n.quota.Limits.Scalars[k]
			if used[k]+task[k] > limit {
				return Unplaced{Kind: QuotaLimit, Dimension: k.String(), Never: task[k] > limit, Message: fmt.Sprintf(
					"role %s at its quota limit (%s %s): it consumes %s %s and a task needs %s more",
					name, k, limit, used[k], k, task[k])}, true
			}
		}
	}
	return Unplaced{}, false
}

// whyTask explains a task that some agent's total holds but that is not
// offered: no agent has it free, or the agents that do are filtered.
func (a *Allocator) whyTask(f *framework) Unplaced {
	want := resources.Resources{Scalars: f.task}
	var fits []*agent
	for _, ag := range a.agents {
		if ag != nil && a.usableFree(f, ag).Contains(want) {
			fits = append(fits, ag)
		}
	}
	if len(fits) == 0 {
		st := a.stats(f, f.task)
		d := st[0]
		for _, s := range st {
			if s.freeFitN == 0 {
				d = s
				break
			}
		}
		return Unplaced{Kind: NoRoom, Dimension: d.k.String(), Message: fmt.Sprintf(
			"needs %s %s; largest free %s on %s; %s have %s %s in total",
			d.k, d.need, d.maxFree, agentsN(d.atMaxFree), agentsN(d.totalFit), d.need, d.k)}
	}
	if a.cfg.Mode != Characterized {
		want = resources.Resources{} // a whole agent's free part is what is refused
	}
	return a.whyFiltered(f, fits, want)
}

// whyWhole explains a framework without a declared demand: it is offered
// whole agents' free resources above the min-allocatable floor.
func (a *Allocator) whyWhole(f *framework) Unplaced {
	var fits []*agent
	for _, ag := range a.agents {
		if ag != nil && a.allocatable(a.usableFree(f, ag)) {
			fits = append(fits, ag)
		}
	}
	if len(fits) == 0 {
		return Unplaced{Kind: NoRoom, Message: fmt.Sprintf(
			"no agent has free resources above the min-allocatable floor %s (it declared no demand: a REQUEST says what a task needs)", a.minAlloc)}
	}
	return a.whyFiltered(f, fits, resources.Resources{})
}

// whyFiltered reports the agents that could serve f and all refuse it by
// a filter, with the earliest time one lifts; want is what would be
// offered (empty: each agent's usable free part).
func (a *Allocator) whyFiltered(f *framework, fits []*agent, want resources.Resources) Unplaced {
	now := a.clock.Now()
	var first time.Time
	ids := make([]string, 0, len(fits))
	for _, ag := range fits {
		ids = append(ids, ag.id)
		w := want
		if w.IsEmpty() {
			w = a.usableFree(f, ag)
		}
		var until time.Time
		for _, fl := range ag.filters {
			if fl.fw == f.idx && now.Before(fl.until) && fl.res.Contains(w) && fl.until.After(until) {
				until = fl.until
			}
		}
		if until.IsZero() {
			return Unplaced{Kind: WaitingOrder, Message: fmt.Sprintf(
				"eligible on %s; %s decides the order (its score %.6g)", agentsN(len(fits)), a.crit.Name(), f.skey)}
		}
		if first.IsZero() || until.Before(first) {
			first = until
		}
	}
	return Unplaced{Kind: Filtered, Agents: ids, Message: fmt.Sprintf(
		"every fitting agent (%s) declined with a filter until %s (in %s) or a revive",
		agentsN(len(fits)), first.UTC().Format(time.RFC3339), HumanDuration(first.Sub(now)))}
}

// usableFree is what of ag's free resources f may be offered: all of it
// outside role mode; in role mode the unreserved part plus the free part
// of pools reserved for one of its roles or an ancestor of one.
func (a *Allocator) usableFree(f *framework, ag *agent) resources.Resources {
	if !a.rm || len(ag.poolNames) == 0 {
		return ag.avail.Reservable()
	}
	free := a.unreservedFree(ag)
	for _, name := range ag.poolNames {
		for _, r := range a.rolesOf(f) {
			if resources.IsRoleOrDescendant(r, name) {
				free = free.Add(ag.pools[name].free)
				break
			}
		}
	}
	return free
}

func agentsN(n int) string {
	if n == 1 {
		return "1 agent"
	}
	return fmt.Sprintf("%d agents", n)
}

func needText(task resources.Vector) string {
	var parts []string
	for k := resources.Kind(0); k < resources.NumKinds; k++ {
		if task[k] > 0 && !k.Advisory() {
			parts = append(parts, fmt.Sprintf("%s %s", k, task[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// HumanDuration rounds d for a person: whole seconds from a minute up,
// tenths of a second from a second up, milliseconds below.
func HumanDuration(d time.Duration) string {
	abs := d
	if abs < 0 {
		abs = -abs
	}
	switch {
	case abs >= time.Minute:
		return d.Round(time.Second).String()
	case abs >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	case abs >= time.Millisecond:
		return d.Round(time.Millisecond).String()
	}
	return d.String()
}
