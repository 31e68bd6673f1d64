package agent

import "time"

// Clock is the agent's time and the command executor's: Now stamps status
// updates and times their retries; After paces every wait that is a
// policy rather than a measurement (an executor's shutdown grace, a task's
// kill grace, health-check delays and intervals, the update retry scan,
// reconnection backoff, the master watchdog); AfterFunc runs the executor
// registration timeout. Tests pass a manual one.
//
// What samples real processes and devices (usage reports, the memory and
// disk limit checks, cgroup removal) keeps the wall clock: its figures are
// rates and durations of real work, which a manual clock cannot move.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc; Stop reports whether it stopped the call.
type Timer interface{ Stop() bool }

// wallClock is the real clock, the default.
type wallClock struct{}

func (wallClock) Now() time.Time                            { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time    { return time.After(d) }
func (wallClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// clock is the agent's Clock: Config.Clock, or the wall clock when none
// was given (also for an Agent built without New, as tests do).
func (a *Agent) clock() Clock {
	if a.cfg.Clock == nil {
		return wallClock{}
	}
	return a.cfg.Clock
}
