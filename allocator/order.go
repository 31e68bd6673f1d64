package allocator

import "sort"

// orderedSet keeps framework indices sorted by (key, index). Keys live with
// the caller (keyOf reads the current stored key), so a key must be updated
// through update, never behind the set's back, or binary search breaks.
type orderedSet struct {
	items []int32
	keyOf func(int32) float64
}

func (s *orderedSet) less(ka float64, a int32, kb float64, b int32) bool {
	if ka != kb {
		return ka < kb
	}
	return a < b
}

// search returns the position where (k, n) is or would be.
func (s *orderedSet) search(k float64, n int32) int {
	return sort.Search(len(s.items), func(i int) bool {
		m := s.items[i]
		return !s.less(s.keyOf(m), m, k, n)
	})
}

// searchOld is search while n's stored key has already changed: n is seen
// at oldKey, where it still sits in the slice.
func (s *orderedSet) searchOld(k float64, n int32, oldKey float64) int {
	return sort.Search(len(s.items), func(i int) bool {
		m := s.items[i]
		km := oldKey
		if m != n {
			km = s.keyOf(m)
		}
		return !s.less(km, m, k, n)
	})
}

// insert adds n with its current key.
func (s *orderedSet) insert(n int32) {
	p := s.search(s.keyOf(n), n)
	s.items = append(s.items, 0)
	copy(s.items[p+1:], s.items[p:])
	s.items[p] = n
}

// remove deletes n, which must be present with its current key.
func (s *orderedSet) remove(n int32) {
	p := s.search(s.keyOf(n), n)
	if p >= len(s.items) || s.items[p] != n {
		// keys changed without a re-sort (cluster totals moved): find it
		// the slow way; the next cycle re-sorts.
		s.removeAt(n)
		return
	}
	s.items = append(s.items[:p], s.items[p+1:]...)
}

// removeAt deletes n wherever it is, by linear search.
func (s *orderedSet) removeAt(n int32) {
	for i, m := range s.items {
		if m == n {
			s.items = append(s.items[:i], s.items[i+1:]...)
			return
		}
	}
}

// move repositions n from oldKey to its current key by shifting the items in
// between: one memmove instead of a delete and an insert.
func (s *orderedSet) move(n int32, oldKey float64) {
	from := s.searchOld(oldKey, n, oldKey)
	if from >= len(s.items) || s.items[from] != n {
		// not where its old key says: take the slow, always-correct path
		s.removeAt(n)
		s.insert(n)
		return
	}
	k := s.keyOf(n)
	to := s.searchOld(k, n, oldKey)
	switch {
	case to > from+1:
		copy(s.items[from:to-1], s.items[from+1:to])
		s.items[to-1] = n
	case to < from:
		copy(s.items[to+1:from+1], s.items[to:from])
		s.items[to] = n
	}
}

// rebuild sorts the set from scratch (after every key changed at once).
func (s *orderedSet) rebuild() {
	sort.Slice(s.items, func(i, j int) bool {
		a, b := s.items[i], s.items[j]
		return s.less(s.keyOf(a), a, s.keyOf(b), b)
	})
}
