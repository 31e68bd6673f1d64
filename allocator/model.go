package allocator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/allot-sched/allot/allocator/policy"
	"time"

	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// model is the state of a stateful policy that the allocator owns: FSP's
// virtual cluster, Prophet's availability timelines, the co-location
// bandit's preference matrix. It advances only by the events the
// allocator forwards and the allocator's clock, so the same events give
// the same state; criteria read it through views that refresh fills in.
//
// Concurrency contract. The allocator is not safe for concurrent use, and
// a model need not be either: every method below is called by the
// allocator, synchronously, from inside one of its exported methods, on
// the goroutine that called that method. The master holds m.mu around
// every call into its allocator (its allocation loop, the scheduler and
// agent handlers, and the replicated registry's apply, snapshot and
// restore), so a model never sees two calls at once; the simulator runs
// its allocator on one goroutine. A model must not call back into the
// allocator, keep pointers to the views after refresh returns, or start
// goroutines that touch its state.
//
//   - observe is called once per change of the allocator's state that
//     succeeded (a call that returned an error changed nothing and is not
//     forwarded), after the change, in the order the changes happened,
//     and for every offer a cycle decides. Each event carries the
//     allocator's clock at that moment. observe must be deterministic: a
//     master that replays the same events at the same times, or restores a
//     snapshot and replays the events after it, reaches the same state.
//   - refresh is called exactly once per cycle, first thing in Allocate,
//     before any criterion computes a key or a score, with the cycle's
//     time. It brings the view fields the model owns up to date and
//     reports whether it changed any; if so the allocator recomputes every
//     framework's keys before filling (as after the cluster's totals
//     changed). Nothing else calls it.
//   - snapshot is called between cycles, never during one, and must
//     return quickly: like raft's FSM.Snapshot it runs while the master
//     holds its lock. It returns bytes the model no longer references, so
//     the caller may persist them after the lock is released while the
//     model keeps observing.
//   - restore is not called concurrently with anything. It discards all
//     previous state and replaces it with a snapshot's; on error it must
//     leave the previous state as it was (the allocator then restores the
//     models it already restored from their earlier snapshots, so a
//     failed RestorePolicies changes nothing).
type model interface {
	// name identifies the model's record in a snapshot; unique per
	// allocator.
	name() string
	observe(e event)
	refresh(now time.Time, v views) (changed bool)
	snapshot() ([]byte, error)
	restore(data []byte) error
}

// eventKind says what changed.
type eventKind uint8

const (
	evAgentAdded eventKind = iota + 1
	evAgentRemoved
	evAgentUpdated
	evFrameworkAdded
	evFrameworkRemoved
	evFrameworkActivated
	evFrameworkDeactivated
	evSuppressed
	evRevived
	evDemandSet
	evWeightsSet
	evRecovered
	evOffered
	evAppDemandSet // an application demand declared or cleared (gang.go)
	evJobType      // the JobType signal (bandit.go)
	evUsage        // the Usage signal (bandit.go)
	evJobSizeSet   // the JobSize signal (virtual.go)
	evCoProgress   // the CoProgress signal (bandit.go)
	evProgress     // the StageProgress signal (progress.go)
)

// event is one change as a model sees it. Fields a kind does not use are
// zero.
type event struct {
	at        time.Time // the allocator's clock when it happened
	kind      eventKind
	framework string
	agent     string
	// res is the agent's total (added, updated), the task demanded
	// (demand set), or the resources recovered or offered.
	res resources.Resources
	// tasks is the tasks' worth demanded (negative: unlimited) or offered.
	tasks int
	// app is the application demand declared (evAppDemandSet); nil when
	// the declaration was withdrawn. Models copy what they keep.
	app *profile.AppDemand
	// jobType is the type set (job type set).
	jobType string
	// usage is the node's measured usage with its advertised bandwidths,
	// and holders the frameworks holding resources on the agent when it
	// was observed (usage).
	usage   *sorter.NodeUsage
	holders []string
	// coProgress is the co-location's relative progress rate (co-location
	// progress; holders as for usage).
	coProgress float64
	// size is the job declared (job size set).
	size policy.JobSize
	// progress is the stage progress reported (stage progress).
	progress policy.StageProgress
}

// views is what refresh may write: the views criteria read. A model
// writes only the fields it owns (none of today's fields, which the
// allocator keeps); the allocator never writes those.
type views struct{ a *Allocator }

// framework is the view of framework id, nil if it is not registered.
func (v views) framework(id string) *sorter.Framework {
	if i, ok := v.a.fwByID[id]; ok {
		return &v.a.fws[i].view
	}
	return nil
}

// agent is the view of agent id, nil if it is not registered.
func (v views) agent(id string) *sorter.Agent {
	if i, ok := v.a.agentByID[id]; ok {
		return &v.a.agents[i].view
	}
	return nil
}

// addModel makes m part of the allocator's state from now on. New will
// call it for the policies that need a model; tests call it directly.
func (a *Allocator) addModel(m model) { a.models = append(a.models, m) }

// tell forwards e, stamped with the clock, to every model. Callers check
// len(a.models) first so that an allocator without models builds no event.
func (a *Allocator) tell(e event) {
	e.at = a.clock.Now()
	for _, m := range a.models {
		m.observe(e)
	}
}

// refreshModels runs every model's refresh before a cycle and reports
// whether any changed the views.
func (a *Allocator) refreshModels(now time.Time) bool {
	changed := false
	for _, m := range a.models {
		if m.refresh(now, views{a}) {
			changed = true
		}
	}
	return changed
}

// snapshotVersion is the first byte of a policy snapshot; a change of the
// format changes it.
const snapshotVersion = 1

// SnapshotPolicies returns the state of every stateful policy model as
// one opaque record, for the master to replicate with its registry. It is
// empty of models today but always valid input to RestorePolicies.
func (a *Allocator) SnapshotPolicies() ([]byte, error) {
	out := []byte{snapshotVersion}
	out = binary.AppendUvarint(out, uint64(len(a.models)))
	for _, m := range a.models {
		data, err := m.snapshot()
		if err != nil {
			return nil, fmt.Errorf("snapshot policy %s: %w", m.name(), err)
		}
		out = appendBytes(out, []byte(m.name()))
		out = appendBytes(out, data)
	}
	return out, nil
}

// RestorePolicies replaces the state of every policy model with a
// snapshot's. The snapshot must name the same models in the same order
// (the allocator was built with the same policy). It changes everything
// or, on error, nothing.
func (a *Allocator) RestorePolicies(snap []byte) error {
	records, err := parsePolicies(snap)
	if err != nil {
		return fmt.Errorf("restore policies: %w", err)
	}
	if len(records) != len(a.models) {
		return fmt.Errorf("restore policies: snapshot holds %d models, this allocator has %d", len(records), len(a.models))
	}
	for i, m := range a.models {
		if records[i].name != m.name() {
			return fmt.Errorf("restore policies: snapshot model %d is %q, this allocator's is %q", i, records[i].name, m.name())
		}
	}
	before := make([][]byte, len(a.models))
	for i, m := range a.models {
		if before[i], err = m.snapshot(); err != nil {
			return fmt.Errorf("restore policies: save %s before restoring: %w", m.name(), err)
		}
	}
	for i, m := range a.models {
		if err := m.restore(records[i].data); err != nil {
			for j := 0; j < i; j++ {
				// put back what was replaced; restoring a model's own
				// snapshot cannot fail short of a bug, which is reported
				if rerr := a.models[j].restore(before[j]); rerr != nil {
					err = errors.Join(err, fmt.Errorf("roll back %s: %w", a.models[j].name(), rerr))
				}
			}
			return fmt.Errorf("restore policy %s: %w", m.name(), err)
		}
	}
	return nil
}

// ForgetUnknownFrameworks makes the policy models forget frameworks the
// allocator does not have, as if told they were removed. A master calls
// it after RestorePolicies once the registry's frameworks are back: a
// snapshot can name frameworks removed after it was taken and before the
// failover. (Restoring into an allocator that learns its frameworks only
// later must not call it.)
func (a *Allocator) ForgetUnknownFrameworks() {
	for _, m := range a.models {
		if f, ok := m.(forgetter); ok {
			f.forgetUnknown(func(id string) bool { _, ok := a.fwByID[id]; return ok }, a.clock.Now())
		}
	}
}

// forgetter is a model that keeps per-framework state a restore may bring
// back for frameworks that are gone.
type forgetter interface {
	forgetUnknown(known func(framework string) bool, now time.Time)
}

type policyRecord struct {
	name string
	data []byte
}

func parsePolicies(b []byte) ([]policyRecord, error) {
	if len(b) == 0 || b[0] != snapshotVersion {
		return nil, fmt.Errorf("not a policy snapshot of version %d", snapshotVersion)
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errors.New("truncated policy snapshot (model count)")
	}
	b = b[k:]
	records := make([]policyRecord, 0, n)
	for i := uint64(0); i < n; i++ {
		var name, data []byte
		var ok bool
		if name, b, ok = cutBytes(b); !ok {
			return nil, fmt.Errorf("truncated policy snapshot (name of model %d)", i)
		}
		if data, b, ok = cutBytes(b); !ok {
			return nil, fmt.Errorf("truncated policy snapshot (state of model %d)", i)
		}
		records = append(records, policyRecord{string(name), data})
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("policy snapshot has %d bytes after its last model", len(b))
	}
	return records, nil
}

// appendBytes appends p with its length in front.
func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// cutBytes reads what appendBytes wrote from the front of b.
func cutBytes(b []byte) (p, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, b, false
	}
	return b[k : k+int(n) : k+int(n)], b[k+int(n):], true
}

// PolicyState is one model's record in a policy snapshot: its name and
// its state in the model's own encoding (JSON for today's models).
type PolicyState struct {
	Name string
	Data []byte
}

// SplitPolicies returns the models' records in a SnapshotPolicies
// snapshot, in order, for display (the operator's policy show); it
// restores nothing.
func SplitPolicies(snap []byte) ([]PolicyState, error) {
	records, err := parsePolicies(snap)
	if err != nil {
		return nil, err
	}
	out := make([]PolicyState, len(records))
	for i, r := range records {
		out[i] = PolicyState{Name: r.name, Data: r.data}
	}
	return out, nil
}
