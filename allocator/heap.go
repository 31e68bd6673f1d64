package allocator

// agentHeap is a lazy binary min-heap of agents keyed by (key, agent). An
// entry is current only while its version equals the agent's version; a
// placement bumps the agent's version and pushes a fresh entry, so stale
// entries are skipped rather than searched for. That keeps memory per shape
// proportional to the agents and placements of one cycle, with no position
// index per (shape, agent).
type agentHeap struct {
	e []heapEntry
}

type heapEntry struct {
	key     float64
	agent   int32
	version uint32
}

func (h *agentHeap) lessAt(i, j int) bool {
	a, b := &h.e[i], &h.e[j]
	if a.key != b.key {
		return a.key < b.key
	}
	return a.agent < b.agent
}

func (h *agentHeap) push(x heapEntry) {
	h.e = append(h.e, x)
	i := len(h.e) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.lessAt(i, p) {
			break
		}
		h.e[i], h.e[p] = h.e[p], h.e[i]
		i = p
	}
}

func (h *agentHeap) pop() {
	n := len(h.e) - 1
	h.e[0] = h.e[n]
	h.e = h.e[:n]
	h.down(0)
}

// down sifts entry i toward the leaves until the heap property holds.
func (h *agentHeap) down(i int) {
	n := len(h.e)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.lessAt(r, l) {
			m = r
		}
		if !h.lessAt(m, i) {
			return
		}
		h.e[i], h.e[m] = h.e[m], h.e[i]
		i = m
	}
}

// heapify orders entries appended in bulk.
func (h *agentHeap) heapify() {
	for i := len(h.e)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// top drops stale entries (valid reports false) and returns the best
// current entry, or false when none is left.
func (h *agentHeap) top(valid func(heapEntry) bool) (heapEntry, bool) {
	for len(h.e) > 0 {
		if valid(h.e[0]) {
			return h.e[0], true
		}
		h.pop()
	}
	return heapEntry{}, false
}

// first returns the best entry that is valid and accepted, visiting entries
// best first without disturbing the heap: a best-first walk of the implicit
// tree, so finding the k-th best costs O(k log k). Used when the heap's top
// is filtered for the framework at hand.
func (h *agentHeap) first(valid, accept func(heapEntry) bool) (heapEntry, bool) {
	if len(h.e) == 0 {
		return heapEntry{}, false
	}
	frontier := []int{0}
	for len(frontier) > 0 {
		// pick the best frontier position (the frontier stays small)
		bi := 0
		for i := 1; i < len(frontier); i++ {
			if h.lessAt(frontier[i], frontier[bi]) {
				bi = i
			}
		}
		p := frontier[bi]
		frontier[bi] = frontier[len(frontier)-1]
		frontier = frontier[:len(frontier)-1]
		if e := h.e[p]; valid(e) && accept(e) {
			return e, true
		}
		for c := 2*p + 1; c <= 2*p+2 && c < len(h.e); c++ {
			frontier = append(frontier, c)
		}
	}
	return heapEntry{}, false
}
