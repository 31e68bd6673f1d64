// Package heapq is the one binary min-heap of allot: the allocator's
// per-shape agent heaps and the simulator's event queue both use it.
//
// Entries are ordered by (Key, Tie), lowest first, and carry a Val that is
// never compared. The order is fixed rather than given as a less function
// or a Less method on purpose: both would be an indirect call per
// comparison in Go's generic code (methods of a type parameter are called
// through its dictionary), and the allocator compares entries millions of
// times per cycle. With the key and the tie-break as ordered type
// parameters the comparison compiles to plain machine compares for each
// instantiation.
//
// Besides push and pop the heap offers what lazy heaps need: bulk loading
// (Append then Init), reading the top without removing it, and First, a
// best-first walk that finds the best entry a predicate accepts without
// disturbing the heap.
//
// A Heap is a value with no internal pointers besides its slice; the zero
// value is an empty heap ready to use. It is not safe for concurrent use.
package heapq
