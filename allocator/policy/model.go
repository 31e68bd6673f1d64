package policy

import (
	"time"

	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Model is the state of a stateful policy that the allocator owns: FSP's
// virtual cluster, Prophet's availability timelines, the co-location
// bandit's preference matrix. It advances only by the events the
// allocator forwards and the allocator's clock, so the same events give
// the same state; criteria read it through views that Refresh fills in.
//
// Concurrency contract. The allocator is not safe for concurrent use, and
// a model need not be either: every method below is called by the
// allocator, synchronously, from inside one of its exported methods, on
// the goroutine that called that method. The master holds its lock around
// every call into its allocator (its allocation loop, the scheduler and
// agent handlers, and the replicated registry's apply, snapshot and
// restore), so a model never sees two calls at once; the simulator runs
// its allocator on one goroutine. A model must not call back into the
// allocator, keep the Views after Refresh returns, or start goroutines
// that touch its state.
//
//   - Observe is called once per change of the allocator's state that
//     succeeded (a call that returned an error changed nothing and is not
//     forwarded), after the change, in the order the changes happened,
//     and for every offer a cycle decides. Each event carries the
//     allocator's clock at that moment. Observe must be deterministic: a
//     master that replays the same events at the same times, or restores a
//     snapshot and replays the events after it, reaches the same state.
//   - Refresh is called exactly once per cycle, first thing in Allocate,
//     before any criterion computes a key or a score, with the cycle's
//     time. It brings the view fields the model owns up to date and
//     reports whether it changed any; if so the allocator recomputes every
//     framework's keys before filling (as after the cluster's totals
//     changed). Nothing else calls it.
//   - Snapshot is called between cycles, never during one, and must
//     return quickly: like raft's FSM.Snapshot it runs while the master
//     holds its lock. It returns bytes the model no longer references, so
//     the caller may persist them after the lock is released while the
//     model keeps observing.
//   - Restore is not called concurrently with anything. It discards all
//     previous state and replaces it with a snapshot's; on error it must
//     leave the previous state as it was (the allocator then restores the
//     models it already restored from their earlier snapshots, so a
//     failed RestorePolicies changes nothing).
type Model interface {
	// Name identifies the model's record in a snapshot; unique per
	// allocator.
	Name() string
	Observe(e Event)
	Refresh(now time.Time, v Views) (changed bool)
	Snapshot() ([]byte, error)
	Restore(data []byte) error
}

// Forgetter is a Model that keeps per-framework state a restore may bring
// back for frameworks that are gone; the allocator's
// ForgetUnknownFrameworks calls it with the frameworks it knows.
type Forgetter interface {
	ForgetUnknown(known func(framework string) bool, now time.Time)
}

// Views is what Refresh may write: the views criteria read. A model
// writes only the fields it owns (sorter.Framework.Virtual today); the
// allocator never writes those.
type Views interface {
	// Framework is the view of framework id, nil if it is not registered.
	Framework(id string) *sorter.Framework
	// Agent is the view of agent id, nil if it is not registered.
	Agent(id string) *sorter.Agent
}

// EventKind says what changed.
type EventKind uint8

const (
	AgentAdded EventKind = iota + 1
	AgentRemoved
	AgentUpdated
	FrameworkAdded
	FrameworkRemoved
	FrameworkActivated
	FrameworkDeactivated
	Suppressed
	Revived
	DemandSet
	WeightsSet
	Recovered
	Offered
	AppDemandSet          // an application demand declared or cleared (AppDemand)
	JobTypeSet            // JobType
	UsageObserved         // Usage
	JobSizeSet            // JobSize
	CoProgressObserved    // CoProgress
	StageProgressObserved // StageProgress
)

// Event is one change as a model sees it. Fields a kind does not use are
// zero.
type Event struct {
	At        time.Time // the allocator's clock when it happened
	Kind      EventKind
	Framework string
	Agent     string
	// Res is the agent's total (added, updated), the task demanded
	// (demand set), or the resources recovered or offered.
	Res resources.Resources
	// Tasks is the tasks' worth demanded (negative: unlimited) or offered.
	Tasks int
	// App is the application demand declared (AppDemandSet); nil when
	// the declaration was withdrawn. Models copy what they keep.
	App *profile.AppDemand
	// JobType is the type set (JobTypeSet).
	JobType string
	// Usage is the node's measured usage with its advertised bandwidths,
	// and Holders the frameworks holding resources on the agent when it
	// was observed (UsageObserved).
	Usage   *sorter.NodeUsage
	Holders []string
	// CoProgress is the co-location's relative progress rate
	// (CoProgressObserved; Holders as for usage).
	CoProgress float64
	// Size is the job declared (JobSizeSet).
	Size JobSize
	// Progress is the stage progress reported (StageProgressObserved).
	Progress StageProgress
}
