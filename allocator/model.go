package allocator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/sorter"
)

// views is the allocator's policy.Views: what a model's Refresh may
// write.
type views struct{ a *Allocator }

// Framework is the view of framework id, nil if it is not registered.
func (v views) Framework(id string) *sorter.Framework {
	if i, ok := v.a.fwByID[id]; ok {
		return &v.a.fws[i].view
	}
	return nil
}

// Agent is the view of agent id, nil if it is not registered.
func (v views) Agent(id string) *sorter.Agent {
	if i, ok := v.a.agentByID[id]; ok {
		return &v.a.agents[i].view
	}
	return nil
}

// addModel makes m part of the allocator's state from now on. New will
// call it for the policies that need a model; tests call it directly.
func (a *Allocator) addModel(m policy.Model) { a.models = append(a.models, m) }

// Model is the policy model of that name (policy.Model.Name) among the
// allocator's, nil if it has none: how a caller reaches a policy's own
// operations (bandit.Of, the bandit's preference export).
func (a *Allocator) Model(name string) policy.Model {
	for _, m := range a.models {
		if m.Name() == name {
			return m
		}
	}
	return nil
}

// tell forwards e, stamped with the clock, to every model. Callers check
// len(a.models) first so that an allocator without models builds no event.
func (a *Allocator) tell(e policy.Event) {
	e.At = a.clock.Now()
	for _, m := range a.models {
		m.Observe(e)
	}
}

// refreshModels runs every model's refresh before a cycle and reports
// whether any changed the views.
func (a *Allocator) refreshModels(now time.Time) bool {
	changed := false
	for _, m := range a.models {
		if m.Refresh(now, views{a}) {
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
		data, err := m.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("snapshot policy %s: %w", m.Name(), err)
		}
		out = appendBytes(out, []byte(m.Name()))
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
		if records[i].name != m.Name() {
			return fmt.Errorf("restore policies: snapshot model %d is %q, this allocator's is %q", i, records[i].name, m.Name())
		}
	}
	before := make([][]byte, len(a.models))
	for i, m := range a.models {
		if before[i], err = m.Snapshot(); err != nil {
			return fmt.Errorf("restore policies: save %s before restoring: %w", m.Name(), err)
		}
	}
	for i, m := range a.models {
		if err := m.Restore(records[i].data); err != nil {
			for j := 0; j < i; j++ {
				// put back what was replaced; restoring a model's own
				// snapshot cannot fail short of a bug, which is reported
				if rerr := a.models[j].Restore(before[j]); rerr != nil {
					err = errors.Join(err, fmt.Errorf("roll back %s: %w", a.models[j].Name(), rerr))
				}
			}
			return fmt.Errorf("restore policy %s: %w", m.Name(), err)
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
		if f, ok := m.(policy.Forgetter); ok {
			f.ForgetUnknown(func(id string) bool { _, ok := a.fwByID[id]; return ok }, a.clock.Now())
		}
	}
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
