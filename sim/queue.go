package sim

// qItem is a scheduled event. seq breaks ties between simultaneous events
// in the order they were scheduled, which keeps runs deterministic.
type qItem struct {
	t    float64
	seq  uint64
	ref  int32
	ver  uint32
	kind uint8
}

// eventQueue is a binary min-heap by (t, seq). A hand-rolled heap rather
// than container/heap: the replay pushes millions of small items, and the
// interface boxing of container/heap would allocate on every push.
type eventQueue struct {
	items    []qItem
	seq      uint64
	arrivals int // evArrive items queued
}

func (q *eventQueue) less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

func (q *eventQueue) push(it qItem) {
	it.seq = q.seq
	q.seq++
	if it.kind == evArrive {
		q.arrivals++
	}
	q.items = append(q.items, it)
	i := len(q.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

func (q *eventQueue) pop() qItem {
	top := q.items[0]
	n := len(q.items) - 1
	q.items[0] = q.items[n]
	q.items = q.items[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			break
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
	if top.kind == evArrive {
		q.arrivals--
	}
	return top
}

// hasArrival reports whether a job arrival is still to come.
func (q *eventQueue) hasArrival() bool { return q.arrivals > 0 }
