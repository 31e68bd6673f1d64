package master

import (
	"testing"
	"time"
)

// A triggered cycle waits out the gap since the last cycle, and no longer:
// at once when the gap has passed, early when the interval's tick comes,
// not at all when the master stops; a trigger that came meanwhile is
// consumed by the cycle about to run.
func TestKickPacer(t *testing.T) {
	const gap = 40 * time.Millisecond
	for _, tc := range []struct {
		name      string
		since     time.Duration // since the last cycle ended
		tick      bool          // the interval's tick is due
		stop      bool
		want      bool
		min, max  time.Duration
		kickAfter bool // a trigger still queued afterwards
	}{
		{name: "gap passed", since: 2 * gap, want: true, max: gap / 2, kickAfter: true},
		{name: "within the gap", since: gap / 4, want: true, min: gap / 2, max: 20 * gap},
		{name: "tick first", since: 0, tick: true, want: true, max: gap / 2},
		{name: "stopped", since: 0, stop: true, want: false, max: gap / 2, kickAfter: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			p := &kickPacer{gap: gap, last: now.Add(-tc.since), now: time.Now}
			stop, tick, kick := make(chan struct{}), make(chan time.Time, 1), make(chan struct{}, 1)
			kick <- struct{}{} // another trigger while waiting
			if tc.tick {
				tick <- now
			}
			if tc.stop {
				close(stop)
			}
			if got := p.wait(stop, tick, kick); got != tc.want {
				t.Fatalf("wait = %v, want %v", got, tc.want)
			}
			took := time.Since(now)
			if took < tc.min || took > tc.max {
				t.Errorf("waited %v, want %v-%v", took, tc.min, tc.max)
			}
			if queued := len(kick) == 1; queued != tc.kickAfter {
				t.Errorf("a trigger still queued: %v, want %v", queued, tc.kickAfter)
			}
		})
	}
	p := newKickPacer(time.Second)
	if p.gap != 100*time.Millisecond {
		t.Errorf("gap at a 1 s interval: %v, want 100ms", p.gap)
	}
	p.ran()
	if p.last.IsZero() {
		t.Error("ran did not note the cycle")
	}
}
