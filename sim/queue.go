package sim

import "github.com/allot-sched/allot/internal/heapq"

// qItem is a scheduled event. seq breaks ties between simultaneous events
// in the order they were scheduled, which keeps runs deterministic.
type qItem struct {
	t    float64
	seq  uint64
	ref  int32
	ver  uint32
	kind uint8
}

// qVal is what a queue entry carries besides its time and sequence number.
type qVal struct {
	ref  int32
	ver  uint32
	kind uint8
}

// eventQueue is a min-heap of events by (t, seq) on heapq, whose entries
// are plain values: the replay pushes millions of small items, and the
// interface boxing of container/heap would allocate on every push.
type eventQueue struct {
	h        heapq.Heap[float64, uint64, qVal]
	seq      uint64
	arrivals int // evArrive items queued
}

func (q *eventQueue) push(it qItem) {
	if it.kind == evArrive {
		q.arrivals++
	}
	q.h.Push(heapq.Entry[float64, uint64, qVal]{Key: it.t, Tie: q.seq, Val: qVal{ref: it.ref, ver: it.ver, kind: it.kind}})
	q.seq++
}

// pop removes and returns the earliest event; the queue must not be empty.
func (q *eventQueue) pop() qItem {
	e := q.h.Pop()
	if e.Val.kind == evArrive {
		q.arrivals--
	}
	return qItem{t: e.Key, seq: e.Tie, ref: e.Val.ref, ver: e.Val.ver, kind: e.Val.kind}
}

// len is the number of events queued.
func (q *eventQueue) len() int { return q.h.Len() }

// next is the time of the earliest event; the queue must not be empty.
func (q *eventQueue) next() float64 { return q.h.Top().Key }

// hasArrival reports whether a job arrival is still to come.
func (q *eventQueue) hasArrival() bool { return q.arrivals > 0 }
