package prophet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/allot-sched/allot/allocator"
	allocpolicy "github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sorter"
)

// The executor-application model (Prophet). The sim engine simulates
// tasks; this file simulates what Prophet exploits instead: an application
// is E executors that each hold their cpus and mem from launch to the end
// of the application's last stage, while the application's stages run
// inside them one after another, each with its own disk and network
// demand. The simulation is time-stepped (Step, default 1 s) around the
// real allocator:
//
//   - An application arrives at its framework, which registers and
//     declares its executors: with a gang criterion (prophet, tetris-peak)
//     through a policy.AppDemand signal, with its predicted profile, exactly as the
//     master will once REQUEST carries api.AppDemand; with any other
//     criterion (the baselines, which place containers one at a time as
//     YARN's schedulers do) through SetDemand, one task's worth per
//     executor, Tasks = executors still wanted.
//   - The allocator runs every step in characterized mode; every offered
//     executor is launched at once (an offer of n tasks' worth launches n
//     executors). An executor runs the application's stages from its own
//     launch; the application finishes when its last executor does, and
//     each executor returns its cpus and mem (Recover) when it finishes.
//   - Degradation. For each agent and bandwidth r with capacity c > 0, D
//     is the summed demand of the stages its executors are in. While
//     D <= c every executor runs at full speed. Above, the device delivers
//     c / (1 + beta (D/c - 1)) in all (interference: disk seeks, incast),
//     shared in proportion to demand, so an executor using r runs at
//     eff/D of full speed, and at the smallest of its fractions. beta = 0
//     is the work-conserving model of the sim engine; the experiment's beta is
//     DefaultBeta = 0.3 (at twice its capacity a disk delivers 77 % of
//     it), calibrated on the baselines' makespans (DefaultProphetWorkload),
//     since the paper reports effective bandwidth "much lower" than the
//     peak under over-allocation without giving a figure. Degrade false turns the law
//     off altogether (every executor at full speed whatever D is).
//   - Predictions. Each application declares a predicted profile: every
//     stage's offsets and peaks are the actual ones times (1 + e), e drawn
//     uniformly from [-PredError, PredError] from the application's seeded
//     source, so two policies see the same errors.
//
// Task backoff (the paper's second component) is modelled in backoff.go,
// off unless AppConfig.Backoff is set.

// AppStage is one stage of an application as it actually runs in each
// executor: Work seconds at full speed, demanding DiskBW and NetBW (MB/s)
// meanwhile.
type AppStage struct {
	Work          float64
	DiskBW, NetBW float64
}

// App is one application.
type App struct {
	Name      string
	Arrival   float64 // seconds
	Executors int
	Cpus, Mem float64 // per executor (mem in MB)
	Stages    []AppStage
	// Predicted is what the application declares; built by Predict.
	Predicted profile.Profile
}

// AppNode is one server.
type AppNode struct {
	Cpus, Mem, DiskBW, NetBW float64
}

// AppConfig chooses the policy and the model's knobs.
type AppConfig struct {
	Policy sim.Policy
	Seed   uint64
	Step   time.Duration // default 1 s; also the allocation interval
	// Degrade switches the degradation law on; Beta is its beta (>= 0).
	Degrade bool
	Beta    float64
	Gang    *allocator.GangParams // nil: the paper's
	// Horizon stops a run that never finishes (seconds; default 1e6).
	Horizon float64
	// Backoff switches task backoff on with its thresholds (nil: off).
	Backoff *BackoffParams
	// Diagnose measures the prediction against the run (apps_diag.go).
	Diagnose bool
	// Progress > 0 reports every gang-placed executor's stage progress to
	// the allocator every Progress steps and at each stage entry, so the
	// timelines re-anchor on it (apps_progress.go); 0 never reports (the
	// paper's method).
	Progress int
	// FrameworkPlace, with a non-gang criterion, lets each application
	// choose its agents among its offers by Prophet's score
	// (apps_fwplace.go); nil: it launches where it is offered.
	FrameworkPlace *FrameworkPlacement
}

// DefaultBeta is the degradation law's beta unless a run says otherwise.
const DefaultBeta = 0.3

// AppResult is what one run measured.
type AppResult struct {
	Policy   string
	Makespan float64 // last finish, seconds from 0
	// Exec and JCT are per application: last executor's finish minus first
	// executor's launch, and minus arrival.
	Exec, JCT []float64
	// LaunchSpread is per application the time between its first and its
	// last executor's launch: 0 for every application under a gang
	// criterion, which places all E in one cycle.
	LaunchSpread []float64
	// OverallocFrac is the fraction of agent-steps with some bandwidth
	// demanded beyond capacity; BWUtil the bandwidth delivered over the
	// bandwidth available, over both bandwidths, all agents, the makespan.
	OverallocFrac, BWUtil float64
	// Backoffs counts executors put into task backoff; Contested the
	// agent-bandwidth-rounds that triggered it (0 with backoff off).
	Backoffs, Contested int
	// Diag is set when AppConfig.Diagnose was.
	Diag *AppDiagnostics
}

// Predict fills every application's Predicted profile from its actual
// stages with a seeded relative error of at most err.
func Predict(apps []App, err float64, seed uint64) {
	for i := range apps {
		a := &apps[i]
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1))
		noise := func() float64 { return 1 + err*(2*rng.Float64()-1) }
		a.Predicted.Stages = a.Predicted.Stages[:0]
		var at time.Duration
		for _, s := range a.Stages {
			d := time.Duration(s.Work * noise() * float64(time.Second))
			if d <= 0 {
				d = time.Millisecond
			}
			a.Predicted.Stages = append(a.Predicted.Stages, profile.Stage{
				Start: at, End: at + d, DiskBW: s.DiskBW * noise(), NetBW: s.NetBW * noise(),
			})
			at += d
		}
	}
}

type appExec struct {
	app, agent int
	stage      int
	left       float64 // work left in the stage
	start      float64
	anchor     float64 // launch time the timeline's profile is anchored at
	reported   int     // stage last reported (apps_progress.go)
	backoff    int     // rounds left at reduced task slots (backoff.go)
}

type appRun struct {
	cfg    AppConfig
	apps   []App
	nodes  []AppNode
	al     *allocator.Allocator
	clk    *allocator.ManualClock
	gang   bool
	execs  []*appExec
	want   []int // executors still to place
	live   []int // executors running
	first  []float64
	last   []float64 // last executor's launch
	finish []float64
	now    float64
	// metrics
	steps, overSteps, delivered, capacity float64
	backoffs, contestedRounds             int
	diag                                  *appDiag
	mirror                                *mirror
	stepNo                                int
}

// RunApps simulates apps on nodes under cfg.
func RunApps(apps []App, nodes []AppNode, cfg AppConfig) (AppResult, error) {
	r, err := newAppRun(apps, nodes, cfg)
	if err != nil {
		return AppResult{}, err
	}
	return r.run()
}

func newAppRun(apps []App, nodes []AppNode, cfg AppConfig) (*appRun, error) {
	if cfg.Step <= 0 {
		cfg.Step = time.Second
	}
	if cfg.Horizon <= 0 {
		cfg.Horizon = 1e6
	}
	if cfg.Beta < 0 || math.IsNaN(cfg.Beta) {
		return nil, fmt.Errorf("sim: beta %v must be >= 0", cfg.Beta)
	}
	if cfg.Backoff != nil {
		if err := cfg.Backoff.validate(); err != nil {
			return nil, err
		}
	}
	if cfg.FrameworkPlace != nil {
		if err := cfg.FrameworkPlace.validate(); err != nil {
			return nil, err
		}
	}
	clk := &allocator.ManualClock{T: time.Unix(0, 0)}
	al, err := allocator.New(allocator.Config{
		Sorter: cfg.Policy.Sorter, AgentSelection: cfg.Policy.Selection, Mode: allocator.Characterized,
		AllocationInterval: cfg.Step, Seed: cfg.Seed, Clock: clk, Gang: cfg.Gang,
	})
	if err != nil {
		return nil, err
	}
	_, gang := cfg.Policy.Sorter.(sorter.Gang)
	if gang && cfg.FrameworkPlace != nil {
		return nil, fmt.Errorf("sim: framework placement needs a criterion that does not place gangs, not %s", cfg.Policy.Label())
	}
	r := &appRun{cfg: cfg, apps: apps, nodes: nodes, al: al, clk: clk, gang: gang,
		want: make([]int, len(apps)), live: make([]int, len(apps)),
		first: make([]float64, len(apps)), last: make([]float64, len(apps)), finish: make([]float64, len(apps))}
	for i, n := range nodes {
		tot := fmt.Sprintf("cpus:%g;mem:%g;disk_bw:%g;net_bw:%g", n.Cpus, n.Mem, n.DiskBW, n.NetBW)
		res, err := resources.Parse(tot)
		if err != nil {
			return nil, err
		}
		if err := al.AddAgent(agentName(i), allocator.AgentInfo{Total: res}); err != nil {
			return nil, err
		}
	}
	for i := range r.first {
		r.first[i], r.finish[i] = math.NaN(), math.NaN()
	}
	if cfg.Diagnose || cfg.FrameworkPlace != nil {
		r.mirror = newMirror(nodes)
	}
	if cfg.Diagnose {
		r.diag = &appDiag{}
	}
	return r, nil
}

func agentName(i int) string { return fmt.Sprintf("server-%02d", i) }

func (r *appRun) run() (AppResult, error) {
	order := make([]int, len(r.apps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return r.apps[order[i]].Arrival < r.apps[order[j]].Arrival })
	next, done := 0, 0
	dt := r.cfg.Step.Seconds()
	for done < len(r.apps) {
		if r.now > r.cfg.Horizon {
			return AppResult{}, fmt.Errorf("sim: %d of %d applications unfinished at the horizon %gs", len(r.apps)-done, len(r.apps), r.cfg.Horizon)
		}
		for next < len(order) && r.apps[order[next]].Arrival <= r.now {
			if err := r.arrive(order[next]); err != nil {
				return AppResult{}, err
			}
			next++
		}
		if err := r.reportProgress(); err != nil {
			return AppResult{}, err
		}
		if err := r.allocate(); err != nil {
			return AppResult{}, err
		}
		n, err := r.advance(dt)
		if err != nil {
			return AppResult{}, err
		}
		done += n
		r.now += dt
		r.stepNo++
		r.clk.Advance(r.cfg.Step)
	}
	return r.result(), nil
}

func (r *appRun) arrive(i int) error {
	a := &r.apps[i]
	if err := r.al.AddFramework(a.Name, ""); err != nil {
		return err
	}
	r.want[i] = a.Executors
	if r.gang {
		return r.al.Observe(allocpolicy.AppDemand{Framework: a.Name, Demand: profile.AppDemand{Executors: a.Executors, Cpus: a.Cpus, Mem: a.Mem, Profile: a.Predicted}})
	}
	return r.declare(i)
}

func (r *appRun) execRes(i int) resources.Resources {
	res, _ := resources.Parse(fmt.Sprintf("cpus:%g;mem:%g", r.apps[i].Cpus, r.apps[i].Mem))
	return res
}

func (r *appRun) declare(i int) error {
	n := r.want[i]
	if fp := r.cfg.FrameworkPlace; fp != nil {
		n = fp.fwAsk(n)
	}
	return r.al.SetDemand(r.apps[i].Name, allocator.Demand{Task: r.execRes(i), Tasks: n})
}

func (r *appRun) allocate() error {
	byName := map[string]int{}
	for i := range r.apps {
		byName[r.apps[i].Name] = i
	}
	offers := r.al.Allocate().Offers
	if r.cfg.FrameworkPlace != nil {
		return r.allocateByScore(byName, offers)
	}
	for _, o := range offers {
		i := byName[o.Framework]
		ag := 0
		fmt.Sscanf(o.Agent, "server-%d", &ag)
		r.launch(i, ag, max(o.Tasks, 1))
	}
	return nil
}

// allocateByScore hands each application its cycle's offers, in the
// order of its first offer, to place by score (apps_fwplace.go).
func (r *appRun) allocateByScore(byName map[string]int, offers []allocator.Offer) error {
	var order []int
	per := map[int][]allocator.Offer{}
	for _, o := range offers {
		i := byName[o.Framework]
		if per[i] == nil {
			order = append(order, i)
		}
		per[i] = append(per[i], o)
	}
	for _, i := range order {
		if err := r.placeByScore(i, per[i]); err != nil {
			return err
		}
	}
	return nil
}

// launch starts n executors of application i on agent ag.
func (r *appRun) launch(i, ag, n int) {
	for k := 0; k < n; k++ {
		x := &appExec{app: i, agent: ag, left: r.apps[i].Stages[0].Work, start: r.now, anchor: r.now}
		r.execs = append(r.execs, x)
		r.mirrorLaunch(x)
	}
	if math.IsNaN(r.first[i]) {
		r.first[i] = r.now
	}
	r.last[i] = r.now
	r.want[i] -= n
	r.live[i] += n
}

// advance runs every executor dt seconds under the degradation law and
// returns how many applications finished.
func (r *appRun) advance(dt float64) (int, error) {
	type load struct{ d [2]float64 }
	loads := make([]load, len(r.nodes))
	for _, x := range r.execs {
		s := r.apps[x.app].Stages[x.stage]
		f := r.slots(x)
		loads[x.agent].d[0] += s.DiskBW * f
		loads[x.agent].d[1] += s.NetBW * f
	}
	if r.diag != nil {
		d := make([][2]float64, len(loads))
		for i := range loads {
			d[i] = loads[i].d
		}
		r.diagStep(d)
	}
	frac := make([][2]float64, len(r.nodes))
	seen := make([][2]float64, len(r.nodes)) // demand, for the monitor
	got := make([][2]float64, len(r.nodes))  // delivered
	for i, n := range r.nodes {
		c := [2]float64{n.DiskBW, n.NetBW}
		over := false
		for k := 0; k < 2; k++ {
			d := loads[i].d[k]
			frac[i][k] = 1
			del := d
			if c[k] > 0 && d > c[k] {
				over = true
				eff := c[k]
				if r.cfg.Degrade {
					eff = c[k] / (1 + r.cfg.Beta*(d/c[k]-1))
					frac[i][k] = eff / d
				}
				del = eff
			}
			seen[i][k], got[i][k] = d, del
			if c[k] > 0 {
				r.delivered += min(del, c[k]) * dt
				r.capacity += c[k] * dt
			}
		}
		r.steps++
		if over {
			r.overSteps++
		}
	}
	finished := 0
	w := 0
	for _, x := range r.execs {
		if r.step(x, frac[x.agent], r.slots(x), dt) {
			w2, err := r.exit(x)
			if err != nil {
				return 0, err
			}
			finished += w2
			continue
		}
		r.execs[w] = x
		w++
	}
	clear(r.execs[w:])
	r.execs = r.execs[:w]
	r.backoff(seen, got)
	return finished, nil
}

// step runs x for dt at its rate, times slots, the share of its task
// slots it runs (1 unless backed off); it reports whether x finished its
// last stage. Leftover time in a step carries into the next stage.
func (r *appRun) step(x *appExec, f [2]float64, slots, dt float64) bool {
	stages := r.apps[x.app].Stages
	for dt > 1e-12 {
		s := stages[x.stage]
		rate := 1.0
		if s.DiskBW > 0 {
			rate = min(rate, f[0])
		}
		if s.NetBW > 0 {
			rate = min(rate, f[1])
		}
		rate *= slots
		need := x.left / rate
		if need > dt {
			x.left -= dt * rate
			return false
		}
		dt -= need
		x.stage++
		if x.stage == len(stages) {
			return true
		}
		x.left = stages[x.stage].Work
	}
	return false
}

// exit returns a finished executor's resources; it reports 1 when it was
// its application's last.
func (r *appRun) exit(x *appExec) (int, error) {
	a := &r.apps[x.app]
	r.mirrorExit(x)
	if err := r.al.Recover(a.Name, agentName(x.agent), r.execRes(x.app), nil); err != nil {
		return 0, err
	}
	r.live[x.app]--
	if r.live[x.app] > 0 || r.want[x.app] > 0 {
		return 0, nil
	}
	r.finish[x.app] = r.now + r.cfg.Step.Seconds()
	return 1, r.al.RemoveFramework(a.Name)
}

func (r *appRun) result() AppResult {
	res := AppResult{Policy: r.cfg.Policy.Label()}
	for i := range r.apps {
		res.Makespan = max(res.Makespan, r.finish[i])
		res.Exec = append(res.Exec, r.finish[i]-r.first[i])
		res.JCT = append(res.JCT, r.finish[i]-r.apps[i].Arrival)
		res.LaunchSpread = append(res.LaunchSpread, r.last[i]-r.first[i])
	}
	if r.steps > 0 {
		res.OverallocFrac = r.overSteps / r.steps
	}
	if r.capacity > 0 {
		res.BWUtil = r.delivered / r.capacity
	}
	res.Backoffs, res.Contested = r.backoffs, r.contestedRounds
	if r.diag != nil {
		res.Diag = r.diag.result()
	}
	return res
}

// median is the nearest-rank median of v (not changed).
