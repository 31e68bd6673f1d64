package agent

import (
	"sort"
	"sync"
	"testing"
	"time"
)

// manualClock is a Clock that moves only when the test advances it, so a
// test decides when a grace period or an interval has passed instead of
// sleeping through it.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	c  *manualClock
	at time.Time
	ch chan time.Time // After's
	f  func()         // AfterFunc's
}

func newManualClock() *manualClock { return &manualClock{now: time.Unix(1_700_000_000, 0)} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After fires at once for d <= 0, as time.After does near enough.
func (c *manualClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.add(&manualTimer{c: c, ch: ch}, d)
	return ch
}

func (c *manualClock) AfterFunc(d time.Duration, f func()) Timer {
	return c.add(&manualTimer{c: c, f: f}, d)
}

func (c *manualClock) add(t *manualTimer, d time.Duration) *manualTimer {
	c.mu.Lock()
	t.at = c.now.Add(d)
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	c.Advance(0)
	return t
}

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	for i, u := range t.c.timers {
		if u == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Advance moves the clock by d and fires, in time order, every timer due.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due, rest []*manualTimer
	for _, t := range c.timers {
		if t.at.After(c.now) {
			rest = append(rest, t)
		} else {
			due = append(due, t)
		}
	}
	c.timers = rest
	now := c.now
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		if t.f != nil {
			go t.f()
		} else {
			t.ch <- now
		}
	}
}

// pending is how many timers wait to fire.
func (c *manualClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// waitPending waits until n timers wait to fire: whoever arms them has
// reached its wait.
func (c *manualClock) waitPending(t *testing.T, n int) {
	t.Helper()
	testWait(t, func() bool { return c.pending() >= n })
}

func TestManualClock(t *testing.T) {
	c := newManualClock()
	start := c.Now()
	a, b := c.After(2*time.Second), c.After(time.Second)
	fired := make(chan struct{})
	stopped := c.AfterFunc(time.Second, func() { t.Error("a stopped AfterFunc ran") })
	c.AfterFunc(3*time.Second, func() { close(fired) })
	if !stopped.Stop() {
		t.Error("Stop of a pending timer = false")
	}
	select {
	case <-c.After(0):
	default:
		t.Error("After(0) did not fire at once")
	}
	c.Advance(time.Second)
	select {
	case <-a:
		t.Error("a 2 s timer fired after 1 s")
	case now := <-b:
		if now.Sub(start) != time.Second {
			t.Errorf("fired at +%v", now.Sub(start))
		}
	}
	if c.pending() != 2 {
		t.Errorf("%d pending, want 2", c.pending())
	}
	c.Advance(2 * time.Second)
	<-a
	<-fired
	if c.pending() != 0 {
		t.Errorf("%d pending after all fired", c.pending())
	}
}
