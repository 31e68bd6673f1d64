package master

import (
	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api/operator"
)

// A waiting framework's reason stays shown until it launches or stops
// wanting. The allocator counts cycles since a framework's last offer, and
// a framework that waits for room is often offered a leftover it cannot
// use (a whole agent's free part, in oblivious mode); each such offer would
// reset the count and hide its reason from /state for a few cycles,
// though nothing changed for it. So once shown, a reason of the cluster's
// (allocator.UnplacedKind.Blocked) stays, refreshed each time, while the
// allocator still gives one.

// unplacedShownLocked reports whether id's reason was shown and nothing
// since cleared it. Caller holds m.mu.
func (m *Master) unplacedShownLocked(id string) bool {
	return m.unplacedShown[id]
}

// noteUnplacedLocked records whether id's reason is one that stays shown,
// forgetting frameworks that are gone. Caller holds m.mu.
func (m *Master) noteUnplacedLocked(id string, u allocator.Unplaced) {
	if !u.Kind.Blocked() {
		delete(m.unplacedShown, id)
		return
	}
	if m.unplacedShown == nil {
		m.unplacedShown = map[string]bool{}
	}
	m.unplacedShown[id] = true
	for f := range m.unplacedShown {
		if _, ok := m.frameworks[f]; !ok {
			delete(m.unplacedShown, f)
		}
	}
}

// placedLocked clears id's shown reason: it launched a task. Caller holds
// m.mu.
func (m *Master) placedLocked(id string) { delete(m.unplacedShown, id) }

// unplacedLocked is framework id's reason for /state: nil while offers
// reach it, its reason once unplacedIdleCycles cycles passed without one,
// and, for a reason of the cluster's, from then on until it launches or
// the allocator gives no such reason. Caller holds m.mu.
func (m *Master) unplacedLocked(id string) *operator.Unplaced {
	shown := m.unplacedShownLocked(id)
	if idle, err := m.alloc.IdleCycles(id); err != nil || (idle < unplacedIdleCycles && !shown) {
		return nil
	}
	u, err := m.alloc.WhyNothing(id)
	if err != nil || u.Kind == allocator.Placeable {
		delete(m.unplacedShown, id)
		return nil
	}
	m.noteUnplacedLocked(id, u)
	if u.Idle < unplacedIdleCycles && !(shown && u.Kind.Blocked()) {
		return nil
	}
	m.gpuUnplacedLocked(&u) // gpus.go
	return unplacedOf(u)
}
