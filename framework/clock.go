package framework

import "time"

// Clock is the driver's source of time: when tasks were queued, how long an
// executor has been idle or a backlog has lasted, stage and job times, and
// the ticks of the job and scaling loops, and the event log's times. The
// driver reads no other clock for a decision (the one exception is the
// Mesos backend's limit on how long subscribing may take, a real-world
// startup timeout); a test or a simulator injects its own Clock through
// Config.Clock. Executors measure with the wall clock: their samples and
// task metrics are measurements of real use, not decisions.
type Clock interface {
	Now() time.Time
	NewTicker(d time.Duration) Ticker
}

// Ticker delivers ticks on C until stopped, like time.Ticker.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// RealClock is the wall clock (the default).
type RealClock struct{}

var _ Clock = RealClock{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// NewTicker implements Clock.
func (RealClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// unixSeconds is the event log's time format.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
