package heapq

import (
	"cmp"
	"slices"
)

// Entry is one heap element: ordered by Key, then by Tie, both lowest
// first; Val rides along.
type Entry[K, T cmp.Ordered, V any] struct {
	Key K
	Tie T
	Val V
}

// Heap is a binary min-heap of entries by (Key, Tie). The zero value is an
// empty heap.
type Heap[K, T cmp.Ordered, V any] struct {
	e []Entry[K, T, V]
}

// less compares the entries at positions i and j. Written out rather than
// with cmp.Compare so that float keys compare as the callers always have
// (NaN is never a key here).
func (h *Heap[K, T, V]) less(i, j int) bool {
	a, b := &h.e[i], &h.e[j]
	if a.Key != b.Key {
		return a.Key < b.Key
	}
	return a.Tie < b.Tie
}

// Len is the number of entries.
func (h *Heap[K, T, V]) Len() int { return len(h.e) }

// Reset empties the heap and keeps its storage for reuse.
func (h *Heap[K, T, V]) Reset() { h.e = h.e[:0] }

// Top is the lowest entry; the heap must not be empty.
func (h *Heap[K, T, V]) Top() Entry[K, T, V] { return h.e[0] }

// Push adds x.
func (h *Heap[K, T, V]) Push(x Entry[K, T, V]) {
	h.e = append(h.e, x)
	h.up(len(h.e) - 1)
}

// Pop removes and returns the lowest entry; the heap must not be empty.
func (h *Heap[K, T, V]) Pop() Entry[K, T, V] {
	top := h.e[0]
	n := len(h.e) - 1
	h.e[0] = h.e[n]
	h.e = h.e[:n]
	h.down(0)
	return top
}

// Append adds x without restoring the heap order: load entries in bulk
// with Append, then call Init once (O(n) rather than O(n log n) pushes).
func (h *Heap[K, T, V]) Append(x Entry[K, T, V]) { h.e = append(h.e, x) }

// Init restores the heap order after Appends.
func (h *Heap[K, T, V]) Init() {
	for i := len(h.e)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *Heap[K, T, V]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.e[i], h.e[p] = h.e[p], h.e[i]
		i = p
	}
}

// down sifts entry i toward the leaves until the heap property holds.
func (h *Heap[K, T, V]) down(i int) {
	n := len(h.e)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.e[i], h.e[m] = h.e[m], h.e[i]
		i = m
	}
}

// First returns the lowest entry that accept accepts, visiting entries in
// order without disturbing the heap: a best-first walk of the implicit
// tree, so finding the k-th lowest costs O(k log k). It is for a top that
// is unacceptable to one caller but must stay for the others.
func (h *Heap[K, T, V]) First(accept func(Entry[K, T, V]) bool) (Entry[K, T, V], bool) {
	if len(h.e) == 0 {
		return Entry[K, T, V]{}, false
	}
	frontier := []int{0}
	for len(frontier) > 0 {
		// pick the lowest frontier position (the frontier stays small)
		bi := 0
		for i := 1; i < len(frontier); i++ {
			if h.less(frontier[i], frontier[bi]) {
				bi = i
			}
		}
		p := frontier[bi]
		frontier[bi] = frontier[len(frontier)-1]
		frontier = frontier[:len(frontier)-1]
		if e := h.e[p]; accept(e) {
			return e, true
		}
		for c := 2*p + 1; c <= 2*p+2 && c < len(h.e); c++ {
			frontier = append(frontier, c)
		}
	}
	return Entry[K, T, V]{}, false
}

// At is the entry at position p (0 <= p < Len), as Least returns it.
func (h *Heap[K, T, V]) At(p int) Entry[K, T, V] { return h.e[p] }

// Set replaces the entry at position p with x and restores the order: the
// same entries as popping it and pushing x, without the pop.
func (h *Heap[K, T, V]) Set(p int, x Entry[K, T, V]) {
	h.e[p] = x
	h.down(p)
	h.up(p)
}

// RemoveAt removes the entry at position p.
func (h *Heap[K, T, V]) RemoveAt(p int) {
	n := len(h.e) - 1
	if p != n {
		h.e[p] = h.e[n]
	}
	h.e = h.e[:n]
	if p < n {
		h.down(p)
		h.up(p)
	}
}

// Least returns the position of the lowest entry whose Tie is not in
// taken (-1 if none), visiting entries best first from the root: the entry
// Pop would return had the taken entries been popped already, found in
// O(len(taken)^2) without moving anything. frontier is scratch storage,
// returned for reuse.
func (h *Heap[K, T, V]) Least(taken []T, frontier []int) (int, []int) {
	frontier = frontier[:0]
	if len(h.e) > 0 {
		frontier = append(frontier, 0)
	}
	for len(frontier) > 0 {
		bi := 0
		for i := 1; i < len(frontier); i++ {
			if h.less(frontier[i], frontier[bi]) {
				bi = i
			}
		}
		p := frontier[bi]
		frontier[bi] = frontier[len(frontier)-1]
		frontier = frontier[:len(frontier)-1]
		if !slices.Contains(taken, h.e[p].Tie) {
			return p, frontier
		}
		for c := 2*p + 1; c <= 2*p+2 && c < len(h.e); c++ {
			frontier = append(frontier, c)
		}
	}
	return -1, frontier
}
