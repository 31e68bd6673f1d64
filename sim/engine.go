package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/allot-sched/allot/allocator"
	allocpolicy "github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/allocator/policy/bandit"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// The simulator. It owns virtual time and plays master, agents and
// frameworks around the real allocator:
//
//   - Jobs arrive at their submit time (or when the job they run After
//     finishes) at their framework, which registers with the allocator on
//     its first job and unregisters when its last job is done.
//   - The allocator runs on allocation-interval ticks (multiples of
//     Config.Interval, default 1 s), and only when something changed since
//     the last cycle and some framework has work waiting: a master's
//     periodic cycle over unchanged state offers nothing new, and skipping
//     it is what keeps a 2.55-million-task replay fast.
//   - A framework answers each offer at once. Oblivious frameworks run, in
//     first-come-first-served order of their ready task groups, as many
//     tasks as fit in the whole offer; characterized ones declared (with
//     SetDemand) the per-task vector of their oldest ready group and the
//     count of ready tasks of that shape, and run one task per task's
//     worth. What is not used is declined via Recover with a filter of
//     Config.RefuseSeconds; the filter's expiry is an event, so refused
//     resources are offered again when it lapses.
//   - A task that finishes returns its resources via Recover. When a
//     stage's last task finishes, the job's next stage becomes ready.
//   - A framework with nothing ready suppresses offers, and revives (after
//     re-declaring its demand) when work arrives.
//
// Contention model. disk_bw and net_bw are advisory: the allocator never
// reserves them, so tasks may together ask more of an agent than it has.
// For each bandwidth r an agent advertises (capacity c_r > 0), let D_r be
// the summed demand of the tasks running on it; when D_r > c_r every task
// using r runs at the fraction c_r / D_r of full speed, and a task using
// several bandwidths runs at the smallest of its fractions. A task's work
// is its duration at full speed; its finish time is recomputed whenever
// its rate changes. Bandwidths an agent does not advertise are not
// modelled (no slowdown). cpus and mem are reserved and never contended.
//
// Demands declared to the allocator are the reservable part only (cpus,
// mem, disk, gpus). The allocator never reserves disk_bw and net_bw (they
// are advisory: no fit limit, never in an offer, and an agent's advertised
// bandwidth is never reduced), so declaring them would change nothing but
// Tetris's alignment score; bandwidth is the simulator's business, through
// the contention model above.
//
// Determinism: every choice is a function of the workload, the config and
// the seed; ties between simultaneous events go to the one scheduled first.

// Config chooses the policy and the simulation's knobs.
type Config struct {
	Policy Policy
	Mode   allocator.Mode
	Seed   uint64
	// Interval is the allocation interval; default 1 s.
	Interval time.Duration
	// RefuseSeconds is the filter frameworks attach to declines; default 5
	// (Mesos's refuse_seconds default). Negative means no filter.
	RefuseSeconds float64
	// SampleEvery is the width in seconds of the buckets the time series
	// are averaged over; 0 picks about a thousand buckets for the run.
	SampleEvery float64
	// Observer, if set, sees every launch and finish.
	Observer Observer
	// Progress, if set, is called now and then with how far the run is.
	Progress func(Progress)
	// Sizes say how jobs learn their sizes under fspy (sim/fsp.go).
	Sizes SizeOptions
	// AMShare caps the memory the jobs' application masters (Job.AM) may
	// hold at once, as a fraction of the cluster's (YARN's maxAMShare,
	// am.go); 0: DefaultAMShare; negative: no cap. Only jobs with an AM
	// are affected.
	AMShare float64
	// Check cross-checks the simulator's books against the allocator's
	// after every allocation cycle and fails the run on any difference
	// (slow; for tests).
	Check bool
	// Interference, if set, turns on the interference model
	// (interference.go): cores contended, I/O wait, usage samples given to
	// the allocator. Nil: off.
	Interference *Interference
	// Bandit holds the co-location bandit's parameters (sorter bandit), and
	// Preferences, if set, its preferences at the start (exported by an
	// earlier run: the paper's RA*, a warm start).
	Bandit      bandit.Config
	Preferences []byte
}

// Progress says how far a run is.
type Progress struct {
	Done, Total int64   // tasks finished, tasks in the workload
	Now         float64 // virtual time, seconds
}

// EventKind says what happened.
type EventKind uint8

const (
	EventLaunch EventKind = iota // tasks started on an agent
	EventFinish                  // tasks finished and their resources returned
)

func (k EventKind) String() string {
	if k == EventLaunch {
		return "launch"
	}
	return "finish"
}

// Event is a launch or finish of Tasks identical tasks.
type Event struct {
	Kind      EventKind
	Time      float64
	Job       string
	Framework string
	Agent     string
	// Stage and Group locate the tasks in their job (zero-based).
	Stage, Group int
	Tasks        int
	Demand       resources.Vector // per task
	// AgentUsed is what running tasks use on the agent after the event,
	// AgentTotal what it has.
	AgentUsed, AgentTotal resources.Vector
}

// Observer watches a run; tests use it to check conservation and capacity.
type Observer interface{ Observe(Event) }

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

func (f ObserverFunc) Observe(e Event) { f(e) }

// event kinds in the queue
const (
	evArrive uint8 = iota
	evFinish
	evFilter
	evSample // interference.go
	evProbe  // fsp.go: a job's probe reporting
)

type simAgent struct {
	id    string
	total resources.Vector
	used  resources.Vector // by running tasks, bandwidth demand included
	bwCap bool             // advertises a bandwidth
	// runs using a bandwidth the agent advertises (contention model)
	bwRuns []int32
	eff    [2]float64 // min(used, cap) of disk_bw, net_bw, in units
}

type simFramework struct {
	id       string
	idx      int
	role     string
	weight   float64
	alive    bool // registered with the allocator
	jobsLeft int  // jobs not yet finished, future ones included
	active   int  // submitted, unfinished jobs
	activeAt int  // position in engine.activeFws, -1 if not there
	// ready holds group indices with tasks not yet launched, oldest first;
	// entries whose pending dropped to zero are skipped and compacted.
	ready      []int32
	readyHead  int
	pending    int64
	used       resources.Vector // reservable, by running tasks
	suppressed bool
	declared   resources.Vector // characterized: the declared shape
	want       int64            // characterized: what the allocator still counts
	syncQueued bool
	counted    bool // in engine.wanting
}

type simJob struct {
	job        *Job
	fw         int
	stage      int
	firstGroup int32 // index of the job's first group in engine.groups
	left       int64 // unfinished tasks of the current stage
	arrive     float64
	start      float64 // first launch; NaN until then
	finish     float64
	done       bool
	after      []int32 // jobs that run after this one
	arrived    bool
	amGroup    int32 // the AM's group (am.go), -1 without an AM
	amRun      int32 // the AM's run once it started, -1 before
}

type simGroup struct {
	g       *Group
	job     int32
	stage   int16
	index   int16
	am      bool             // the job's application master (am.go)
	res     resources.Vector // reservable part of the demand
	bw      bool             // demands a bandwidth
	pending int64
	ready   bool
}

type simRun struct {
	group   int32
	agent   int32
	count   int32
	slot    int32   // position in the agent's bwRuns, -1 if not there
	work    float64 // remaining seconds at full speed, as of since
	rate    float64
	since   float64
	version uint32
	live    bool
}

type engine struct {
	cfg   Config
	w     *Workload
	al    *allocator.Allocator
	clock *allocator.ManualClock
	epoch time.Time
	iv    float64

	agents  []simAgent
	agentIx map[string]int32
	fws     []*simFramework
	fwIx    map[string]int
	jobs    []simJob
	groups  []simGroup
	runs    []simRun
	freeRun []int32
	q       eventQueue

	now        float64
	dirty      bool
	dirtyAt    float64
	lastCycle  float64
	lastFilter float64
	wanting    int // registered frameworks with ready work
	activeFws  []int
	rerate     []int32 // agents whose bandwidth rates must be recomputed
	rerateMark []bool
	syncQ      []int
	inter      *interference // nil: the interference model is off

	// cluster totals
	total    resources.Vector
	bwTotal  [2]float64
	clusterU resources.Vector // reservable, by running tasks
	clusterE [2]float64       // effective bandwidth in use

	running  int64 // tasks running
	finished int64
	total64  int64
	jobsDone int
	idle     int // consecutive cycles with no launch while nothing runs

	m metrics

	sizes *sizer // job sizes for fsp and fspy (fsp.go); nil otherwise
	ams   amAdmission
}

var bwKinds = [2]resources.Kind{resources.DiskBW, resources.NetBW}

// Run simulates w under cfg and returns its measurements. It fails on an
// invalid workload (see Workload.Validate), a policy the allocator rejects,
// or a workload that stops making progress.
func Run(w *Workload, cfg Config) (*Result, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if cfg.Policy.Sorter == nil {
		cfg.Policy = Policy{Name: "drf", Sorter: sorter.DRF{}}
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.RefuseSeconds == 0 {
		cfg.RefuseSeconds = allocator.DefaultRefuseSeconds
	}
	if _, err := ParsePredictor(cfg.Sizes.Predictor, nil, 0); err != nil {
		return nil, err
	}
	if pw, p := withProbes(w, cfg); pw != w {
		if err := pw.Validate(); err != nil {
			return nil, fmt.Errorf("probing jobs: %w", err)
		}
		w, cfg.Policy = pw, p
	}
	e := &engine{cfg: cfg, w: w, epoch: time.Unix(0, 0).UTC(), iv: cfg.Interval.Seconds()}
	e.clock = &allocator.ManualClock{T: e.epoch}
	e.lastCycle = math.Inf(-1)
	al, err := allocator.New(allocator.Config{
		Sorter: cfg.Policy.Sorter, AgentSelection: cfg.Policy.Selection, Mode: cfg.Mode,
		Seed: cfg.Seed, Clock: e.clock, AllocationInterval: cfg.Interval, Bandit: cfg.Bandit,
	})
	if err != nil {
		return nil, err
	}
	e.al = al
	if err := e.setup(); err != nil {
		return nil, err
	}
	if cfg.Preferences != nil {
		if err := bandit.Of(al).ImportPreferences(cfg.Preferences); err != nil {
			return nil, err
		}
	}
	if cfg.Interference != nil {
		e.inter = newInterference(e, cfg.Interference)
		e.inter.schedule(e)
	}
	if err := e.loop(); err != nil {
		return nil, err
	}
	res := e.result()
	res.Preferences, _ = bandit.Of(al).ExportPreferences() // nil unless the sorter is bandit
	return res, nil
}

func (e *engine) setup() error {
	e.agentIx = make(map[string]int32, len(e.w.Nodes))
	e.agents = make([]simAgent, len(e.w.Nodes))
	e.rerateMark = make([]bool, len(e.w.Nodes))
	for i, n := range e.w.Nodes {
		a := &e.agents[i]
		a.id, a.total = n.ID, n.Total
		a.bwCap = n.Total[resources.DiskBW] > 0 || n.Total[resources.NetBW] > 0
		e.agentIx[n.ID] = int32(i)
		if err := e.al.AddAgent(n.ID, allocator.AgentInfo{Total: resources.Resources{Scalars: n.Total}}); err != nil {
			return err
		}
		e.total = e.total.Add(reservable(n.Total))
		for b, k := range bwKinds {
			e.bwTotal[b] += n.Total[k].Units()
		}
	}
	e.fwIx = map[string]int{}
	e.jobs = make([]simJob, len(e.w.Jobs))
	jobIx := make(map[string]int32, len(e.w.Jobs))
	for i := range e.w.Jobs {
		j := &e.w.Jobs[i]
		fi, ok := e.fwIx[j.Framework]
		if !ok {
			fi = len(e.fws)
			e.fwIx[j.Framework] = fi
			role := j.Role
			if role == "" {
				role = resources.Unreserved
			}
			e.fws = append(e.fws, &simFramework{id: j.Framework, idx: fi, role: role, weight: 1, activeAt: -1})
		}
		e.fws[fi].jobsLeft++
		sj := &e.jobs[i]
		sj.job, sj.fw, sj.start = j, fi, math.NaN()
		sj.firstGroup = int32(len(e.groups))
		for si, st := range j.Stages {
			for gi := range st.Groups {
				g := &j.Stages[si].Groups[gi]
				e.groups = append(e.groups, simGroup{g: g, job: int32(i), stage: int16(si), index: int16(gi),
					res: reservable(g.Demand), bw: g.Demand[resources.DiskBW] > 0 || g.Demand[resources.NetBW] > 0})
				e.total64 += int64(g.Tasks)
			}
		}
		e.addAM(int32(i))
		jobIx[j.ID] = int32(i)
		if j.After != "" {
			p := jobIx[j.After]
			e.jobs[p].after = append(e.jobs[p].after, int32(i))
		} else {
			e.q.push(qItem{t: j.Submit, kind: evArrive, ref: int32(i)})
		}
	}
	e.m.init(e)
	e.sizes = newSizer(e)
	return nil
}

// loop runs events and allocation ticks until nothing is left.
func (e *engine) loop() error {
	var n int
	for {
		if e.dirty && e.wanting == 0 {
			e.dirty = false // nobody wants anything: a cycle would offer nothing
		}
		next := math.Inf(1)
		if e.q.len() > 0 {
			next = e.q.next()
		}
		if e.dirty {
			tick := math.Max(e.lastCycle+e.iv, math.Ceil(e.dirtyAt/e.iv-1e-9)*e.iv)
			if next > tick {
				e.advance(tick)
				if err := e.cycle(); err != nil {
					return err
				}
				continue
			}
		}
		if e.q.len() == 0 {
			break
		}
		it := e.q.pop()
		if it.kind == evSample && e.jobsDone == len(e.jobs) {
			continue // the run is over: time must not move past it
		}
		e.advance(it.t)
		switch it.kind {
		case evArrive:
			e.arrive(it.ref)
		case evFinish:
			r := &e.runs[it.ref]
			if !r.live || r.version != it.ver {
				continue // superseded by a new rate
			}
			if err := e.finishRun(it.ref); err != nil {
				return err
			}
		case evFilter:
			e.markDirty()
		case evSample:
			e.inter.sample(e)
		case evProbe:
			e.sizes.probe(e, it.ref)
		}
		e.settle()
		if n++; e.cfg.Progress != nil && n&0xffff == 0 {
			e.cfg.Progress(Progress{Done: e.finished, Total: e.total64, Now: e.now})
		}
	}
	if e.cfg.Progress != nil {
		e.cfg.Progress(Progress{Done: e.finished, Total: e.total64, Now: e.now})
	}
	if e.jobsDone < len(e.jobs) {
		return e.stuck()
	}
	e.m.close(e)
	return nil
}

// advance moves virtual time to t, accruing the metrics' integrals.
func (e *engine) advance(t float64) {
	if t < e.now {
		t = e.now
	}
	e.m.accrue(e, t)
	if e.inter != nil {
		e.inter.accrue(e, t)
	}
	e.now = t
}

func (e *engine) markDirty() {
	if !e.dirty {
		e.dirty, e.dirtyAt = true, e.now
	}
}

func (e *engine) at(t float64) time.Time {
	return e.epoch.Add(time.Duration(math.Round(t * 1e9)))
}

// arrive makes a job's first stage ready.
func (e *engine) arrive(ji int32) {
	j := &e.jobs[ji]
	j.arrived, j.arrive = true, e.now
	f := e.fws[j.fw]
	if !f.alive {
		if err := e.al.AddFramework(f.id, f.role); err != nil {
			panic(err) // ids are unique by construction
		}
		f.alive = true
		// a fresh framework wants nothing until sync declares its demand
		f.suppressed = false
		f.want = -1
	}
	if j.job.Type != "" {
		must(e.al.Observe(allocpolicy.JobType{Framework: f.id, Type: j.job.Type}))
	}
	if f.active++; f.active == 1 {
		f.activeAt = len(e.activeFws)
		e.activeFws = append(e.activeFws, f.idx)
	}
	if e.sizes != nil {
		e.sizes.arrived(e, ji)
	}
	if j.amGroup >= 0 {
		e.admitAM(ji)
		return
	}
	e.readyStage(ji)
}

func (e *engine) readyStage(ji int32) {
	j := &e.jobs[ji]
	f := e.fws[j.fw]
	j.left = 0
	for gi := range j.job.Stages[j.stage].Groups {
		idx := j.firstGroup + int32(gi)
		for s := 0; s < j.stage; s++ {
			idx += int32(len(j.job.Stages[s].Groups))
		}
		g := &e.groups[idx]
		g.ready = true
		g.pending = int64(g.g.Tasks)
		j.left += g.pending
		f.ready = append(f.ready, idx)
		f.pending += g.pending
	}
	e.queueSync(f)
}

func (e *engine) queueSync(f *simFramework) {
	if !f.syncQueued {
		f.syncQueued = true
		e.syncQ = append(e.syncQ, f.idx)
	}
}

// settle finishes the work an event or a cycle leaves: new bandwidth
// rates, and each touched framework's answer to the allocator.
func (e *engine) settle() {
	for _, ai := range e.rerate {
		e.rerateMark[ai] = false
		e.rerateAgent(ai)
	}
	e.rerate = e.rerate[:0]
	for _, fi := range e.syncQ {
		e.sync(e.fws[fi])
	}
	e.syncQ = e.syncQ[:0]
}

// sync tells the allocator what framework f wants now: nothing (suppress,
// or unregister when its last job is done), or its head-of-line demand.
func (e *engine) sync(f *simFramework) {
	f.syncQueued = false
	if !f.alive {
		return
	}
	if f.jobsLeft == 0 {
		e.setWanting(f, false)
		must(e.al.RemoveFramework(f.id))
		f.alive = false
		return
	}
	if f.pending == 0 {
		if !f.suppressed {
			must(e.al.Suppress(f.id))
			f.suppressed = true
		}
		e.setWanting(f, false)
		return
	}
	if e.cfg.Mode == allocator.Characterized {
		shape, n := e.head(f)
		if shape != f.declared || n != f.want {
			must(e.al.SetDemand(f.id, allocator.Demand{Task: resources.Resources{Scalars: shape}, Tasks: int(n)}))
			f.declared, f.want = shape, n
			e.markDirty()
		}
	}
	if f.suppressed {
		must(e.al.Revive(f.id))
		f.suppressed = false
		e.markDirty()
	}
	e.setWanting(f, true)
}

// setWanting keeps e.wanting, the number of frameworks with ready work
// that take offers, which decides whether a cycle is worth running.
func (e *engine) setWanting(f *simFramework, w bool) {
	if f.counted == w {
		return
	}
	f.counted = w
	if w {
		e.wanting++
		e.markDirty()
	} else {
		e.wanting--
	}
}

// head returns the reservable shape of f's oldest ready group and how many
// ready tasks have that shape.
func (e *engine) head(f *simFramework) (resources.Vector, int64) {
	e.compactReady(f)
	var shape resources.Vector
	var n int64
	found := false
	for _, gi := range f.ready[f.readyHead:] {
		g := &e.groups[gi]
		if g.pending == 0 {
			continue
		}
		if !found {
			shape, found = g.res, true
		}
		if g.res == shape {
			n += g.pending
		}
	}
	return shape, n
}

// compactReady drops launched-out groups from the front of f's queue, and
// from the middle once they are the majority.
func (e *engine) compactReady(f *simFramework) {
	for f.readyHead < len(f.ready) && e.groups[f.ready[f.readyHead]].pending == 0 {
		f.readyHead++
	}
	if f.readyHead == len(f.ready) {
		f.ready, f.readyHead = f.ready[:0], 0
		return
	}
	if f.readyHead > 32 && f.readyHead*2 > len(f.ready) {
		n := copy(f.ready, f.ready[f.readyHead:])
		f.ready, f.readyHead = f.ready[:n], 0
	}
}

// cycle runs one allocation cycle and answers its offers.
func (e *engine) cycle() error {
	e.clock.T = e.at(e.now)
	e.dirty = false
	e.lastCycle = e.now
	offers := e.al.Allocate().Offers
	e.m.cycles++
	launched := false
	for i := range offers {
		o := &offers[i]
		e.m.offers++
		fi, ok := e.fwIx[o.Framework]
		ai, ok2 := e.agentIx[o.Agent]
		if !ok || !ok2 {
			return fmt.Errorf("allocator offered %s of %q to %q: unknown to the simulator", o.Resources, o.Agent, o.Framework)
		}
		n, err := e.answer(e.fws[fi], ai, o)
		if err != nil {
			return err
		}
		launched = launched || n > 0
	}
	e.settle()
	if e.cfg.Check {
		if err := e.check(); err != nil {
			return fmt.Errorf("t=%.3fs, after cycle %d: %w", e.now, e.m.cycles, err)
		}
	}
	// Livelock guard: with nothing running and nothing left to arrive, a
	// cycle that launches nothing can only be followed by more of the same
	// (validated tasks fit on an idle node, so this means a policy quirk).
	if e.running == 0 && !launched && !e.q.hasArrival() {
		if e.idle++; e.idle > 10000 {
			return e.stuck()
		}
	} else {
		e.idle = 0
	}
	return nil
}

// answer is framework f's reply to offer o on agent ai: launch what fits,
// decline the rest with a filter. It returns the tasks launched.
func (e *engine) answer(f *simFramework, ai int32, o *allocator.Offer) (int64, error) {
	left := o.Resources.Reservable()
	var launched int64
	var only *resources.Vector
	if o.Tasks > 0 {
		// a characterized offer: tasks of the declared shape
		only = &f.declared
		if f.want > 0 {
			f.want -= int64(o.Tasks)
			if f.want < 0 {
				f.want = 0
			}
		}
	}
	e.compactReady(f)
	for _, gi := range f.ready[f.readyHead:] {
		g := &e.groups[gi]
		if g.pending == 0 || (only != nil && g.res != *only) {
			continue
		}
		k := sorter.TaskCapacity(g.res, left.Scalars)
		if k > g.pending {
			k = g.pending
		}
		if k <= 0 {
			continue
		}
		if err := e.launch(f, ai, gi, k); err != nil {
			return launched, err
		}
		left.Scalars = left.Scalars.Sub(g.res.Times(k))
		launched += k
		if left.Scalars == (resources.Vector{}) {
			break
		}
	}
	if !left.IsEmpty() {
		var fl *allocator.Filter
		if e.cfg.RefuseSeconds > 0 {
			fl = &allocator.Filter{RefuseSeconds: e.cfg.RefuseSeconds}
			if exp := e.now + math.Max(e.cfg.RefuseSeconds, e.iv); exp != e.lastFilter {
				e.lastFilter = exp
				e.q.push(qItem{t: exp, kind: evFilter})
			}
		}
		if err := e.al.Recover(f.id, e.agents[ai].id, left, fl); err != nil {
			return launched, fmt.Errorf("decline: %w", err)
		}
		e.m.declines++
		e.markDirty()
	}
	e.queueSync(f)
	return launched, nil
}

// launch starts k tasks of group gi on agent ai.
func (e *engine) launch(f *simFramework, ai int32, gi int32, k int64) error {
	g := &e.groups[gi]
	a := &e.agents[ai]
	need := g.g.Demand.Times(k)
	if !reservable(a.total).Contains(reservable(a.used.Add(need))) {
		return fmt.Errorf("t=%.3fs: over-allocation: %d tasks of %s on agent %q would use %s of %s",
			e.now, k, fmtVec(g.g.Demand), a.id, fmtVec(reservable(a.used.Add(need))), fmtVec(reservable(a.total)))
	}
	a.used = a.used.Add(need)
	f.used = f.used.Add(g.res.Times(k))
	e.clusterU = e.clusterU.Add(g.res.Times(k))
	g.pending -= k
	f.pending -= k
	e.running += k
	j := &e.jobs[g.job]
	if math.IsNaN(j.start) {
		j.start = e.now
	}
	ri := e.newRun()
	r := &e.runs[ri]
	*r = simRun{group: gi, agent: ai, count: int32(k), slot: -1, work: g.g.Duration, rate: 1, since: e.now, version: r.version + 1, live: true}
	if ((g.bw && a.bwCap) || e.inter != nil) && !g.am {
		r.slot = int32(len(a.bwRuns))
		a.bwRuns = append(a.bwRuns, ri)
		e.queueRerate(ai)
	}
	e.q.push(qItem{t: e.now + r.work, kind: evFinish, ref: ri, ver: r.version})
	e.observe(EventLaunch, g, a, int(k))
	return nil
}

func (e *engine) newRun() int32 {
	if n := len(e.freeRun); n > 0 {
		ri := e.freeRun[n-1]
		e.freeRun = e.freeRun[:n-1]
		return ri
	}
	e.runs = append(e.runs, simRun{})
	return int32(len(e.runs) - 1)
}

func (e *engine) queueRerate(ai int32) {
	if !e.rerateMark[ai] {
		e.rerateMark[ai] = true
		e.rerate = append(e.rerate, ai)
	}
}

// finishRun ends a run: its tasks are done and their resources return.
func (e *engine) finishRun(ri int32) error {
	if e.groups[e.runs[ri].group].am {
		e.amStarted(ri)
		return nil
	}
	g, err := e.release(ri)
	if err != nil {
		return err
	}
	j := &e.jobs[g.job]
	if j.left -= int64(e.runs[ri].count); j.left == 0 {
		if j.stage+1 < len(j.job.Stages) {
			j.stage++
			e.readyStage(g.job)
		} else {
			e.jobDone(g.job)
		}
	}
	return nil
}

// release ends run ri: its tasks are done and their resources return.
func (e *engine) release(ri int32) (*simGroup, error) {
	r := &e.runs[ri]
	g := &e.groups[r.group]
	a := &e.agents[r.agent]
	j := &e.jobs[g.job]
	f := e.fws[j.fw]
	k := int64(r.count)
	a.used = a.used.Sub(g.g.Demand.Times(k))
	f.used = f.used.Sub(g.res.Times(k))
	e.clusterU = e.clusterU.Sub(g.res.Times(k))
	e.running -= k
	e.finished += k
	if r.slot >= 0 {
		last := a.bwRuns[len(a.bwRuns)-1]
		a.bwRuns[r.slot] = last
		e.runs[last].slot = r.slot
		a.bwRuns = a.bwRuns[:len(a.bwRuns)-1]
		e.queueRerate(r.agent)
	}
	r.live = false
	e.freeRun = append(e.freeRun, ri)
	if err := e.al.Recover(f.id, a.id, resources.Resources{Scalars: g.res.Times(k)}, nil); err != nil {
		return nil, fmt.Errorf("t=%.3fs: recovering finished tasks: %w", e.now, err)
	}
	e.observe(EventFinish, g, a, int(k))
	e.markDirty()
	return g, nil
}

func (e *engine) jobDone(ji int32) {
	j := &e.jobs[ji]
	j.done, j.finish = true, e.now
	e.jobsDone++
	e.endAM(ji)
	f := e.fws[j.fw]
	f.jobsLeft--
	if f.active--; f.active == 0 {
		last := e.activeFws[len(e.activeFws)-1]
		e.activeFws[f.activeAt] = last
		e.fws[last].activeAt = f.activeAt
		e.activeFws = e.activeFws[:len(e.activeFws)-1]
		f.activeAt = -1
	}
	if e.sizes != nil {
		e.sizes.finished(e, ji)
	}
	e.queueSync(f)
	for _, n := range j.after {
		e.q.push(qItem{t: math.Max(e.now, e.jobs[n].job.Submit), kind: evArrive, ref: n})
	}
}

// rerateAgent applies the contention model to the bandwidth users of an
// agent after the set of its running tasks changed.
func (e *engine) rerateAgent(ai int32) {
	if e.inter != nil {
		e.inter.rerate(e, ai) // interference.go
		return
	}
	a := &e.agents[ai]
	var frac [2]float64
	for b, k := range bwKinds {
		frac[b] = 1
		c, d := a.total[k].Units(), a.used[k].Units()
		if c > 0 && d > c {
			frac[b] = c / d
		}
		eff := 0.0
		if c > 0 {
			eff = math.Min(c, d)
		}
		e.clusterE[b] += eff - a.eff[b]
		a.eff[b] = eff
	}
	for _, ri := range a.bwRuns {
		r := &e.runs[ri]
		d := e.groups[r.group].g.Demand
		rate := 1.0
		for b, k := range bwKinds {
			if d[k] > 0 && frac[b] < rate {
				rate = frac[b]
			}
		}
		if rate == r.rate {
			continue
		}
		r.work = math.Max(0, r.work-r.rate*(e.now-r.since))
		r.since, r.rate = e.now, rate
		r.version++
		e.q.push(qItem{t: e.now + r.work/rate, kind: evFinish, ref: ri, ver: r.version})
	}
}

func (e *engine) observe(kind EventKind, g *simGroup, a *simAgent, k int) {
	if e.cfg.Observer == nil {
		return
	}
	j := &e.jobs[g.job]
	e.cfg.Observer.Observe(Event{Kind: kind, Time: e.now, Job: j.job.ID, Framework: j.job.Framework, Agent: a.id,
		Stage: int(g.stage), Group: int(g.index), Tasks: k, Demand: g.g.Demand, AgentUsed: a.used, AgentTotal: a.total})
}

// check compares the simulator's books with the allocator's: every agent's
// running tasks fit in it, the allocator counts at least the running
// tasks of each framework as allocated, and its available plus allocated
// equals the agent's total.
func (e *engine) check() error {
	used := map[[2]int32]resources.Vector{}
	for ri := range e.runs {
		r := &e.runs[ri]
		if !r.live {
			continue
		}
		g := &e.groups[r.group]
		k := [2]int32{int32(e.jobs[g.job].fw), r.agent}
		used[k] = used[k].Add(g.res.Times(int64(r.count)))
	}
	for ai := range e.agents {
		a := &e.agents[ai]
		if !reservable(a.total).Contains(reservable(a.used)) {
			return fmt.Errorf("agent %q over-allocated: %s in use of %s", a.id, fmtVec(a.used), fmtVec(a.total))
		}
		st, err := e.al.Agent(a.id)
		if err != nil {
			return err
		}
		sum := st.Available.Reservable().Scalars
		for fid, res := range st.Allocated {
			sum = sum.Add(res.Scalars)
			if fi, ok := e.fwIx[fid]; ok {
				if u := used[[2]int32{int32(fi), int32(ai)}]; !res.Scalars.Contains(u) {
					return fmt.Errorf("agent %q: framework %q runs %s but the allocator counts %s", a.id, fid, fmtVec(u), res)
				}
			}
		}
		if reservable(sum) != reservable(a.total) {
			return fmt.Errorf("agent %q: available plus allocated is %s, total %s", a.id, fmtVec(sum), fmtVec(a.total))
		}
	}
	return nil
}

// StuckError reports jobs that can no longer make progress.
type StuckError struct {
	Time float64
	Jobs []string // the first few
	N    int
	Why  string
}

func (e *StuckError) Error() string {
	return fmt.Sprintf("t=%.1fs: %d job(s) can never finish (%s): %v", e.Time, e.N, e.Why, e.Jobs)
}

func (e *engine) stuck() error {
	se := &StuckError{Time: e.now}
	for i := range e.jobs {
		j := &e.jobs[i]
		if j.done {
			continue
		}
		se.N++
		if len(se.Jobs) < 5 {
			se.Jobs = append(se.Jobs, j.job.where(nil))
		}
	}
	se.Why = "nothing runs and no offer fits their tasks"
	return se
}

func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("sim: allocator refused a call the simulator checked: %v", err))
	}
}
