package ispark

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/framework/elastic"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// The iterative model (iterative.go) run against the real allocator, the
// way the master runs it. The allocator (FIFO, YARN's default queue under
// which the paper's vanilla Spark starves later applications; characterized mode,
// Config.Reclaim on for every policy) places executors of 1 cpu and MemMB
// each; an application declares target-minus-live executors as its demand
// (SetDemand) and gets them as offers. Its inverse offers
// (Decisions.InverseOffers) are the cluster's "others are waiting": an
// application asked to give back resources sees OthersWaiting for the next
// monitoring epoch. Every Epoch seconds each application's driver builds an
// elastic.Pool from its executors' measured utilisation and cache and asks
// the runtime's own policy (framework/elastic: IdleBacklog for dynamic
// allocation, ISpark for iSpark DF and CF); the simulator then carries out
// the Decision as the runtime will: moves before releases, a giver released
// when its partitions have landed, executors added by declared demand.
// Static allocation asks for Lanes executors and never changes.

// Iterative-model policies (rows of `allot experiment ispark`).
const (
	IterStatic   = "static"
	IterDynamic  = "dynamic"
	IterISpark   = "ispark"    // DF
	IterISparkCF = "ispark-cf" // CPU factor only
	// IterNoCache is iSpark with its cache manager off (Fig. 11): givers
	// are released at once and their partitions recomputed when read.
	IterNoCache = "ispark-nocache"
	// IterWeigh is beyond the paper: iSpark DF whose handoff recomputes a
	// partition instead of moving it when its transfer would land later
	// than recomputing it takes (a busy giver link).
	IterWeigh = "ispark-weigh"
)

// IterPolicies lists them in the table's order.
var IterPolicies = []string{IterStatic, IterDynamic, IterISpark, IterISparkCF, IterNoCache, IterWeigh}

// IterConfig is one run.
type IterConfig struct {
	Policy   string
	Gamma, H float64 // iSpark's; 0 takes the paper's 0.5 and 1.1
	Seed     uint64
	Epoch    float64 // monitoring epoch, seconds (default ISparkEpochSec)
	MemMB    float64 // executor memory (default ExecMemMB)
	// PlainEviction replaces the DAG-aware cache policy by the paper's
	// random selection (Fig. 12): receivers evict any partition at random
	// and the policy is told the cache is unbounded.
	PlainEviction bool
	// WarmGivers is beyond the paper (reported as a Fig. 12 variant, never
	// in the main table): the driver does not hand off an executor that
	// joined after its application's running iteration began. Such an
	// executor has read none of its lanes' partitions yet (reads happen at
	// an iteration's start) and has no U_max, so its memory reads as its
	// working memory alone; on SVM at 2 GB it is almost the only executor
	// under gamma, and handing it off feeds a loop (docs/ispark.md, Fig. 12).
	// The release is not carried out and the executor stays in the target.
	WarmGivers bool
	Horizon    float64 // seconds (default 1e6)
}

// IterResult is what one run measured.
type IterResult struct {
	Policy string
	// CPUUtil is the cluster's: cpu-seconds used over cores x the time the
	// last application finished.
	CPUUtil  float64
	Makespan float64
	// Per application, in input order: completion minus arrival, cpu used
	// over cpu reserved (Fig. 9a's), and the shape's name.
	JCT, AppUtil []float64
	Shapes       []string
	Recomputed   int     // partitions recomputed from lineage (cache misses)
	MovedMB      float64 // partitions moved between executors
	Tasks        int     // tasks run, first attempts
	Failures     int     // task attempts failed (cpu overload or out of memory)
	Hits, Reads  int     // partition reads and those served from a cache
	Givers       int     // executors released by iSpark's handoff
	// Of the givers: those that joined after their application's running
	// iteration began (YoungGivers), and those holding no cached partition
	// when they gave (EmptyGivers). Fig. 12's diagnosis reads them.
	YoungGivers, EmptyGivers int
	Added                    int // executors the policy added (backlog or reprovisioning)
	OOMKills                 int // executors lost to out-of-memory
	// Receivers' monitoring epochs (a receiver runs a giver's lanes beside
	// its own) in which they ran: how many, how many averaged a cpu demand
	// above their core (what fails tasks), and their mean cpu demand and
	// memory utilisation. They say which factor bounds DF's packing.
	RecvEpochs, RecvOverCore int
	RecvCPU, RecvMem         float64
	// Idle is where the cluster's unused core-seconds went (ispark_idle.go).
	Idle IdleBreakdown
}

type iexec struct {
	id       string
	agent    int
	lanes    []int
	slots    int                           // lanes it runs at once: 1, more on a receiver
	cache    map[elastic.Partition]float64 // MB held
	cacheTot float64
	acc      [2]float64 // cpu demand and memory utilisation summed over the epoch
	accN     float64
	iacc     [2]float64 // ... and over the running iteration
	iaccN    float64
	// ecpu and emem are the last epoch's utilisation while running (cpu as
	// demand, which may pass 1): the failures' measure, and what the
	// policy sees when it is above eq. 3's estimate from the tasks.
	ecpu, emem float64
	umax       float64
	leaveAt    float64 // > 0: leaving (handoff under way), released then
	idleSince  float64
	joined     float64
}

type ilane struct {
	exec  *iexec // nil: orphaned by an executor lost, waiting for one
	left  float64
	rho   float64
	meas  float64 // its tasks' cpu utilisation in the last iteration
	memf  float64
	stall float64 // no progress before this time (partitions in flight)
	// missed counts the partitions the running iteration found in no
	// cache and recomputes (its extra work; ispark_idle.go reads it).
	missed int
}

type iapp struct {
	IterApp
	started, done bool
	iter          int
	iterStart     float64
	lanes         []ilane
	execs         []*iexec
	target        int
	backlog       elastic.Backlog
	othersUntil   float64
	nextEpoch     float64
	finish        float64
	used, resv    float64
	seq           int
	declared      int // the demand last declared, as the allocator counts it
	policy        elastic.Policy
}

type iterRun struct {
	cfg     IterConfig
	apps    []*iapp
	byName  map[string]*iapp
	al      *allocator.Allocator
	clk     *allocator.ManualClock
	rng     *rand.Rand
	execRes resources.Resources
	netFree []float64 // when each agent's link is free
	now     float64
	dirty   bool // the allocator's state changed since its last cycle
	queued  int  // applications arrived and not started (idleCluster counts them)
	cycles  int
	used    float64
	res     IterResult
}

// RunIter simulates apps on the paper's cluster (ISparkWorkers workers)
// under cfg.
func RunIter(apps []IterApp, cfg IterConfig) (IterResult, error) {
	r, err := newIterRun(apps, cfg)
	if err != nil {
		return IterResult{}, err
	}
	return r.run()
}

func newIterRun(apps []IterApp, cfg IterConfig) (*iterRun, error) {
	if cfg.Epoch <= 0 {
		cfg.Epoch = ISparkEpochSec
	}
	if cfg.MemMB <= 0 {
		cfg.MemMB = ExecMemMB
	}
	if cfg.Horizon <= 0 {
		cfg.Horizon = iterHorizonDefault
	}
	if !validIterPolicy(cfg.Policy) {
		return nil, fmt.Errorf("sim: unknown iterative policy %q (have %v)", cfg.Policy, IterPolicies)
	}
	clk := &allocator.ManualClock{T: time.Unix(0, 0)}
	al, err := allocator.New(allocator.Config{Sorter: sorter.FIFO{}, Mode: allocator.Characterized,
		AllocationInterval: time.Second, Seed: cfg.Seed, Clock: clk, Reclaim: true})
	if err != nil {
		return nil, err
	}
	r := &iterRun{cfg: cfg, al: al, clk: clk, byName: map[string]*iapp{},
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x1597a4)), netFree: make([]float64, ISparkWorkers)}
	r.execRes = resources.MustParse(fmt.Sprintf("cpus:%d;mem:%g", ExecCores, cfg.MemMB))
	tot := resources.MustParse(fmt.Sprintf("cpus:%d;mem:%d;net_bw:%g", ISparkWorkerCores, ISparkWorkerMemMB, ISparkWorkerNetBW))
	for i := 0; i < ISparkWorkers; i++ {
		if err := al.AddAgent(agentName(i), allocator.AgentInfo{Total: tot}); err != nil {
			return nil, err
		}
	}
	for _, a := range apps {
		if err := a.Shape.validate(); err != nil {
			return nil, err
		}
		ia := &iapp{IterApp: a, finish: math.NaN()}
		r.apps = append(r.apps, ia)
		r.byName[a.Name] = ia
	}
	return r, nil
}

func validIterPolicy(p string) bool {
	for _, q := range IterPolicies {
		if p == q {
			return true
		}
	}
	return false
}

func (r *iterRun) run() (IterResult, error) {
	order := append([]*iapp(nil), r.apps...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].Arrival < order[j].Arrival })
	next, done := 0, 0
	for done < len(r.apps) {
		if r.now > r.cfg.Horizon {
			return IterResult{}, fmt.Errorf("sim: %d of %d applications unfinished at the horizon %gs", len(r.apps)-done, len(r.apps), r.cfg.Horizon)
		}
		for next < len(order) && order[next].Arrival <= r.now {
			if err := r.arrive(order[next]); err != nil {
				return IterResult{}, err
			}
			next++
		}
		if err := r.allocate(); err != nil {
			return IterResult{}, err
		}
		for _, a := range order[:next] {
			if a.started && !a.done && r.now >= a.nextEpoch {
				if err := r.epoch(a); err != nil {
					return IterResult{}, err
				}
			}
		}
		n, err := r.advance(1)
		if err != nil {
			return IterResult{}, err
		}
		done += n
		r.now++
		r.clk.Advance(time.Second)
		if err := r.releaseDue(); err != nil {
			return IterResult{}, err
		}
	}
	return r.result(), nil
}

// policyFor is the runtime policy an application's driver runs.
func (r *iterRun) policyFor(s IterShape) elastic.Policy {
	scale := elastic.IdleBacklog{Min: 1, Max: s.Lanes, IdleTimeout: time.Minute, BacklogTimeout: time.Second}
	switch r.cfg.Policy {
	case IterStatic:
		return nil
	case IterDynamic:
		return scale
	}
	return elastic.ISpark{Gamma: r.cfg.Gamma, H: r.cfg.H, CPUOnly: r.cfg.Policy == IterISparkCF, Scale: scale}
}

func (r *iterRun) arrive(a *iapp) error {
	if err := r.al.AddFramework(a.Name, ""); err != nil {
		return err
	}
	a.declared, r.dirty = -1, true
	a.policy = r.policyFor(a.Shape)
	a.target = 1 // Spark's dynamic allocation starts small and grows on backlog
	if a.policy == nil {
		a.target = a.Shape.Lanes
	}
	return r.declare(a)
}

// live counts the executors not leaving.
func (a *iapp) live() int {
	n := 0
	for _, e := range a.execs {
		if e.leaveAt == 0 {
			n++
		}
	}
	return n
}

// declare sets the application's demand: the executors its target still
// lacks, one executor's worth each.
func (r *iterRun) declare(a *iapp) error {
	want := max(0, a.target-a.live())
	if want == a.declared {
		return nil
	}
	a.declared, r.dirty = want, true
	return r.al.SetDemand(a.Name, allocator.Demand{Task: r.execRes, Tasks: want})
}

// allocate runs an allocation cycle when something it reads changed since
// the last (an arrival, a new demand, resources recovered) and once per
// epoch for the inverse offers; a cycle in between would decide nothing
// (no filters are ever installed, so the clock alone changes no offer),
// and the reclaim pass is the cycle's costliest part with 100 frameworks.
func (r *iterRun) allocate() error {
	if !r.dirty && math.Mod(r.now, r.cfg.Epoch) != 0 {
		return nil
	}
	r.dirty = false
	r.cycles++
	d := r.al.Allocate()
	for _, io := range d.InverseOffers {
		if a := r.byName[io.Framework]; a != nil {
			a.othersUntil = r.now + r.cfg.Epoch + 1
		}
	}
	for _, o := range d.Offers {
		a := r.byName[o.Framework]
		ag := 0
		fmt.Sscanf(o.Agent, "server-%d", &ag)
		for k := 0; k < max(o.Tasks, 1); k++ {
			r.launch(a, ag)
		}
		a.declared -= max(o.Tasks, 1) // the allocator counts its demand down
	}
	return nil
}

func (r *iterRun) launch(a *iapp, agent int) {
	e := &iexec{id: fmt.Sprintf("%s/e%03d", a.Name, a.seq), agent: agent, slots: 1, cache: map[elastic.Partition]float64{}, idleSince: r.now, joined: r.now}
	a.seq++
	a.execs = append(a.execs, e)
	if !a.started {
		a.started = true
		a.nextEpoch = r.now + r.cfg.Epoch
		a.lanes = make([]ilane, a.Shape.Lanes)
		for i := range a.lanes {
			a.lanes[i].exec = e
			e.lanes = append(e.lanes, i)
		}
		r.beginIter(a)
		return
	}
	r.giveLanes(a, e)
}

// advance runs every application dt seconds and returns how many finished.
func (r *iterRun) advance(dt float64) (int, error) {
	finished := 0
	r.idleCluster(dt)
	for _, a := range r.apps {
		if !a.started || a.done {
			continue
		}
		for _, e := range a.execs {
			d, share := r.demand(a, e)
			speed := share / max(1, d)
			for _, l := range e.lanes {
				ln := &a.lanes[l]
				if ln.left > 0 && ln.stall <= r.now {
					ln.left -= dt * speed / a.Shape.IterSec
					if ln.left < 1e-9 {
						ln.left = 0 // IterSec steps of 1/IterSec leave float residue
					}
				}
			}
			if d > 0 {
				// the monitor measures tasks while they run (eq. 3's
				// u_i): an executor waiting at the barrier or for
				// partitions in flight is not measured
				m := r.memUtil(a, e)
				e.acc[0] += d
				e.acc[1] += m
				e.accN++
				e.iacc[0] += d
				e.iacc[1] += m
				e.iaccN++
			}
			a.used += min(d, 1) * dt
			r.used += min(d, 1) * dt
			r.idleExec(a, e, d, dt)
		}
		a.resv += float64(len(a.execs)) * dt
		if r.iterDone(a) {
			n, err := r.endIter(a)
			if err != nil {
				return 0, err
			}
			finished += n
		}
	}
	return finished, nil
}

// demand is what e's lanes want of its core now, and the share of time
// each active lane is scheduled: lanes beyond e's slots take turns (one
// task at a time per slot, as a 1-core Spark executor runs them).
func (r *iterRun) demand(a *iapp, e *iexec) (d, share float64) {
	n := 0
	for _, l := range e.lanes {
		if ln := &a.lanes[l]; ln.left > 0 && ln.stall <= r.now {
			d += ln.rho
			n++
		}
	}
	if n == 0 {
		return 0, 1
	}
	share = float64(min(n, e.slots)) / float64(n)
	return d * share, share
}

func (r *iterRun) iterDone(a *iapp) bool {
	for i := range a.lanes {
		if a.lanes[i].left > 0 {
			return false
		}
	}
	return true
}

// releaseDue releases leaving executors whose handoff has ended.
func (r *iterRun) releaseDue() error {
	for _, a := range r.apps {
		if a.done {
			continue
		}
		for i := 0; i < len(a.execs); i++ {
			if e := a.execs[i]; e.leaveAt > 0 && e.leaveAt <= r.now {
				if err := r.release(a, e); err != nil {
					return err
				}
				i--
			}
		}
	}
	return nil
}

// release returns e's resources and forgets it; its lanes must have gone.
func (r *iterRun) release(a *iapp, e *iexec) error {
	for i, x := range a.execs {
		if x == e {
			a.execs = append(a.execs[:i], a.execs[i+1:]...)
			break
		}
	}
	if err := r.al.Recover(a.Name, agentName(e.agent), r.execRes, nil); err != nil {
		return err
	}
	r.dirty = true
	return r.declare(a)
}

func (r *iterRun) result() IterResult {
	res := r.res
	res.Policy = r.cfg.Policy
	for _, a := range r.apps {
		res.Makespan = max(res.Makespan, a.finish)
		res.JCT = append(res.JCT, a.finish-a.Arrival)
		res.AppUtil = append(res.AppUtil, a.used/max(a.resv, 1e-9))
		res.Shapes = append(res.Shapes, a.Shape.Name)
	}
	if res.Makespan > 0 {
		res.CPUUtil = r.used / (float64(ISparkWorkers*ISparkWorkerCores) * res.Makespan)
	}
	return res
}
