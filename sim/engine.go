package sim

import (
	"fmt"
	"github.com/allot-sched/allot/allocator/policy/bandit"
	"math"
	"time"

	"github.com/allot-sched/allot/allocator"
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
	// Roles, if set, gives the allocator weights and quota per role before
	// the first job arrives (roles.go).
	Roles *Roles
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
	evSample  // interference.go
	evProbe   // fsp.go: a job's probe reporting
	evReserve // reservations.go: a dynamic reservation is asked for
)

type simAgent struct {
	id    string
	total resources.Vector
	used  resources.Vector // by running tasks, bandwidth demand included
	bwCap bool             // advertises a bandwidth
	// runs using a bandwidth the agent advertises (contention model)
	bwRuns []int32
	eff    [2]float64  // min(used, cap) of disk_bw, net_bw, in units
	pools  *agentPools // reservations (reservations.go); nil: none
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
	// runPools holds, for runs that use reserved resources, the parts
	// they took of their agent's pools (reservations.go).
	runPools map[int32][]poolPart
	// roleBooks integrates what each role holds, with a roles file
	// (rolestats.go).
	roleBooks map[string]*roleBook
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
	if err := cfg.Roles.apply(al); err != nil {
		return nil, err
	}
	if err := e.setup(); err != nil {
		return nil, err
	}
	if err := e.setupReservations(); err != nil {
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
			role := e.cfg.Roles.roleOf(j.Framework, j.Role)
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
		if (it.kind == evSample || it.kind == evReserve) && e.jobsDone == len(e.jobs) {
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
		case evReserve:
			if err := e.reserveAt(it.ref); err != nil {
				return err
			}
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
