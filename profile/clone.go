package profile

import "time"

// Clone returns an independent copy of t: changing either leaves the other
// as it was. The allocator's gang path scores against a cycle-local copy
// of a server's timeline that holds the executors it placed earlier in the
// same cycle, before its model hears of them.
func (t *Timeline) Clone() *Timeline {
	// A running executor's stages are never changed in place (Reanchor
	// moves its launch, a field of the copied struct), so they are shared.
	return &Timeline{cap: t.cap, pts: append([]point(nil), t.pts...), execs: append([]running(nil), t.execs...)}
}

// IdleFrom reports whether nothing is predicted on the timeline from at
// on: no breakpoint after at and no use at it. Score for a profile whose
// first stage starts at or after at then reads the full capacity
// throughout, exactly as on an empty timeline of the same capacities, so
// its result depends on the capacities alone and not on at: the allocator
// scores each profile once per capacity for all idle agents.
func (t *Timeline) IdleFrom(at time.Time) bool {
	n := len(t.pts)
	return n == 0 || (t.pts[n-1].at <= at.UnixNano() && t.pts[n-1].used == [NumResources]int64{})
}

// Capacities are the quantized disk and network capacities: equal
// exactly when two timelines score an idle profile alike.
func (t *Timeline) Capacities() [NumResources]int64 { return t.cap }
