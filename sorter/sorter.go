package sorter

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/allot-sched/allot/resources"
)

// Framework is what criteria read about one framework.
type Framework struct {
	// Index is the registration order; the final tie-break and FIFO's key.
	Index int
	// Weight is phi_n (> 0); the weight of the framework's role.
	Weight float64
	// Allocated is a_n: everything the framework holds, offered or in use.
	Allocated resources.Vector
	// Demand is d_n, the declared per-task demand. Zero when the framework
	// declared none or the allocator runs in oblivious mode; criteria then
	// fall back to Allocated (the paper's "inferred" demand).
	Demand resources.Vector
	// Tasks is x_n, tasks' worth allocated (meaningful with a Demand).
	Tasks int64
	// MaxTasks is N_n for TSF: tasks n could run with the cluster to itself
	// (see TaskCapacity). Zero when unknown.
	MaxTasks int64
	// Virtual is the framework's head job in FSP's virtual fair cluster
	// (filled by the allocator's virtual cluster model; zero otherwise).
	Virtual Virtual
}

// HasDemand reports whether the framework declared a per-task demand.
func (f *Framework) HasDemand() bool { return f.Demand != resources.Vector{} }

// Agent is what criteria read about one agent (server).
type Agent struct {
	Index     int
	Capacity  resources.Vector // c_i
	Available resources.Vector // residual: c_i minus everything allocated on i
}

// Cluster is what criteria read about the whole cluster.
type Cluster struct {
	Total resources.Vector // C_r = sum_i c_{i,r}
}

// Criterion is any framework-selection rule.
type Criterion interface {
	// Name is the flag value that selects the criterion ("drf", "psdsf", ...).
	Name() string
}

// Ordering is a criterion whose key does not depend on the agent: the
// allocator keeps frameworks sorted by it and serves the first eligible one.
type Ordering interface {
	Criterion
	Key(f *Framework, c *Cluster) float64
}

// PerAgent is a criterion whose score depends on the agent being offered.
type PerAgent interface {
	Criterion
	Score(f *Framework, a *Agent, c *Cluster) float64
}

// Separable is a PerAgent criterion whose score, for a framework with a
// declared demand, factors as FrameworkFactor(f) x AgentFactor(d, a) with a
// product of zero whenever the framework factor is zero. Score must equal
// that product exactly (same float operations) so that the allocator's fast
// joint selection and brute-force selection agree bit for bit.
type Separable interface {
	PerAgent
	FrameworkFactor(f *Framework) float64
	AgentFactor(d resources.Vector, a *Agent) float64
}

// CapacityScored is a PerAgent criterion whose score for a framework
// without a declared demand depends on the agent only through its capacity,
// never on what is left on it. Agents of one capacity then share one order
// of frameworks, which the allocator keeps sorted instead of scoring every
// framework on every agent.
type CapacityScored interface {
	PerAgent
	ScoresByCapacity()
}

// Sampler is a criterion that picks a framework at random with probability
// proportional to Weight; the allocator draws from its seeded source.
type Sampler interface {
	Criterion
	Weight(f *Framework) float64
}

// Interface checks: each criterion implements the shape it claims.
var (
	_ Ordering       = DRF{}
	_ Ordering       = TSF{}
	_ Ordering       = FIFO{}
	_ Ordering       = Capacity{}
	_ Separable      = PSDSF{}
	_ CapacityScored = PSDSF{}
	_ Separable      = RPSDSF{}
	_ PerAgent       = Tetris{}
	_ Sampler        = Random{}
	_ Ordering       = FSP{}
)

// DRF is dominant resource fairness (Ghodsi et al., NSDI 2011), in its
// DRFH form for heterogeneous servers (Wang, Liang, Li, TPDS 2015):
//
//	s_n = max_r a_{n,r} / (phi_n C_r)
//
// over reservable resources (the advisory bandwidths are not shared out).
// Smallest first. Mesos's default sorter.
type DRF struct{}

func (DRF) Name() string { return "drf" }

func (DRF) Key(f *Framework, c *Cluster) float64 {
	return f.Allocated.DominantShare(c.Total) / f.Weight
}

// TSF is task share fairness (Wang, Li, Liang, Li, SC 2016):
//
//	t_n = x_n / (phi_n N_n),  N_n = sum_i min_r floor(c_{i,r} / d_{n,r})
//
// N_n is the number of tasks n could run with the whole cluster to itself.
// Smallest first. A framework without a declared demand has no task count;
// it is ranked by its dominant share, as DRF.
type TSF struct{}

func (TSF) Name() string { return "tsf" }

func (TSF) Key(f *Framework, c *Cluster) float64 {
	if !f.HasDemand() {
		return DRF{}.Key(f, c)
	}
	if f.MaxTasks <= 0 {
		return math.Inf(1)
	}
	return float64(f.Tasks) / (f.Weight * float64(f.MaxTasks))
}

// TaskCapacity is min_r floor(c_r / d_r) over kinds with d_r > 0: how many
// tasks of demand d fit in c. A zero demand fits no countable number; it
// returns 0.
func TaskCapacity(d, c resources.Vector) int64 {
	n := int64(-1)
	for k := resources.Kind(0); k < resources.NumKinds; k++ {
		if d[k] <= 0 || k.Advisory() {
			continue
		}
		m := int64(c[k] / d[k])
		if n < 0 || m < n {
			n = m
		}
	}
	if n < 0 {
		return 0
	}
	return n
}

// PSDSF is per-server dominant share fairness (Khamse-Ashari, Lambadaris,
// Kesidis, Urgaonkar, Zhao, ICC 2017). On server i:
//
//	K_{n,i} = x_n max_r d_{n,r} / (phi_n c_{i,r})
//
// smallest first among frameworks whose task fits on i. Without a declared
// demand, x_n d_n is replaced by the allocation a_n (over the resources
// server i has).
type PSDSF struct{}

func (PSDSF) Name() string { return "psdsf" }

// ScoresByCapacity: K_{n,i} reads c_i, not the residual.
func (PSDSF) ScoresByCapacity() {}

func (PSDSF) FrameworkFactor(f *Framework) float64 { return float64(f.Tasks) / f.Weight }

func (PSDSF) AgentFactor(d resources.Vector, a *Agent) float64 {
	r, _ := d.MaxRatio(a.Capacity, false)
	return r
}

func (p PSDSF) Score(f *Framework, a *Agent, c *Cluster) float64 {
	if !f.HasDemand() {
		return heldRatio(f.Allocated, a.Capacity) / f.Weight
	}
	return product(p.FrameworkFactor(f), p.AgentFactor(f.Demand, a))
}

// RPSDSF is residual PS-DSF (Shan, Jain, Kesidis, Urgaonkar, Khamse-Ashari,
// Lambadaris 2021): PS-DSF measured against what is left on the server,
//
//	K~_{n,i} = x_n max_r d_{n,r} / (phi_n (c_{i,r} - sum_n' x_{n',i} d_{n',r}))
//
// so a server that is filling up in one resource steers the frameworks that
// need it elsewhere. Without a declared demand, x_n d_n is replaced by the
// allocation a_n and resources exhausted on i are skipped.
type RPSDSF struct{}

func (RPSDSF) Name() string { return "rpsdsf" }

func (RPSDSF) FrameworkFactor(f *Framework) float64 { return float64(f.Tasks) / f.Weight }

func (RPSDSF) AgentFactor(d resources.Vector, a *Agent) float64 {
	r, _ := d.MaxRatio(a.Available, false)
	return r
}

func (p RPSDSF) Score(f *Framework, a *Agent, c *Cluster) float64 {
	if !f.HasDemand() {
		return heldRatio(f.Allocated, a.Available) / f.Weight
	}
	return product(p.FrameworkFactor(f), p.AgentFactor(f.Demand, a))
}

// heldRatio is max_r held_r / per_r over the reservable kinds the server
// has (per_r > 0): the oblivious stand-in for x_n max_r d_{n,r} / c_{i,r}.
// Kinds the server lacks or has exhausted say nothing about what this
// server would give the framework, so they are skipped rather than
// scoring +Inf (which would starve, say, a GPU holder on cpu-only agents).
func heldRatio(held, per resources.Vector) float64 {
	var s float64
	for k := resources.Kind(0); k < resources.NumKinds; k++ {
		if k.Advisory() || per[k] <= 0 {
			continue
		}
		if v := float64(held[k]) / float64(per[k]); v > s {
			s = v
		}
	}
	return s
}

// product is x*y with 0*anything = 0, so that a framework holding nothing
// ties at zero on every server (the tie then goes to the lowest agent).
func product(x, y float64) float64 {
	if x == 0 {
		return 0
	}
	return x * y
}

// FIFO serves frameworks in registration order: the baseline schedulers of
// the papers compare against (Hadoop's FIFO).
type FIFO struct{}

func (FIFO) Name() string { return "fifo" }

func (FIFO) Key(f *Framework, _ *Cluster) float64 { return float64(f.Index) }

// Capacity is the memory-only fair sharing of YARN's capacity and fair
// schedulers, the single-resource baseline:
//
//	m_n = a_{n,mem} / (phi_n C_mem)
type Capacity struct{}

func (Capacity) Name() string { return "capacity" }

func (Capacity) Key(f *Framework, c *Cluster) float64 {
	return f.Allocated[resources.Mem].Ratio(c.Total[resources.Mem]) / f.Weight
}

// Tetris packs by alignment (Grandl et al., SIGCOMM 2014): the dot product
// of the task's peak demand and the server's free resources, each
// normalised by the server's capacity, over cpus, mem, disk_bw and net_bw
// (the four resources Tetris packs):
//
//	A_{n,i} = sum_r (d_{n,r}/c_{i,r}) (avail_{i,r}/c_{i,r})
//
// Highest alignment first, so Score is -A. Tetris needs a demand; without
// one the score is 0 and registration order decides.
type Tetris struct{}

func (Tetris) Name() string { return "tetris" }

var tetrisKinds = [...]resources.Kind{resources.CPUs, resources.Mem, resources.DiskBW, resources.NetBW}

func (Tetris) Score(f *Framework, a *Agent, _ *Cluster) float64 {
	var s float64
	for _, k := range tetrisKinds {
		if a.Capacity[k] <= 0 {
			continue
		}
		c := float64(a.Capacity[k])
		s += float64(f.Demand[k]) / c * float64(a.Available[k]) / c
	}
	return -s
}

// Random is Mesos's random sorter: each pick is a framework drawn with
// probability proportional to its weight.
type Random struct{}

func (Random) Name() string { return "random" }

func (Random) Weight(f *Framework) float64 { return f.Weight }

// criteria lists every criterion by flag name, with accepted aliases.
var criteria = map[string]Criterion{
	"drf": DRF{}, "tsf": TSF{}, "psdsf": PSDSF{}, "ps-dsf": PSDSF{},
	"rpsdsf": RPSDSF{}, "rps-dsf": RPSDSF{}, "fifo": FIFO{}, "capacity": Capacity{},
	"tetris": Tetris{}, "random": Random{},
	"prophet": Prophet{}, "tetris-peak": TetrisPeak{}, "tetrispeak": TetrisPeak{},
	"bandit": Bandit{},
	"fspy":   FSP{}, "fsp": FSP{Oracle: true},
}

// Names lists the canonical criterion names, sorted.
func Names() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range criteria {
		if !seen[c.Name()] {
			seen[c.Name()] = true
			out = append(out, c.Name())
		}
	}
	sort.Strings(out)
	return out
}

// Lookup returns the criterion named name (case-insensitive).
func Lookup(name string) (Criterion, error) {
	c, ok := criteria[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return nil, fmt.Errorf("unknown sorter %q: choose one of %s", name, strings.Join(Names(), ", "))
	}
	return c, nil
}
