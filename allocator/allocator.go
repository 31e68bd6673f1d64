package allocator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/allocator/policy/fsp"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

type agent struct {
	// what a cycle's visit of the agent reads and writes comes first, so
	// that a visit touches as few cache lines of it as it can
	id      string
	idx     int32
	version uint32              // bumped on every change of avail during a cycle
	avail   resources.Resources // total minus everything allocated
	holds   []holding
	filters []filter
	// poolList is the agent's reservations (pools, below) in the order of
	// their roles' names, which the role-aware cycle walks rather than
	// look names up; parts
	// say, in role mode only, who holds what for which role from which
	// pool (reserve.go).
	poolList []*pool
	parts    []part
	// qcycle is the role-aware cycle whose quota stage made an offer on
	// the agent, so that the fair-share stage looks for one to add to
	// only where there can be one; those offers are out[qfirst:qend].
	qcycle       uint32
	qfirst, qend int32
	npend        int32 // holdings with pending tasks this cycle
	view         sorter.Agent
	total        resources.Resources
	attrs        map[string]string
	// pools are the agent's reservations by role, poolNames their roles
	// sorted.
	pools     map[string]*pool
	poolNames []string
}

// holding is what one framework holds on one agent. Scalars are inline and
// ports or extra scalars sit behind a pointer that is nil in the common
// case, so the progressive-filling hot path allocates nothing per task.
type holding struct {
	fw      int32
	pend    int32 // tasks' worth placed this cycle, not yet turned into an offer
	tasks   int64
	scalars resources.Vector
	other   *resources.Resources // ports and extra scalars, if any
	pscore  float64              // score at the first pending task
}

// res returns everything the holding holds.
func (h *holding) res() resources.Resources {
	r := resources.Resources{Scalars: h.scalars}
	if h.other != nil {
		r.Extra, r.Ports = h.other.Extra, h.other.Ports
	}
	return r
}

// set replaces what the holding holds.
func (h *holding) set(r resources.Resources) {
	h.scalars = r.Scalars
	h.other = nil
	if len(r.Extra) > 0 || len(r.Ports) > 0 {
		h.other = &resources.Resources{Extra: r.Extra, Ports: r.Ports}
	}
}

type filter struct {
	fw    int32
	until time.Time
	res   resources.Resources
}

type framework struct {
	id        string
	role      string              // the first of roles: its weight is the framework's
	roles     []string            // every role it is subscribed to (MULTI_ROLE)
	alloc     resources.Resources // scalars only: ports are tracked per agent
	demand    resources.Resources
	task      resources.Vector // reserved per task: demand without advisory bandwidth
	hasDemand bool
	want      int64 // outstanding tasks' worth; < 0 unlimited
	view      sorter.Framework
	// what a pick reads of every framework it passes, in one cache line:
	// whether it takes offers (the role-aware cycle asks) and whether it
	// is filtered (every path asks)
	roff       map[string]bool // roles suppressed, nil if none
	active     bool
	suppressed bool
	idx        int32
	nfilters   int
	// filterAgents lists the agents (by idx) where it may have filters: a
	// superset, with repeats, that Revive walks instead of every agent.
	filterAgents []int32
	key          float64 // key in the oblivious order (global set)
	skey         float64 // key in its shape's order
	inGlobal     bool
	shape        int32 // shape index while in a shape set, else -1
	// app is the application demand declared with the AppDemand signal (gang.go),
	// nil if none; only the gang path serves such a framework.
	app *profile.AppDemand
	// lastOffer is the cycle of its last offer, or of its registration
	// if none yet: how long it has gone without (placement.go).
	lastOffer int64
}

// Allocator is the offer machine. Create it with New.
type Allocator struct {
	cfg      Config
	crit     sorter.Criterion
	rank     ranking // the criterion's shape, chosen in New (paths.go)
	path     filler  // the fill path, chosen in New (paths.go)
	minAlloc []resources.Resources
	// minAllocVec is minAlloc as vectors where no floor names ports or
	// another scalar (allocatable reads them), else nil
	minAllocVec []resources.Vector
	rng         *rand.Rand
	clock       Clock
	models      []policy.Model // stateful policies' state (model.go)

	agents     []*agent // by index; nil once removed
	agentByID  map[string]int32
	fws        []*framework
	fwByID     map[string]int32
	weights    map[string]float64
	cluster    sorter.Cluster
	nAgents    int
	capClasses map[resources.Vector]int // capacity vector -> agents with it (TSF's N_n)

	global     orderedSet // frameworks served as in oblivious mode
	shapes     []*shape
	active     []*shape // shapes with members, gathered at each fill's start
	shapeByVec map[resources.Vector]int32
	keysDirty  bool // cluster totals changed: every key must be recomputed
	// classes keeps one framework order per agent capacity for
	// CapacityScored criteria in coarse rrr offers (nil when off);
	// classCrit is that criterion, nil when the path does not use them.
	classes   map[resources.Vector]*classOrder
	classCrit sorter.CapacityScored

	// roles (roles.go): the tree by name, its top level, the roles with
	// quota, and what decides role mode (settleRoleMode)
	roleTree       map[string]*roleNode
	roleTop        []*roleNode
	roleOrderDirty bool
	quotas         map[string]bool
	nMulti, nHier  int // frameworks with several roles, with a nested role
	nResvAgents    int // agents with reservations
	rm             bool
	rc             roleCycle // per-cycle state of the role-aware fill
	cycles         int64     // cycles run, for placement feedback (placement.go)

	// scratch reused across cycles
	perm      []int32
	touched   []int32 // agents with pending placements this cycle
	out       []Offer
	sampDirty bool // the global set changed: a sampler's prefix sums are stale
}

// New returns an allocator for cfg. It fails on a missing clock or a
// policy combination that has no meaning, saying which.
func New(cfg Config) (*Allocator, error) {
	if cfg.Clock == nil {
		return nil, fmt.Errorf("allocator: Config.Clock is required")
	}
	if cfg.Sorter == nil {
		cfg.Sorter = sorter.DRF{}
	}
	if cfg.AllocationInterval <= 0 {
		cfg.AllocationInterval = time.Second
	}
	a := &Allocator{
		cfg:        cfg,
		crit:       cfg.Sorter,
		minAlloc:   cfg.MinAllocatable,
		rng:        rand.New(rand.NewPCG(cfg.Seed, 0x616c6c6f74)),
		clock:      cfg.Clock,
		agentByID:  map[string]int32{},
		fwByID:     map[string]int32{},
		weights:    map[string]float64{},
		capClasses: map[resources.Vector]int{},
		shapeByVec: map[resources.Vector]int32{},
	}
	if a.minAlloc == nil {
		a.minAlloc = DefaultMinAllocatable()
	}
	for _, m := range a.minAlloc {
		if len(m.Extra) > 0 || len(m.Ports) > 0 {
			a.minAllocVec = nil
			break
		}
		a.minAllocVec = append(a.minAllocVec, m.Scalars)
	}
	if err := a.choosePath(cfg.Sorter); err != nil {
		return nil, err
	}
	if f, ok := cfg.Sorter.(sorter.FSP); ok {
		a.addModel(fsp.New(f.DRF))
	}
	a.global.keyOf = func(n int32) float64 { return a.fws[n].key }
	return a, nil
}

// Config returns the configuration in force.
func (a *Allocator) Config() Config { return a.cfg }

// AgentInfo describes an agent joining the allocator.
type AgentInfo struct {
	Total      resources.Resources
	Attributes map[string]string
	// Used is what frameworks already hold on the agent (a master rebuilding
	// its allocator after failover passes the running tasks' resources).
	Used map[string]resources.Resources
}

// AddAgent registers an agent. Frameworks named in info.Used must already
// be registered.
func (a *Allocator) AddAgent(id string, info AgentInfo) error {
	if id == "" {
		return fmt.Errorf("add agent: empty id")
	}
	if _, ok := a.agentByID[id]; ok {
		return fmt.Errorf("add agent %q: already registered", id)
	}
	ag := &agent{id: id, idx: int32(len(a.agents)), total: info.Total.Clone(), avail: info.Total.Clone(), attrs: info.Attributes}
	for fid, used := range info.Used {
		n, ok := a.fwByID[fid]
		if !ok {
			return fmt.Errorf("add agent %q: framework %q holding %s is not registered", id, fid, used)
		}
		if !ag.avail.Contains(used.Reservable()) {
			return fmt.Errorf("add agent %q: framework %q holds %s, more than is available (%s)", id, fid, used, ag.avail)
		}
		a.grant(a.fws[n], ag, used.Reservable(), 0)
	}
	a.agents = append(a.agents, ag)
	a.agentByID[id] = ag.idx
	a.nAgents++
	a.cluster.Total = a.cluster.Total.Add(ag.total.Scalars)
	a.capClasses[ag.total.Scalars]++
	ag.view = sorter.Agent{Index: int(ag.idx), Capacity: ag.total.Scalars, Available: ag.avail.Scalars}
	a.keysDirty = true
	if a.rm {
		a.materialize(ag)
	}
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.AgentAdded, Agent: id, Res: ag.total})
	}
	return nil
}

// RemoveAgent forgets an agent; whatever frameworks held on it is gone.
func (a *Allocator) RemoveAgent(id string) error {
	ag, err := a.agent(id)
	if err != nil {
		return fmt.Errorf("remove agent: %w", err)
	}
	for _, h := range ag.holds {
		f := a.fws[h.fw]
		a.leaveSets(f)
		hr := h.res()
		f.alloc = f.alloc.Sub(resources.Resources{Scalars: hr.Scalars, Extra: hr.Extra})
		f.view.Tasks -= h.tasks
		a.frameworkChanged(f)
	}
	for _, fl := range ag.filters {
		a.fws[fl.fw].nfilters--
	}
	a.forgetAgentRoles(ag)
	a.cluster.Total = a.cluster.Total.Sub(ag.total.Scalars)
	if a.capClasses[ag.total.Scalars]--; a.capClasses[ag.total.Scalars] == 0 {
		delete(a.capClasses, ag.total.Scalars)
	}
	a.agents[ag.idx] = nil
	delete(a.agentByID, id)
	a.nAgents--
	a.keysDirty = true
	a.settleRoleMode()
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.AgentRemoved, Agent: id})
	}
	return nil
}

// UpdateAgent changes an agent's total (for example after an operator
// changed its resources). The new total must still contain what is held.
func (a *Allocator) UpdateAgent(id string, total resources.Resources) error {
	ag, err := a.agent(id)
	if err != nil {
		return fmt.Errorf("update agent: %w", err)
	}
	held := ag.total.Reservable().Sub(ag.avail.Reservable())
	if !total.Reservable().Contains(held) {
		return fmt.Errorf("update agent %q: new total %s does not contain what frameworks hold (%s)", id, total, held)
	}
	a.cluster.Total = a.cluster.Total.Sub(ag.total.Scalars).Add(total.Scalars)
	if a.capClasses[ag.total.Scalars]--; a.capClasses[ag.total.Scalars] == 0 {
		delete(a.capClasses, ag.total.Scalars)
	}
	a.capClasses[total.Scalars]++
	ag.total = total.Clone()
	ag.avail = total.Sub(held)
	ag.view.Capacity, ag.view.Available = ag.total.Scalars, ag.avail.Scalars
	a.keysDirty = true
	if a.rm {
		a.clampPools(ag)
	}
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.AgentUpdated, Agent: id, Res: ag.total})
	}
	return nil
}

// AddFramework registers an active framework in role (Mesos "*" if empty).
func (a *Allocator) AddFramework(id, role string) error {
	if id == "" {
		return fmt.Errorf("add framework: empty id")
	}
	if _, ok := a.fwByID[id]; ok {
		return fmt.Errorf("add framework %q: already registered", id)
	}
	if role == "" {
		role = resources.Unreserved
	}
	f := &framework{id: id, idx: int32(len(a.fws)), role: role, active: true, want: -1, shape: -1, lastOffer: a.cycles}
	f.view = sorter.Framework{Index: int(f.idx), Weight: a.weight(role)}
	a.fws = append(a.fws, f)
	a.fwByID[id] = f.idx
	a.subscribe(f, []string{role})
	a.frameworkChanged(f)
	a.settleRoleMode()
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.FrameworkAdded, Framework: id})
	}
	return nil
}

// RemoveFramework forgets a framework; what it held returns to the agents.
func (a *Allocator) RemoveFramework(id string) error {
	f, err := a.framework(id)
	if err != nil {
		return fmt.Errorf("remove framework: %w", err)
	}
	f.active = false
	a.frameworkChanged(f) // leaves every set
	a.dropParts(f)
	for _, ag := range a.agents {
		if ag == nil {
			continue
		}
		for i := 0; i < len(ag.holds); i++ {
			if ag.holds[i].fw == f.idx {
				ag.avail = ag.avail.Add(ag.holds[i].res())
				ag.view.Available = ag.avail.Scalars
				ag.holds = append(ag.holds[:i], ag.holds[i+1:]...)
				i--
			}
		}
		a.dropFilters(ag, f.idx)
	}
	a.unsubscribe(f)
	a.fws[f.idx] = nil
	delete(a.fwByID, id)
	a.settleRoleMode()
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.FrameworkRemoved, Framework: id})
	}
	return nil
}

// ActivateFramework and DeactivateFramework follow a framework's connection:
// a disconnected framework keeps what it holds but gets no offers.
func (a *Allocator) ActivateFramework(id string) error { return a.setActive(id, true) }

// DeactivateFramework stops offers to a framework without removing it.
func (a *Allocator) DeactivateFramework(id string) error { return a.setActive(id, false) }

func (a *Allocator) setActive(id string, on bool) error {
	f, err := a.framework(id)
	if err != nil {
		return err
	}
	f.active = on
	a.frameworkChanged(f)
	if len(a.models) > 0 {
		kind := policy.FrameworkDeactivated
		if on {
			kind = policy.FrameworkActivated
		}
		a.tell(policy.Event{Kind: kind, Framework: id})
	}
	return nil
}

// Suppress stops offers to a framework until Revive.
func (a *Allocator) Suppress(id string) error {
	f, err := a.framework(id)
	if err != nil {
		return fmt.Errorf("suppress: %w", err)
	}
	f.suppressed = true
	a.frameworkChanged(f)
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.Suppressed, Framework: id})
	}
	return nil
}

// Revive resumes offers to a framework and clears all its filters.
func (a *Allocator) Revive(id string) error {
	f, err := a.framework(id)
	if err != nil {
		return fmt.Errorf("revive: %w", err)
	}
	f.suppressed = false
	f.roff = nil
	a.clearFilters(f)
	a.frameworkChanged(f)
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.Revived, Framework: id})
	}
	return nil
}

// SetDemand declares a framework's per-task demand (the Mesos REQUEST call).
// A zero task vector withdraws the declaration.
func (a *Allocator) SetDemand(id string, d Demand) error {
	f, err := a.framework(id)
	if err != nil {
		return fmt.Errorf("set demand: %w", err)
	}
	task := resources.Resources{Scalars: d.Task.Scalars, Extra: d.Task.Extra}
	if len(d.Task.Ports) > 0 {
		return fmt.Errorf("set demand for %q: a per-task demand is scalars only, not ports", id)
	}
	if len(task.Extra) > 0 {
		return fmt.Errorf("set demand for %q: only cpus, mem, disk, gpus, disk_bw and net_bw may be demanded, not %q", id, task.Extra[0].Name)
	}
	if task.Reservable().IsEmpty() && !task.IsEmpty() {
		return fmt.Errorf("set demand for %q: %s asks only for advisory bandwidth; add cpus or mem", id, task)
	}
	a.leaveSets(f)
	f.demand = task.Clone()
	f.task = task.Reservable().Scalars
	f.hasDemand = !task.IsEmpty()
	f.want = int64(d.Tasks)
	if d.Tasks < 0 {
		f.want = -1
	}
	a.frameworkChanged(f)
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.DemandSet, Framework: id, Res: f.demand, Tasks: d.Tasks})
	}
	return nil
}

// SetWeights sets role weights (phi); roles not named keep theirs (1 by
// default). Weights must be positive and finite.
func (a *Allocator) SetWeights(w map[string]float64) error {
	for role, v := range w {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("weight of role %q is %v: must be a positive number", role, v)
		}
	}
	for role, v := range w {
		a.weights[role] = v
	}
	for _, f := range a.fws {
		if f != nil {
			a.leaveSets(f)
			f.view.Weight = a.weight(f.role)
			a.frameworkChanged(f)
		}
	}
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.WeightsSet})
	}
	return nil
}

func (a *Allocator) weight(role string) float64 {
	if w, ok := a.weights[role]; ok {
		return w
	}
	return 1
}

// clearFilters drops every filter of f.
func (a *Allocator) clearFilters(f *framework) {
	if f.nfilters > 0 {
		// Only where filters were put: with thousands of agents and
		// frameworks reviving as their tasks finish, a walk of every
		// agent per REVIVE was 7% of a master's CPU, under its lock.
		for _, i := range f.filterAgents {
			if ag := a.agents[i]; ag != nil {
				a.dropFilters(ag, f.idx)
			}
		}
	}
	f.filterAgents = f.filterAgents[:0]
}

func (a *Allocator) agent(id string) (*agent, error) {
	i, ok := a.agentByID[id]
	if !ok {
		return nil, fmt.Errorf("unknown agent %q", id)
	}
	return a.agents[i], nil
}

func (a *Allocator) framework(id string) (*framework, error) {
	i, ok := a.fwByID[id]
	if !ok {
		return nil, fmt.Errorf("unknown framework %q", id)
	}
	return a.fws[i], nil
}

// noteFilterAgent adds agent idx to f.filterAgents. Filters expire
// without telling the list, so when it has grown well past f's filters it
// is rebuilt from the agents it names: each kept once, if f still has a
// filter there.
func (a *Allocator) noteFilterAgent(f *framework, idx int32) {
	f.filterAgents = append(f.filterAgents, idx)
	if len(f.filterAgents) <= 2*f.nfilters+16 {
		return
	}
	seen := make(map[int32]bool, f.nfilters)
	w := 0
	for _, i := range f.filterAgents {
		ag := a.agents[i]
		if seen[i] || ag == nil || !ag.hasFilterOf(f.idx) {
			continue
		}
		seen[i] = true
		f.filterAgents[w] = i
		w++
	}
	f.filterAgents = f.filterAgents[:w]
}

// hasFilterOf reports whether framework fw has a filter on ag.
func (ag *agent) hasFilterOf(fw int32) bool {
	for i := range ag.filters {
		if ag.filters[i].fw == fw {
			return true
		}
	}
	return false
}

func (a *Allocator) dropFilters(ag *agent, fw int32) {
	w := 0
	for _, fl := range ag.filters {
		if fl.fw == fw {
			a.fws[fw].nfilters--
			continue
		}
		ag.filters[w] = fl
		w++
	}
	ag.filters = ag.filters[:w]
}
