package master

import (
	"testing"
	"time"
)

// A triggered cycle waits out the gap since the last cycle, and no longer:
// at once when the gap has passed, early when the interval's tick comes,
// not at all when the master stops; a trigger that came meanwhile is
// consumed by the cycle about to run. The pacer's clock and timer are the
// test's: what it waits for is the duration it asks of its timer, and it
// returns only when that timer (or the tick, or stop) fires.
func TestKickPacer(t *testing.T) {
	const gap = 40 * time.Millisecond
	for _, tc := range []struct {
		name      string
		since     time.Duration // since the last cycle ended
		tick      bool          // the interval's tick is due
		stop      bool
		want      bool
		timer     time.Duration // the wait asked of the timer; 0: none
		fire      bool          // the wait returns only once the timer fires
		kickAfter bool          // a trigger still queued afterwards
	}{
		{name: "gap passed", since: 2 * gap, want: true, kickAfter: true},
		{name: "within the gap", since: gap / 4, want: true, timer: gap * 3 / 4, fire: true},
		{name: "tick first", since: 0, tick: true, want: true, timer: gap},
		{name: "stopped", since: 0, stop: true, want: false, timer: gap, kickAfter: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(1_700_000_000, 0)
			asked := make(chan time.Duration, 1)
			timer := make(chan time.Time) // fires only when the test sends
			p := &kickPacer{gap: gap, last: now.Add(-tc.since), now: func() time.Time { return now },
				after: func(d time.Duration) <-chan time.Time { asked <- d; return timer }}
			stop, tick, kick := make(chan struct{}), make(chan time.Time, 1), make(chan struct{}, 1)
			kick <- struct{}{} // another trigger while waiting
			if tc.tick {
				tick <- now
			}
			if tc.stop {
				close(stop)
			}
			got := make(chan bool, 1)
			go func() { got <- p.wait(stop, tick, kick) }()
			var ret bool
			if tc.fire {
				if d := <-asked; d != tc.timer {
					t.Errorf("waited for a timer of %v, want %v", d, tc.timer)
				}
				select {
				case <-got:
					t.Fatal("returned while its timer was pending")
				default:
				}
				timer <- now.Add(tc.timer)
				ret = <-got
			} else {
				ret = <-got
				var d time.Duration
				select {
				case d = <-asked:
				default:
				}
				if d != tc.timer {
					t.Errorf("asked for a timer of %v, want %v", d, tc.timer)
				}
			}
			if ret != tc.want {
				t.Fatalf("wait = %v, want %v", ret, tc.want)
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
