package loglevel

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// manualTimer holds the reverts a Control schedules until the test fires
// them.
type manualTimer struct {
	pending []func()
	waits   []time.Duration
}

func (m *manualTimer) after(d time.Duration, f func()) func() {
	i := len(m.pending)
	m.pending = append(m.pending, f)
	m.waits = append(m.waits, d)
	return func() { m.pending[i] = nil }
}

func (m *manualTimer) fire(i int) {
	if f := m.pending[i]; f != nil {
		f()
	}
}

func TestControlSetRevertsAfterDuration(t *testing.T) {
	var applied []zerolog.Level
	tm := &manualTimer{}
	c := New(zerolog.InfoLevel, func(l zerolog.Level) { applied = append(applied, l) }).WithTimer(tm.after)
	steps := []struct {
		name  string
		do    func()
		level uint32
		zl    zerolog.Level
	}{
		{"start", func() {}, 0, zerolog.InfoLevel},
		{"set 1 for 1m", func() { c.Set(1, time.Minute) }, 1, zerolog.DebugLevel},
		{"set 5 for 1h clamps at trace", func() { c.Set(5, time.Hour) }, 5, zerolog.TraceLevel},
		{"the first revert was replaced", func() { tm.fire(0) }, 5, zerolog.TraceLevel},
		{"the second revert fires", func() { tm.fire(1) }, 0, zerolog.InfoLevel},
		{"set 0 schedules nothing", func() { c.Set(0, time.Minute) }, 0, zerolog.InfoLevel},
	}
	for _, s := range steps {
		s.do()
		if got := c.Level(); got != s.level {
			t.Fatalf("%s: level %d, want %d", s.name, got, s.level)
		}
		if got := c.Zerolog(); got != s.zl {
			t.Fatalf("%s: zerolog level %s, want %s", s.name, got, s.zl)
		}
		if got := applied[len(applied)-1]; got != s.zl {
			t.Fatalf("%s: applied %s, want %s", s.name, got, s.zl)
		}
	}
	if len(tm.pending) != 2 || tm.waits[0] != time.Minute || tm.waits[1] != time.Hour {
		t.Fatalf("reverts scheduled: %v, want one after 1m and one after 1h", tm.waits)
	}
}

func TestRecordedChangesNoLogger(t *testing.T) {
	before := zerolog.GlobalLevel()
	c := Recorded()
	c.Set(2, time.Hour)
	if zerolog.GlobalLevel() != before || c.Level() != 2 {
		t.Fatalf("global %s (was %s), level %d", zerolog.GlobalLevel(), before, c.Level())
	}
}
