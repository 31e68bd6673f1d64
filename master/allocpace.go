package master

import "time"

// kickPacer spaces the allocation cycles that calls trigger. Every DECLINE,
// ACCEPT with resources left, finished task, REVIVE and agent registration
// asks for a cycle (triggerAllocation). With hundreds of frameworks, or
// thousands of agents re-registering after a failover, that is a cycle
// right after the last one, again and again: each a full pass of the
// allocator under m.mu, competing with the very calls that asked for it.
// A triggered cycle therefore waits until at least gap has passed since
// the last cycle ended, and every trigger in that time is served by the
// one cycle. The interval's own cycles are not delayed.
type kickPacer struct {
	gap  time.Duration
	last time.Time // when the last cycle ended
	now  func() time.Time
	// after is the gap's timer: time.After, or a test's.
	after func(time.Duration) <-chan time.Time
}

// kickGapDivisor: triggered cycles come at most this many times per
// allocation interval (100 ms apart at the default 1 s).
const kickGapDivisor = 10

func newKickPacer(interval time.Duration) *kickPacer {
	return &kickPacer{gap: interval / kickGapDivisor, now: time.Now, after: time.After}
}

// wait holds a triggered cycle until gap has passed since the last one, or
// the interval's tick comes first; a trigger that arrived meanwhile is
// consumed, since the coming cycle serves it. It reports false if stop
// closed.
func (p *kickPacer) wait(stop <-chan struct{}, tick <-chan time.Time, kick chan struct{}) bool {
	d := p.gap - p.now().Sub(p.last)
	if d <= 0 {
		return true
	}
	select {
	case <-stop:
		return false
	case <-p.after(d):
	case <-tick:
	}
	select {
	case <-kick:
	default:
	}
	return true
}

// ran notes that a cycle (or a pass that would have been one, while not
// leading) just ended.
func (p *kickPacer) ran() { p.last = p.now() }
