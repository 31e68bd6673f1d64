package loglevel

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Control is a process's verbosity: its level, and the revert pending
// after a SET_LOGGING_LEVEL.
type Control struct {
	base  zerolog.Level
	apply func(zerolog.Level)
	// after runs f once d has passed and returns a function that cancels
	// it; time.AfterFunc unless a test injects its own.
	after func(d time.Duration, f func()) (cancel func())

	mu     sync.Mutex
	level  uint32
	gen    uint64 // counts Sets: a revert of an earlier Set does nothing
	cancel func()
}

// New is a control whose level 0 is base, applied through apply (nil:
// recorded only). It applies base at once.
func New(base zerolog.Level, apply func(zerolog.Level)) *Control {
	c := &Control{base: base, apply: apply, after: afterFunc}
	c.applyLocked()
	return c
}

// Global is the control of a process whose loggers are built at
// zerolog.TraceLevel: it sets zerolog's global level, base at level 0.
func Global(base zerolog.Level) *Control {
	return New(base, zerolog.SetGlobalLevel)
}

// Recorded is the control of an embedded master or agent: it keeps the
// level for GET_LOGGING_LEVEL and changes no logger.
func Recorded() *Control { return New(zerolog.InfoLevel, nil) }

func afterFunc(d time.Duration, f func()) func() {
	t := time.AfterFunc(d, f)
	return func() { t.Stop() }
}

// WithTimer replaces the timer that reverts a level (tests drive it by
// hand); it returns c.
func (c *Control) WithTimer(after func(d time.Duration, f func()) (cancel func())) *Control {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.after = after
	return c
}

// Level is the current verbosity (0: as started).
func (c *Control) Level() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.level
}

// Zerolog is the zerolog level the current verbosity stands for.
func (c *Control) Zerolog() zerolog.Level {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.zerologLocked()
}

// zerologLocked is base made level steps more verbose, down to Trace.
func (c *Control) zerologLocked() zerolog.Level {
	l := int(c.base) - int(min(c.level, 16))
	if l < int(zerolog.TraceLevel) {
		l = int(zerolog.TraceLevel)
	}
	return zerolog.Level(l)
}

func (c *Control) applyLocked() {
	if c.apply != nil {
		c.apply(c.zerologLocked())
	}
}

// Set makes level the verbosity for d, then reverts to 0, as Mesos's
// SET_LOGGING_LEVEL: a set to 0 stays, and a new Set cancels the revert
// of the previous one.
func (c *Control) Set(level uint32, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
	c.gen++
	c.level = level
	c.applyLocked()
	if level == 0 {
		return
	}
	gen := c.gen
	c.cancel = c.after(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.gen != gen {
			return
		}
		c.level, c.cancel = 0, nil
		c.applyLocked()
	})
}
