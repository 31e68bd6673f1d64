package profile

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * sec) }

func newTL(t testing.TB, disk, net float64) *Timeline {
	t.Helper()
	tl, err := NewTimeline(disk, net)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func mustAdd(t testing.TB, tl *Timeline, key string, launch time.Time, p *Profile) {
	t.Helper()
	if err := tl.Add(key, launch, p); err != nil {
		t.Fatal(err)
	}
}

type seg struct {
	from, to  int
	disk, net float64
}

func segs(tl *Timeline, from, to int) []seg {
	var out []seg
	for s := range tl.Segments(at(from), at(to)) {
		out = append(out, seg{int(s.Start.Sub(t0) / sec), int(s.End.Sub(t0) / sec), s.DiskBW, s.NetBW})
	}
	return out
}

// TestTimelineFig4 rebuilds the shape of the paper's Fig. 4: two executors
// of two stages each leave several availability stages, one of them over
// capacity.
func TestTimelineFig4(t *testing.T) {
	tl := newTL(t, 300, 100)
	mustAdd(t, tl, "a", at(0), prof(st(0, 20, 100, 10), st(20, 50, 200, 0)))
	mustAdd(t, tl, "b", at(10), prof(st(0, 30, 50, 0), st(30, 60, 150, 40)))
	want := []seg{
		{-5, 0, 300, 100},
		{0, 10, 200, 90},
		{10, 20, 150, 90},
		{20, 40, 50, 100},
		{40, 50, -50, 60},
		{50, 70, 150, 60},
		{70, 80, 300, 100},
	}
	if got := segs(tl, -5, 80); !slices.Equal(got, want) {
		t.Errorf("segments\n got %v\nwant %v", got, want)
	}
	if got := tl.At(at(45), Disk); got != -50 {
		t.Errorf("At(45s, disk) = %v, want -50 (availability is signed)", got)
	}
	if got := tl.At(at(70), Net); got != 100 {
		t.Errorf("At(70s, net) = %v, want 100 (b ended)", got)
	}
	// A window inside one segment is one segment, cut at both ends.
	if got := segs(tl, 22, 30); !slices.Equal(got, []seg{{22, 30, 50, 100}}) {
		t.Errorf("inner window: %v", got)
	}
	if got := segs(tl, 30, 30); len(got) != 0 {
		t.Errorf("empty window: %v", got)
	}
	// Stopping early stops.
	n := 0
	for range tl.Segments(at(0), at(80)) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("break did not stop the iteration")
	}
}

func TestTimelineAddRemove(t *testing.T) {
	tl := newTL(t, 100, 100)
	p := prof(st(0, 10, 30, 30), st(10, 20, 60, 0))
	mustAdd(t, tl, "a", at(0), p)
	if err := tl.Add("a", at(5), p); err == nil {
		t.Error("adding a key twice succeeded")
	}
	if err := tl.Add("bad", at(5), prof(st(10, 5, 1, 1))); err == nil {
		t.Error("adding an invalid profile succeeded")
	}
	p.Stages[0].DiskBW = 99 // Add copied the profile
	if got := tl.At(at(5), Disk); got != 70 {
		t.Errorf("At = %v after the caller changed its profile, want 70", got)
	}
	if tl.Len() != 1 || tl.Breakpoints() != 3 {
		t.Errorf("Len %d, breakpoints %d, want 1 and 3", tl.Len(), tl.Breakpoints())
	}
	// Stage boundaries that coincide with another executor's are one
	// breakpoint, thanks to integer time.
	mustAdd(t, tl, "b", at(10), prof(st(0, 10, 10, 10)))
	if tl.Breakpoints() != 3 {
		t.Errorf("breakpoints = %d, want 3: b's boundaries coincide with a's", tl.Breakpoints())
	}
	if tl.Remove("zz") {
		t.Error("removed an unknown key")
	}
	if !tl.Remove("a") || !tl.Remove("b") {
		t.Fatal("remove failed")
	}
	if tl.Len() != 0 || tl.Breakpoints() != 0 {
		t.Errorf("after removing all: len %d, breakpoints %d", tl.Len(), tl.Breakpoints())
	}
}

func TestTimelineReanchor(t *testing.T) {
	tl := newTL(t, 100, 100)
	mustAdd(t, tl, "a", at(0), prof(st(0, 10, 20, 0), st(10, 30, 50, 0)))
	// Stage 1 was observed to start at 15 s, 5 s late: everything shifts.
	if err := tl.Reanchor("a", 1, at(15)); err != nil {
		t.Fatal(err)
	}
	want := []seg{{0, 5, 100, 100}, {5, 15, 80, 100}, {15, 35, 50, 100}, {35, 40, 100, 100}}
	if got := segs(tl, 0, 40); !slices.Equal(got, want) {
		t.Errorf("after reanchor\n got %v\nwant %v", got, want)
	}
	if err := tl.Reanchor("a", 2, at(0)); err == nil {
		t.Error("reanchor on a stage that does not exist succeeded")
	}
	if err := tl.Reanchor("zz", 0, at(0)); err == nil {
		t.Error("reanchor of an unknown executor succeeded")
	}
}

func TestNewTimelineRejectsBadCapacity(t *testing.T) {
	for _, c := range [][2]float64{{-1, 0}, {0, -1}, {2e6, 0}} {
		if _, err := NewTimeline(c[0], c[1]); err == nil {
			t.Errorf("NewTimeline(%v) succeeded", c)
		}
	}
	tl := newTL(t, 0.001, 125)
	if tl.Capacity(Disk) != 0.001 || tl.Capacity(Net) != 125 {
		t.Errorf("capacity %v %v", tl.Capacity(Disk), tl.Capacity(Net))
	}
}

// randProfile draws a valid profile on a whole-second grid, so boundaries
// of different executors often coincide.
func randProfile(rng *rand.Rand, maxStages int) *Profile {
	n := 1 + rng.IntN(maxStages)
	p := &Profile{}
	off := rng.IntN(5)
	for range n {
		d := 1 + rng.IntN(30)
		p.Stages = append(p.Stages, st(off, off+d, float64(rng.IntN(200000))/1000, float64(rng.IntN(100))))
		off += d
		if rng.IntN(4) == 0 {
			off += rng.IntN(10) // a gap
		}
	}
	return p
}

func randTimeline(t testing.TB, rng *rand.Rand, execs int) *Timeline {
	tl := newTL(t, float64(50+rng.IntN(300)), float64(rng.IntN(150)))
	for i := range execs {
		mustAdd(t, tl, fmt.Sprint("e", i), at(rng.IntN(200)-100), randProfile(rng, 6))
	}
	return tl
}

// probeTimes are every breakpoint of a and b and the midpoints between
// consecutive ones, plus a time before and after all of them.
func probeTimes(a, b *Timeline) []int64 {
	var ts []int64
	for _, tl := range []*Timeline{a, b} {
		for _, p := range tl.pts {
			ts = append(ts, p.at)
		}
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	out := []int64{at(-1000).UnixNano(), at(1000).UnixNano()}
	for i, x := range ts {
		out = append(out, x)
		if i+1 < len(ts) {
			out = append(out, x+(ts[i+1]-x)/2)
		}
	}
	return out
}

// Adding a running executor never increases availability anywhere, and
// removing it restores the timeline exactly.
func TestPropertyAddNeverIncreasesAvailability(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		tl := randTimeline(t, rng, rng.IntN(8))
		before := tl.clone()
		mustAdd(t, tl, "new", at(rng.IntN(200)-100), randProfile(rng, 6))
		for _, x := range probeTimes(before, tl) {
			for r := Resource(0); r < NumResources; r++ {
				was, now := before.At(time.Unix(0, x), r), tl.At(time.Unix(0, x), r)
				if now > was {
					t.Fatalf("iter %d: %v at %v rose from %v to %v", iter, r, time.Unix(0, x).Sub(t0), was, now)
				}
			}
		}
		tl.Remove("new")
		if !slices.Equal(tl.pts, before.pts) {
			t.Fatalf("iter %d: remove did not restore the breakpoints\n got %v\nwant %v", iter, tl.pts, before.pts)
		}
	}
}

func (t *Timeline) clone() *Timeline {
	c := *t
	c.pts = slices.Clone(t.pts)
	c.execs = slices.Clone(t.execs)
	return &c
}

// The breakpoints stay canonical (strictly increasing, a change at each,
// zero demand at the end) through any sequence of adds and removes.
func TestPropertyCanonical(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tl := newTL(t, 100, 100)
	live := map[string]bool{}
	for i := range 2000 {
		key := fmt.Sprint("e", rng.IntN(12))
		if live[key] {
			tl.Remove(key)
			delete(live, key)
		} else {
			mustAdd(t, tl, key, at(rng.IntN(100)), randProfile(rng, 5))
			live[key] = true
		}
		var prev [NumResources]int64
		for j, p := range tl.pts {
			if j > 0 && p.at <= tl.pts[j-1].at {
				t.Fatalf("step %d: breakpoints not increasing", i)
			}
			if p.used == prev {
				t.Fatalf("step %d: breakpoint %d changes nothing", i, j)
			}
			for r := range p.used {
				if p.used[r] < 0 {
					t.Fatalf("step %d: negative demand", i)
				}
			}
			prev = p.used
		}
		if prev != ([NumResources]int64{}) {
			t.Fatalf("step %d: demand does not return to zero", i)
		}
	}
}

func TestCloneIsIndependent(t *testing.T) {
	tl, _ := NewTimeline(100, 100)
	p := &Profile{Stages: []Stage{{End: time.Minute, DiskBW: 40, NetBW: 10}}}
	at := time.Unix(100, 0)
	if err := tl.Add("a", at, p); err != nil {
		t.Fatal(err)
	}
	c := tl.Clone()
	if err := c.Add("b", at, p); err != nil {
		t.Fatal(err)
	}
	if err := c.Reanchor("a", 0, at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := tl.At(at.Add(time.Second), Disk); got != 60 || tl.Len() != 1 {
		t.Errorf("original changed: disk %v, %d executors", got, tl.Len())
	}
	if got := c.At(at.Add(time.Second), Disk); got != 60 || c.Len() != 2 {
		t.Errorf("clone: disk %v (b only, a moved), %d executors", got, c.Len())
	}
	tl.Remove("a")
	if c.Len() != 2 {
		t.Error("removing from the original changed the clone")
	}
}

// TestPreparedShared: timelines that share one Prepared behave as if each
// had added its own copy, whatever another of them does (Reanchor, Remove,
// Clone), and the Prepared itself never changes: the allocator shares an
// application's preparation among all its executors on that promise.
func TestPreparedShared(t *testing.T) {
	p := &Profile{Stages: []Stage{
		{Start: 0, End: 10 * sec, DiskBW: 50, NetBW: 7},
		{Start: 10 * sec, End: 30 * sec, DiskBW: 120.5, NetBW: 90},
	}}
	q, err := Prepare(p)
	if err != nil {
		t.Fatal(err)
	}
	p.Stages[0].DiskBW = 300 // Prepare does not alias p
	own := &Profile{Stages: []Stage{p.Stages[0], p.Stages[1]}}
	own.Stages[0].DiskBW = 50
	before := append([]qstage(nil), q.stages...)

	shared, other, copied := newTL(t, 330, 125), newTL(t, 330, 125), newTL(t, 330, 125)
	for _, tl := range []*Timeline{shared, other} {
		if err := tl.AddPrepared("a", at(0), q); err != nil {
			t.Fatal(err)
		}
	}
	mustAdd(t, copied, "a", at(0), own)
	if err := other.AddPrepared("a", at(0), q); err == nil {
		t.Error("a key added twice")
	}
	c := other.Clone()
	if err := other.Reanchor("a", 1, at(40)); err != nil {
		t.Fatal(err)
	}
	_ = c.Reanchor("a", 0, at(5))
	c.Remove("a")
	if !reflect.DeepEqual(q.stages, before) {
		t.Fatalf("prepared stages changed: %v, were %v", q.stages, before)
	}
	if !reflect.DeepEqual(shared.pts, copied.pts) {
		t.Errorf("shared timeline %v, with its own copy %v", shared.pts, copied.pts)
	}
	for s := -1; s < 60; s++ {
		if got, want := shared.Score(at(s), own, PaperOptions), copied.Score(at(s), own, PaperOptions); got != want {
			t.Errorf("score at %d: shared %+v, own copy %+v", s, got, want)
		}
	}
	if _, err := Prepare(&Profile{Stages: []Stage{{Start: 0, End: sec, DiskBW: -1}}}); err == nil {
		t.Error("Prepare accepted a negative peak")
	}
}
