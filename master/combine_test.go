package master

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/allot-sched/allot/api"
)

// queued counts the calls pushed on b and not yet taken by a combiner.
func (b *lockBatcher) queued() int {
	n := 0
	for c := b.pending.Load(); c != nil; c = c.next {
		n++
	}
	return n
}

// waitQueued waits until n calls are queued on b.
func waitQueued(t *testing.T, b *lockBatcher, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for b.queued() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", b.queued(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitTaken waits until caller i (counting from 0) is queued: the first
// has become the combiner and taken its own call, the later ones wait.
func waitTaken(t *testing.T, b *lockBatcher, i int) {
	t.Helper()
	if i > 0 {
		waitQueued(t, b, i)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for !b.running.Load() || b.queued() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first caller did not become the combiner")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLockBatcherCombines holds the lock while callers queue, as the
// allocation loop does while frameworks answer offers: once it is free,
// the queued calls run in a handful of lock acquisitions, in the order
// they were queued, each answered with its own error.
func TestLockBatcherCombines(t *testing.T) {
	for _, tc := range []struct {
		name        string
		callers     int
		maxBatches  int64 // lock acquisitions at most
		wantBatches int64 // and at least
	}{
		{"one", 1, 1, 1},
		{"a few", 10, 2, 2},                                // the combiner's own call, then the other 9
		{"over a batch", maxBatch + 10, 3, 3},              // 1, then 256, then the rest
		{"past the rounds", maxBatch*maxRounds + 50, 6, 6}, // a second combiner goroutine takes over
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var b lockBatcher
			var order []int
			errs := make([]error, tc.callers)
			var wg sync.WaitGroup
			mu.Lock()
			for i := range tc.callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = b.do(&mu, func() error {
						order = append(order, i) // under mu
						if i%3 == 0 {
							return api.Errorf(http.StatusBadRequest, "call %d refused", i)
						}
						return nil
					})
				}()
				// The first caller takes the queue and becomes the
				// combiner, blocked on mu; each later one stays queued.
				waitTaken(t, &b, i)
			}
			mu.Unlock()
			wg.Wait()
			if len(order) != tc.callers {
				t.Fatalf("%d calls ran, want %d", len(order), tc.callers)
			}
			for i, got := range order {
				if got != i {
					t.Fatalf("call %d ran in position %d: order not kept (%v...)", got, i, order[:min(len(order), 10)])
				}
			}
			for i, err := range errs {
				if (i%3 == 0) != (err != nil) || (err != nil && !strings.Contains(err.Error(), "refused")) {
					t.Fatalf("call %d answered %v", i, err)
				}
			}
			if got := b.batches.Load(); got > tc.maxBatches || got < tc.wantBatches {
				t.Errorf("%d calls took the lock %d times, want %d-%d", tc.callers, got, tc.wantBatches, tc.maxBatches)
			}
			if b.calls.Load() != int64(tc.callers) || b.running.Load() || b.queued() != 0 {
				t.Errorf("after the calls: %d counted, combiner running %v, %d queued", b.calls.Load(), b.running.Load(), b.queued())
			}
		})
	}
}

// TestLockBatcherPanic: a call that panics is answered 500, the lock is
// free again, the calls batched with it still run, and the batcher keeps
// working.
func TestLockBatcherPanic(t *testing.T) {
	var mu sync.Mutex
	var b lockBatcher
	var reported any
	b.panicked = func(p any, stack []byte) {
		if len(stack) == 0 {
			t.Error("panic reported without a stack")
		}
		reported = p
	}
	ran := 0
	var wg sync.WaitGroup
	errs := make([]error, 3)
	mu.Lock()
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.do(&mu, func() error {
				if i == 1 {
					panic("boom")
				}
				ran++
				return nil
			})
		}()
		waitTaken(t, &b, i)
	}
	mu.Unlock()
	wg.Wait()
	var he *api.HTTPError
	if !errors.As(errs[1], &he) || he.Code != http.StatusInternalServerError || reported != "boom" {
		t.Fatalf("panicking call answered %v (reported %v), want a 500", errs[1], reported)
	}
	if errs[0] != nil || errs[2] != nil || ran != 2 {
		t.Fatalf("the calls around the panic: %v, %v, %d ran", errs[0], errs[2], ran)
	}
	if !mu.TryLock() {
		t.Fatal("the lock is still held after a panic")
	}
	mu.Unlock()
	if err := b.do(&mu, func() error { return nil }); err != nil {
		t.Fatalf("after the panic: %v", err)
	}
}

// TestLockBatcherConcurrent runs many callers, each with calls one after
// another, against a lock other goroutines take too: every call runs
// exactly once with the lock held, and each caller's calls in its order.
func TestLockBatcherConcurrent(t *testing.T) {
	var mu sync.Mutex
	var b lockBatcher
	const callers, each = 64, 200
	last := make([]int, callers) // under mu
	held := false                // under mu
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() { // another user of the lock, like the allocation loop
		for {
			select {
			case <-stop:
				return
			default:
			}
			mu.Lock()
			held = true
			held = false
			mu.Unlock()
		}
	}()
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 1; k <= each; k++ {
				err := b.do(&mu, func() error {
					if held {
						return errors.New("ran while another goroutine held the lock")
					}
					if last[c] != k-1 {
						return errors.New("out of order")
					}
					last[c] = k
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if got := b.calls.Load(); got != callers*each {
		t.Fatalf("%d calls ran, want %d", got, callers*each)
	}
	t.Logf("%d calls in %d lock acquisitions", b.calls.Load(), b.batches.Load())
}
