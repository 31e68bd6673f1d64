package master

import (
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/allot-sched/allot/api"
)

// lockBatcher runs short functions under one lock, many per acquisition,
// instead of each caller taking the lock itself (flat combining).
//
// Why: every OFFERS event brings hundreds of frameworks back at once, each
// with ACCEPT and DECLINE calls, and agents post status updates at the same
// time. With one m.mu.Lock per call, hundreds of goroutines queue on the
// mutex; once a waiter has waited over 1 ms Go's mutex hands the lock
// waiter to waiter, and on a loaded host every handoff waits for the next
// waiter to get a CPU. The master was then idle with the lock "held" by a
// goroutine not yet running, and the allocation loop was one more waiter in
// that queue (docs/scale.md, "500 frameworks"). Here callers push their
// function on a lock-free list and wait; one goroutine at a time, the
// combiner, takes the lock once and runs everything queued. The mutex then
// sees one waiter for all these calls, not one per call.
//
// The combiner is whichever caller finds no combiner running: it is on a
// CPU already, so no goroutine has to be woken to start the batch. It runs
// at most maxRounds batches before handing the role to a goroutine of its
// own, so that one unlucky caller's answer is not held back for long.
//
// Functions run in the order they were queued, so calls that one client
// makes one after another keep their order. A function must not take the
// lock itself, nor wait for anything that needs the lock or the batcher.
//
// Its zero value is ready; the lock is named on each call (always the same
// one for one batcher).
type lockBatcher struct {
	pending atomic.Pointer[batchedCall] // newest first
	running atomic.Bool                 // a combiner owns the queue
	// batches counts lock acquisitions and calls the calls run; a test
	// reads them to see that calls were combined.
	batches, calls atomic.Int64
	// observe, if set, is told each batch's size (the master's metric).
	observe func(n int)
	// waited, if set, is told how long each call took from being queued
	// to being answered (its wait for the lock and its batch).
	waited func(d time.Duration)
	// panicked, if set, is told of a call that panicked, with its stack.
	panicked func(p any, stack []byte)
}

// batchedCall is one queued function and its answer.
type batchedCall struct {
	fn   func() error
	err  error
	done chan struct{}
	next *batchedCall
}

// maxBatch bounds how many calls one lock acquisition runs, so that the
// allocation loop and the other users of the lock wait for a few
// milliseconds at most; maxRounds bounds the batches one caller runs for
// others before it hands the role on.
const (
	maxBatch  = 256
	maxRounds = 4
)

// do runs fn under the lock, batched with whatever else is queued, and
// returns its error. A panic in fn is returned as a 500 error and reported
// to panicked; the lock is released either way.
func (b *lockBatcher) do(mu sync.Locker, fn func() error) error {
	t0 := time.Now()
	c := &batchedCall{fn: fn, done: make(chan struct{})}
	for {
		old := b.pending.Load()
		c.next = old
		if b.pending.CompareAndSwap(old, c) {
			break
		}
	}
	if b.running.CompareAndSwap(false, true) {
		b.combine(mu, maxRounds)
	}
	<-c.done
	if b.waited != nil {
		b.waited(time.Since(t0))
	}
	return c.err
}

// combine runs queued calls, batch by batch, while it owns the role; after
// rounds batches with work still queued it passes the role to a fresh
// goroutine. Releasing the role re-checks the queue, so a call pushed just
// as the combiner found the queue empty is never stranded: either this
// combiner sees it, or its pusher sees the role free and takes it.
func (b *lockBatcher) combine(mu sync.Locker, rounds int) {
	var queue []*batchedCall
	for {
		if len(queue) == 0 {
			queue = b.take(queue)
		}
		if len(queue) == 0 {
			b.running.Store(false)
			if b.pending.Load() == nil || !b.running.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		if rounds == 0 {
			go b.combineRest(mu, queue)
			return
		}
		rounds--
		n := min(len(queue), maxBatch)
		b.run(mu, queue[:n])
		queue = queue[n:]
	}
}

// combineRest is a combiner goroutine of its own that first runs queue
// (already taken from the list), then whatever else is pushed.
func (b *lockBatcher) combineRest(mu sync.Locker, queue []*batchedCall) {
	for len(queue) > 0 {
		n := min(len(queue), maxBatch)
		b.run(mu, queue[:n])
		queue = queue[n:]
	}
	b.combine(mu, maxRounds)
}

// take moves every pushed call onto queue, oldest first.
func (b *lockBatcher) take(queue []*batchedCall) []*batchedCall {
	head := b.pending.Swap(nil)
	start := len(queue)
	for c := head; c != nil; c = c.next {
		queue = append(queue, c)
	}
	for i, j := start, len(queue)-1; i < j; i, j = i+1, j-1 {
		queue[i], queue[j] = queue[j], queue[i]
	}
	return queue
}

// run runs one batch under the lock, then answers each call (after the
// unlock, so that woken callers do not contend with the batch).
func (b *lockBatcher) run(mu sync.Locker, batch []*batchedCall) {
	mu.Lock()
	for _, c := range batch {
		c.err = b.runGuarded(c.fn)
	}
	mu.Unlock()
	b.batches.Add(1)
	b.calls.Add(int64(len(batch)))
	if b.observe != nil {
		b.observe(len(batch))
	}
	for _, c := range batch {
		c.next = nil
		close(c.done)
	}
}

// runGuarded calls fn and turns a panic into a 500 error: fn runs on the
// combiner's goroutine, where a panic would otherwise kill the master (not
// only its own request, as net/http's recovery did when each handler took
// the lock itself) and leave the lock held.
func (b *lockBatcher) runGuarded(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if b.panicked != nil {
				b.panicked(p, debug.Stack())
			}
			err = api.Errorf(http.StatusInternalServerError, "internal error: %v", p)
		}
	}()
	return fn()
}
