package dispatch

import (
	"testing"
	"time"
)

var t0 = time.Unix(1_800_000_000, 0)

func TestLocalityWait(t *testing.T) {
	d := LocalityWait{Wait: 500 * time.Millisecond}
	free := []Slot{{Exec: "a", Cores: 2, Running: 0}, {Exec: "b", Cores: 2, Running: 1}, {Exec: "c", Cores: 1, Running: 1}}
	full := []Slot{{Exec: "a", Cores: 1, Running: 1}, {Exec: "b", Cores: 2, Running: 2}}
	cases := []struct {
		name   string
		waited time.Duration
		pref   string
		slots  []Slot
		want   int
	}{
		{"no preference: first free", 0, "", free, 0},
		{"preferred executor free: it", 0, "b", free, 1},
		{"preferred executor busy, within the wait: wait", 499 * time.Millisecond, "c", free, -1},
		{"preferred executor busy, wait over: first free", 500 * time.Millisecond, "c", free, 0},
		{"preferred executor gone: first free at once", 0, "gone", free, 0},
		{"nothing free: wait", time.Hour, "", full, -1},
		{"nothing free, preference over: wait", time.Hour, "a", full, -1},
		{"no executors: wait", 0, "", nil, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			task := Task{ID: 1, QueuedAt: t0, Preferred: tc.pref}
			if got := d.Choose(t0.Add(tc.waited), task, tc.slots); got != tc.want {
				t.Fatalf("chose %d, want %d", got, tc.want)
			}
		})
	}
}

func TestOrder(t *testing.T) {
	s := []Slot{{Exec: "c", Running: 1}, {Exec: "b", Running: 0}, {Exec: "a", Running: 1}, {Exec: "d", Running: 0}}
	Order(s)
	got := ""
	for _, x := range s {
		got += x.Exec
	}
	if got != "bdac" {
		t.Fatalf("order %s, want bdac (least loaded, then id)", got)
	}
}

// avoidHost is the shape of a backoff: veto some executors, defer to the
// wrapped dispatcher for the rest.
type avoidHost struct {
	inner Dispatcher
	host  string
}

func (a avoidHost) Choose(now time.Time, t Task, slots []Slot) int {
	allowed := make([]Slot, 0, len(slots))
	idx := make([]int, 0, len(slots))
	for i, s := range slots {
		if s.Host != a.host {
			allowed = append(allowed, s)
			idx = append(idx, i)
		}
	}
	if i := a.inner.Choose(now, t, allowed); i >= 0 {
		return idx[i]
	}
	return -1
}

func TestWrapping(t *testing.T) {
	d := avoidHost{inner: LocalityWait{Wait: time.Second}, host: "busy-disk"}
	slots := []Slot{{Exec: "a", Host: "busy-disk", Cores: 1}, {Exec: "b", Host: "ok", Cores: 1}}
	if got := d.Choose(t0, Task{QueuedAt: t0}, slots); got != 1 {
		t.Fatalf("wrapped dispatcher chose %d, want 1 (host a is backed off)", got)
	}
	if got := d.Choose(t0, Task{QueuedAt: t0, Preferred: "a"}, slots); got != 1 {
		t.Fatalf("preference for a backed-off executor: chose %d, want 1", got)
	}
}
