package profile

import (
	"fmt"
	"iter"
	"math"
	"time"
)

// scale is the fixed point of bandwidths inside a Timeline: thousandths of
// a MB/s, the same three decimals as resources.Quantity, so a capacity that
// came from a Quantity converts back exactly.
const scale = 1000

// quantize converts MB/s to thousandths. Callers pass validated values.
func quantize(v float64) int64 { return int64(math.Round(v * scale)) }

// point starts a segment of a server's timeline: from at (Unix nanoseconds)
// until the next point, the running executors' peaks sum to used.
type point struct {
	at   int64
	used [NumResources]int64
	// free caches max(capacity - used, 0) as float64 thousandths, the value
	// Score compares against, so the inner loop does no conversions. It is
	// exact: the integers are far below 2^53.
	free [NumResources]float64
}

// qstage is a validated Stage in the timeline's integer units.
type qstage struct {
	start, end int64 // offsets from launch, ns
	peak       [NumResources]int64
}

// running is one executor on the server, anchored at launch.
type running struct {
	key    string
	launch int64
	stages []qstage // a Prepared's, shared: read, never written
}

// Timeline is one server's predicted availability of disk_bw and net_bw:
// capacity minus the sum of the stage peaks of the executors running on it,
// each profile anchored at its executor's launch (the paper's Fig. 4). It is
// piecewise constant, kept as a sorted slice of breakpoints in canonical form
// (a breakpoint only where the summed demand changes), so adding and then
// removing an executor restores the slice exactly, and scoring is one merge
// of two sorted sequences that allocates nothing.
//
// Availability may be negative: if the running executors' peaks already sum
// above capacity (a policy blind to bandwidth placed them, or predictions
// were low), At and Segments report capacity minus demand as it is, since
// how far a server is over-committed is worth seeing. Scoring clamps it at
// zero (see Score).
//
// After the last predicted stage of every running executor, the server is
// predicted idle: an executor that outlives its prediction is assumed to use
// nothing, which is why Reanchor exists.
//
// A Timeline is not safe for concurrent use while it changes; its owner (the
// allocator, or a framework's placement) serialises Add, Remove, Reanchor
// and SetCapacity. Score, At and Segments only read, so a cycle may score
// many servers in parallel between changes.
type Timeline struct {
	cap [NumResources]int64
	// pts is strictly increasing in at; demand is zero before pts[0], and
	// the last point always has zero demand (every stage ends).
	pts   []point
	execs []running
}

// NewTimeline returns an empty timeline of a server with the given
// capacities (MB/s). A zero capacity means the server advertises none of
// that bandwidth.
func NewTimeline(diskBW, netBW float64) (*Timeline, error) {
	t := &Timeline{}
	if err := t.SetCapacity(diskBW, netBW); err != nil {
		return nil, err
	}
	return t, nil
}

// SetCapacity changes the server's capacities (an agent re-registered with
// different resources); the running executors stay.
func (t *Timeline) SetCapacity(diskBW, netBW float64) error {
	c := [NumResources]float64{diskBW, netBW}
	for r := Resource(0); r < NumResources; r++ {
		if err := checkAmount("capacity."+r.String(), c[r], MaxBandwidth, true); err != nil {
			return err
		}
		t.cap[r] = quantize(c[r])
	}
	t.refresh()
	return nil
}

// Capacity returns the server's capacity of r (MB/s).
func (t *Timeline) Capacity(r Resource) float64 { return float64(t.cap[r]) / scale }

// Len returns the number of running executors.
func (t *Timeline) Len() int { return len(t.execs) }

// Breakpoints returns the number of breakpoints (for tests and metrics).
func (t *Timeline) Breakpoints() int { return len(t.pts) }

// Add anchors executor key's profile at launch. The key is the caller's
// (framework/executor id); adding a key twice is an error, as is an invalid
// profile. Add copies the profile, so the caller may reuse it.
func (t *Timeline) Add(key string, launch time.Time, p *Profile) error {
	q, err := Prepare(p)
	if err != nil {
		return err
	}
	return t.AddPrepared(key, launch, q)
}

// Prepared is a profile validated and converted to a timeline's integer
// units once, for every executor that follows it: an application's E
// executors, on as many timelines. It is immutable — no Timeline method
// writes a running executor's stages (Reanchor moves its launch, Remove
// drops the executor) — so timelines share it rather than copy it.
type Prepared struct {
	stages []qstage
}

// Prepare validates p and converts it; the result does not alias p.
func Prepare(p *Profile) (*Prepared, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := &Prepared{stages: make([]qstage, len(p.Stages))}
	for k, s := range p.Stages {
		q.stages[k] = qstage{
			start: int64(s.Start), end: int64(s.End),
			peak: [NumResources]int64{quantize(s.DiskBW), quantize(s.NetBW)},
		}
	}
	return q, nil
}

// AddPrepared is Add for a profile already prepared: the timeline keeps q
// itself, not a copy.
func (t *Timeline) AddPrepared(key string, launch time.Time, q *Prepared) error {
	if t.find(key) >= 0 {
		return fmt.Errorf("executor %q is already on this timeline", key)
	}
	e := running{key: key, launch: launch.UnixNano(), stages: q.stages}
	t.execs = append(t.execs, e)
	t.apply(&e, 1)
	return nil
}

// Remove takes executor key off the timeline; it reports whether the key
// was there.
func (t *Timeline) Remove(key string) bool {
	i := t.find(key)
	if i < 0 {
		return false
	}
	t.apply(&t.execs[i], -1)
	t.execs = append(t.execs[:i], t.execs[i+1:]...)
	return true
}

// Reanchor moves executor key's whole profile so that its stage k starts at
// started: when a running executor is observed to enter a stage early or
// late, the rest of its prediction shifts with it (beyond the paper, which
// anchors once at launch).
func (t *Timeline) Reanchor(key string, k int, started time.Time) error {
	i := t.find(key)
	if i < 0 {
		return fmt.Errorf("executor %q is not on this timeline", key)
	}
	e := &t.execs[i]
	if k < 0 || k >= len(e.stages) {
		return fmt.Errorf("executor %q has %d stages, no stage %d", key, len(e.stages), k)
	}
	t.apply(e, -1)
	e.launch = started.UnixNano() - e.stages[k].start
	t.apply(e, 1)
	return nil
}

func (t *Timeline) find(key string) int {
	for i := range t.execs {
		if t.execs[i].key == key {
			return i
		}
	}
	return -1
}

// apply adds (sign 1) or subtracts (sign -1) e's stage peaks, then drops
// the breakpoints that no longer change anything.
func (t *Timeline) apply(e *running, sign int64) {
	for _, s := range e.stages {
		i := t.ensure(e.launch + s.start)
		j := t.ensure(e.launch + s.end)
		for x := i; x < j; x++ {
			for r := range t.pts[x].used {
				t.pts[x].used[r] += sign * s.peak[r]
			}
		}
	}
	t.coalesce()
	t.refresh()
}

// ensure returns the index of the breakpoint at time at, inserting one that
// continues the segment it splits.
func (t *Timeline) ensure(at int64) int {
	i := t.upper(at)
	if i > 0 && t.pts[i-1].at == at {
		return i - 1
	}
	var p point
	p.at = at
	if i > 0 {
		p.used = t.pts[i-1].used
	}
	t.pts = append(t.pts, point{})
	copy(t.pts[i+1:], t.pts[i:])
	t.pts[i] = p
	return i
}

// coalesce restores the canonical form: no breakpoint whose demand equals
// the one before it (zero before the first).
func (t *Timeline) coalesce() {
	var prev [NumResources]int64
	n := 0
	for _, p := range t.pts {
		if p.used == prev {
			continue
		}
		prev = p.used
		t.pts[n] = p
		n++
	}
	t.pts = t.pts[:n]
}

// refresh recomputes every point's free from its used and the capacity.
func (t *Timeline) refresh() {
	for i := range t.pts {
		p := &t.pts[i]
		for r := range p.used {
			p.free[r] = float64(max(t.cap[r]-p.used[r], 0))
		}
	}
}

// upper returns the number of breakpoints at or before at, so the segment
// holding at starts at pts[upper-1] (or is the idle time before pts[0]).
// Hand-written rather than sort.Search so that scoring allocates nothing.
func (t *Timeline) upper(at int64) int {
	lo, hi := 0, len(t.pts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.pts[m].at <= at {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// usedBefore returns the summed demand of the segment that breakpoint i
// ends (zero before the first breakpoint).
func (t *Timeline) usedBefore(i int) [NumResources]int64 {
	if i == 0 {
		return [NumResources]int64{}
	}
	return t.pts[i-1].used
}

// At returns the predicted availability of r at time at (MB/s, negative
// when the running peaks exceed capacity).
func (t *Timeline) At(at time.Time, r Resource) float64 {
	u := t.usedBefore(t.upper(at.UnixNano()))
	return float64(t.cap[r]-u[r]) / scale
}

// Segment is a stretch of constant predicted availability [Start, End).
type Segment struct {
	Start, End    time.Time
	DiskBW, NetBW float64 // capacity minus running peaks, MB/s; may be negative
}

// Avail returns the segment's availability of r.
func (s Segment) Avail(r Resource) float64 {
	if r == Disk {
		return s.DiskBW
	}
	return s.NetBW
}

// Segments yields the availability from from to horizon, split where it
// changes; the first and last segments are cut at from and horizon.
func (t *Timeline) Segments(from, horizon time.Time) iter.Seq[Segment] {
	return func(yield func(Segment) bool) {
		lo, hi := from.UnixNano(), horizon.UnixNano()
		for i := t.upper(lo); lo < hi; i++ {
			end := hi
			if i < len(t.pts) && t.pts[i].at < hi {
				end = t.pts[i].at
			}
			u := t.usedBefore(i)
			seg := Segment{
				Start:  time.Unix(0, lo),
				End:    time.Unix(0, end),
				DiskBW: float64(t.cap[Disk]-u[Disk]) / scale,
				NetBW:  float64(t.cap[Net]-u[Net]) / scale,
			}
			if !yield(seg) {
				return
			}
			lo = end
		}
	}
}
