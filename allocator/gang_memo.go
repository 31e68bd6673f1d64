package allocator

import (
	"encoding/binary"
	"math"
	"slices"
	"time"

	"github.com/allot-sched/allot/profile"
)

// placedMemo remembers, within one cycle, Prophet scores on the agents
// whose model timeline was idle from the cycle's time (profile.IdleFrom)
// before the cycle placed executors there. Such an agent's scratch
// timeline, from now on, is the sum of the executors placed on it this
// cycle, all anchored at now; Score reads the timeline only from the
// scored profile's first stage (at or after now) on, so a shape scores
// bit for bit alike on every such agent with the same capacities and the
// same multiset of shapes placed (TestPlacedMemoExact). Each placement
// makes every shape's entry for the agents it used stale; without the
// memo every shape rescored each of them, a fifth of a cycle
// that fills an idle cluster (docs/prophet.md, Benchmarks).
//
// A state is one (capacities, sorted multiset of shape indices); agents
// point at states, state 0 meaning "not known yet" and -1 "not
// memoised" (the model timeline was busy at now).
type placedMemo struct {
	byKey  map[string]int32
	states []memoState
	key    []byte
	of     []int32 // per agent position in the cycle's agents
	hits   int     // scores answered from the memo (for tests)
	built  int     // state timelines built, over all cycles (for tests)
}

// memoPlaced switches placedMemo on; a variable so that a test can
// compare decisions with and without it.
var memoPlaced = true

type memoState struct {
	cap    [profile.NumResources]int64
	shapes []int32   // sorted
	score  []float64 // by shape index; NaN: not computed yet
	// parent and added say how the state was first reached (parent plus
	// one executor of shape added; parent 0 for the empty multiset);
	// tl is the state's timeline, built only when a score misses
	// (timeline), so that placing on a memoised agent builds none.
	parent, added int32
	tl            *profile.Timeline
	// next is, by shape index, the state after placing one more executor
	// of that shape (0: not known yet; state 0 is never one). A slice, not
	// a map by (state, shape): placed looks it up on every placement.
	next []int32
}

// reset empties the memo for a cycle over n agents, keeping its storage.
func (m *placedMemo) reset(n int) {
	if m.byKey == nil {
		m.byKey = map[string]int32{}
	}
	clear(m.byKey)
	if m.states == nil {
		m.states = make([]memoState, 1, 64)
	}
	m.states = m.states[:1] // state 0 is the "not known" placeholder
	if cap(m.of) < n {
		m.of = make([]int32, n)
	}
	m.of = m.of[:n]
	clear(m.of)
}

// placed records that shape sh was placed at now on agent i, whose model
// timeline is base.
func (m *placedMemo) placed(i int, base *profile.Timeline, now time.Time, sh int32) {
	cur := m.of[i]
	if cur == 0 {
		if !base.IdleFrom(now) {
			m.of[i] = -1
			return
		}
		cur = m.intern(base.Capacities(), nil, 0, -1)
	}
	if cur < 0 {
		return
	}
	for int(sh) >= len(m.states[cur].next) {
		m.states[cur].next = append(m.states[cur].next, 0)
	}
	nx := m.states[cur].next[sh]
	if nx == 0 {
		shapes := append(slices.Clone(m.states[cur].shapes), sh)
		slices.Sort(shapes)
		nx = m.intern(m.states[cur].cap, shapes, cur, sh)
		m.states[cur].next[sh] = nx // not through a pointer: intern may grow m.states
	}
	m.of[i] = nx
}

// intern returns the state of (c, shapes), making it if new (reached from
// parent by adding one executor of shape added); shapes is sorted and
// owned by the memo from then on.
func (m *placedMemo) intern(c [profile.NumResources]int64, shapes []int32, parent, added int32) int32 {
	m.key = m.key[:0]
	for _, v := range c {
		m.key = binary.LittleEndian.AppendUint64(m.key, uint64(v))
	}
	for _, s := range shapes {
		m.key = binary.LittleEndian.AppendUint32(m.key, uint32(s))
	}
	if id, ok := m.byKey[string(m.key)]; ok {
		return id
	}
	id := int32(len(m.states))
	if len(m.states) < cap(m.states) { // reuse the storage of an earlier cycle's state
		m.states = m.states[:id+1]
		old := &m.states[id]
		*old = memoState{cap: c, shapes: shapes, score: old.score[:0], next: old.next[:0], parent: parent, added: added}
	} else {
		m.states = append(m.states, memoState{cap: c, shapes: shapes, parent: parent, added: added})
	}
	m.byKey[string(m.key)] = id
	return id
}

// lookup returns shape sh's remembered score on agent i's scratch
// timeline and true; or, if there is none, where to remember it (nil if
// agent i is not memoised), valid until the next lookup.
func (m *placedMemo) lookup(i int, sh int32) (float64, bool, *float64) {
	st := m.of[i]
	if st <= 0 {
		return 0, false, nil
	}
	s := &m.states[st]
	for int(sh) >= len(s.score) {
		s.score = append(s.score, math.NaN())
	}
	if v := s.score[sh]; !math.IsNaN(v) {
		m.hits++
		return v, true, nil
	}
	return 0, false, &s.score[sh]
}

// memoised reports whether agent i's scores come from the memo: then its
// executors placed this cycle live in its state, not in a scratch
// timeline of its own.
func (m *placedMemo) memoised(i int) bool { return m.of[i] > 0 }

// timeline is agent i's scratch timeline as the memo knows it: its
// state's, built on first need from the parent state's by adding the one
// executor that leads there (prep gives a shape's prepared profile), the
// empty state's a clone of base, agent i's model timeline. Any agent of
// the state would do: from now on they are alike (placedMemo's doc).
// Only scores that miss the memo need it, so placements on memoised
// agents build no timeline, and each state's is built once a cycle.
func (m *placedMemo) timeline(i int, base *profile.Timeline, now time.Time, prep func(sh int32) *profile.Prepared) *profile.Timeline {
	return m.stateTimeline(m.of[i], base, now, prep)
}

func (m *placedMemo) stateTimeline(st int32, base *profile.Timeline, now time.Time, prep func(sh int32) *profile.Prepared) *profile.Timeline {
	s := &m.states[st]
	if s.tl != nil {
		return s.tl
	}
	var t *profile.Timeline
	if s.added < 0 {
		t = base.Clone()
	} else {
		t = m.stateTimeline(s.parent, base, now, prep).Clone()
		m.built++
		_ = t.AddPrepared(cycleKey(t.Len()), now, prep(s.added))
	}
	m.states[st].tl = t // not s: the recursion above cannot grow m.states, but this reads plainly
	return t
}
