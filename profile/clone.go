package profile

// Clone returns an independent copy of t: changing either leaves the other
// as it was. The allocator's gang path scores against a cycle-local copy
// of a server's timeline that holds the executors it placed earlier in the
// same cycle, before its model hears of them.
func (t *Timeline) Clone() *Timeline {
	// A running executor's stages are never changed in place (Reanchor
	// moves its launch, a field of the copied struct), so they are shared.
	return &Timeline{cap: t.cap, pts: append([]point(nil), t.pts...), execs: append([]running(nil), t.execs...)}
}
