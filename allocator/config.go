package allocator

import (
	"fmt"
	"strings"
	"time"

	"github.com/allot-sched/allot/allocator/policy/bandit"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Mode says whether the allocator knows frameworks' per-task demands.
type Mode int

const (
	// Oblivious: demands are unknown; a selected framework is offered all
	// unallocated resources of the agent (Mesos "coarse-grained").
	Oblivious Mode = iota
	// Characterized: frameworks declare per-task demand vectors and the
	// allocator hands out one task's worth at a time (progressive filling).
	Characterized
)

func (m Mode) String() string {
	if m == Characterized {
		return "characterized"
	}
	return "oblivious"
}

// ParseMode reads "oblivious" or "characterized".
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "oblivious", "coarse", "coarse-grained":
		return Oblivious, nil
	case "characterized", "characterised", "fine", "fine-grained":
		return Characterized, nil
	}
	return 0, fmt.Errorf("unknown mode %q: choose oblivious or characterized", s)
}

// Clock tells the allocator the time; the master passes the wall clock and
// the simulator its virtual clock.
type Clock interface{ Now() time.Time }

// ManualClock is a Clock that moves only when told (tests, simulator).
type ManualClock struct{ T time.Time }

func (c *ManualClock) Now() time.Time { return c.T }

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) { c.T = c.T.Add(d) }

// DefaultRefuseSeconds is Mesos's refuse_seconds when a decline carries
// filters without a value.
const DefaultRefuseSeconds = 5.0

// DefaultMinAllocatable is Mesos's default --min_allocatable_resources:
// an agent is offered only if it has at least 0.01 cpus or 32 MB of memory.
func DefaultMinAllocatable() []resources.Resources {
	return []resources.Resources{resources.MustParse("cpus:0.01"), resources.MustParse("mem:32")}
}

// Config chooses the policy. The zero value plus a Clock is DRF, RRR,
// oblivious, one-second interval, Mesos's min allocatable, seed 0.
type Config struct {
	Sorter             sorter.Criterion // default DRF
	AgentSelection     sorter.AgentSelection
	Mode               Mode
	AllocationInterval time.Duration         // default 1s; the shortest filter lifetime
	MinAllocatable     []resources.Resources // offer an agent only if it holds one of these; nil = default
	Seed               uint64
	Clock              Clock // required
	// Trace, if set, is called for every placement: one task's worth in
	// characterized mode, one agent's resources in oblivious mode.
	Trace func(Placement)
	// Bandit holds the co-location bandit's parameters (--sorter bandit,
	// allocator/policy/bandit); other sorters ignore it.
	Bandit bandit.Config

	// Gang parameterises the gang criteria (prophet, tetris-peak); the
	// zero value means DefaultGangParams, the paper's.
	Gang *GangParams

	// Reclaim turns on inverse offers (reclaim.go): a framework above its
	// fair share while others starve is asked to give resources back.
	// Off by default, so offers and everything else stay as they were.
	Reclaim bool

	// bruteForce turns off the fast paths (joint selection per shape,
	// per-capacity-class orders) and scores every pair; tests compare.
	bruteForce bool
}

// Offer is one decision of a cycle: resources of one agent for one framework.
type Offer struct {
	Framework string
	Agent     string
	Resources resources.Resources
	// Tasks is the number of tasks' worth in the offer (characterized mode);
	// zero for whole-agent offers.
	Tasks  int
	Reason Reason
	// Role is the role the resources are allocated to: one of the
	// framework's roles (Mesos's allocation_info.role).
	Role string
	// Reserved is the part of Resources that comes from reservations,
	// keyed by the reservation's role (the innermost of a refined stack);
	// nil when the offer holds only unreserved resources. Each
	// reservation pool is offered whole.
	Reserved map[string]resources.Resources
}

// Reason says why an offer went where it went.
type Reason struct {
	Criterion string
	Selection sorter.AgentSelection
	Mode      Mode
	// Score is the criterion's value for the framework when it was picked
	// (for the first task's worth of a characterized offer); lower won.
	Score float64
	// Why says, for a gang placement (gang.go), which rule chose the
	// application: "candidate half (3rd of 7 waiting)" or "deadline passed
	// 12s ago". Empty for every other path.
	Why string
}

func (r Reason) String() string {
	if r.Why != "" {
		return fmt.Sprintf("%s/%s/%s: %s, score %.6g", r.Criterion, r.Selection, r.Mode, r.Why, r.Score)
	}
	return fmt.Sprintf("%s/%s/%s: lowest score %.6g", r.Criterion, r.Selection, r.Mode, r.Score)
}

// Placement is one step of a cycle, reported to Config.Trace.
type Placement struct {
	Framework, Agent string
	FrameworkIndex   int
	AgentIndex       int
	Resources        resources.Resources
	Score            float64
}

// Filter is what a decline asks for. RefuseSeconds <= 0 installs none.
type Filter struct{ RefuseSeconds float64 }

// Demand is a framework's declared per-task demand in characterized mode.
type Demand struct {
	Task resources.Resources // d_n (scalars; ports are not demanded)
	// Tasks is how many more tasks' worth the framework wants now; a
	// negative value means unlimited. Each task's worth allocated counts
	// one down; the framework re-declares as its backlog changes.
	Tasks int
}
