package profile

import (
	"testing"
	"time"
)

// TestIdleFrom: a timeline is idle from a time when nothing is predicted
// from it on, and a profile scored there scores bit for bit as on an empty
// timeline of the same capacities, the equality the allocator's per-shape
// memo of idle scores relies on.
func TestIdleFrom(t *testing.T) {
	p := &Profile{Stages: []Stage{
		{Start: 0, End: 10 * sec, DiskBW: 50, NetBW: 7},
		{Start: 10 * sec, End: 30 * sec, DiskBW: 120, NetBW: 90},
	}}
	q := &Profile{Stages: []Stage{{Start: 2 * sec, End: 40 * sec, DiskBW: 33.3, NetBW: 12.5}}}
	tests := []struct {
		name  string
		build func(tl *Timeline)
		from  int
		idle  bool
	}{
		{"empty", func(*Timeline) {}, 0, true},
		{"added then removed", func(tl *Timeline) { mustAdd(t, tl, "a", at(0), p); tl.Remove("a") }, 0, true},
		{"running at from", func(tl *Timeline) { mustAdd(t, tl, "a", at(0), p) }, 5, false},
		{"predicted after from", func(tl *Timeline) { mustAdd(t, tl, "a", at(100), p) }, 5, false},
		{"ends exactly at from", func(tl *Timeline) { mustAdd(t, tl, "a", at(0), p) }, 30, true},
		{"ended before from", func(tl *Timeline) { mustAdd(t, tl, "a", at(0), p) }, 31, true},
		{"one ended, one running", func(tl *Timeline) {
			mustAdd(t, tl, "a", at(0), p)
			mustAdd(t, tl, "b", at(20), q)
		}, 31, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTL(t, 330, 125)
			tc.build(tl)
			if got := tl.IdleFrom(at(tc.from)); got != tc.idle {
				t.Fatalf("IdleFrom(%d) = %v, want %v", tc.from, got, tc.idle)
			}
			if !tc.idle {
				return
			}
			empty := newTL(t, 330, 125)
			if tl.Capacities() != empty.Capacities() {
				t.Fatalf("capacities %v, want %v", tl.Capacities(), empty.Capacities())
			}
			for _, o := range []Options{PaperOptions, {Eta: 0.5, Normalize: NormCapacity}} {
				for _, pr := range []*Profile{p, q} {
					got := tl.Score(at(tc.from), pr, o)
					want := empty.Score(at(tc.from).Add(time.Hour), pr, o)
					if got != want {
						t.Errorf("idle score %+v, empty timeline's %+v", got, want)
					}
				}
			}
		})
	}
}
