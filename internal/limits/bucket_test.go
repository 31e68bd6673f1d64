package limits

import (
	"testing"
	"time"
)

// fakeClock is a clock moved only by the test.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestBucket(t *testing.T) {
	type step struct {
		advance time.Duration
		ok      bool
		wait    time.Duration // when !ok
	}
	tests := []struct {
		name  string
		rate  float64
		burst int
		steps []step
	}{
		{"burst then empty", 10, 3, []step{{0, true, 0}, {0, true, 0}, {0, true, 0}, {0, false, 100 * time.Millisecond}}},
		{"refill one token", 10, 1, []step{{0, true, 0}, {50 * time.Millisecond, false, 50 * time.Millisecond}, {50 * time.Millisecond, true, 0}}},
		{"refill never exceeds burst", 100, 2, []step{{time.Hour, true, 0}, {0, true, 0}, {0, false, 10 * time.Millisecond}}},
		{"fractional rate", 0.5, 1, []step{{0, true, 0}, {time.Second, false, time.Second}, {time.Second, true, 0}}},
		{"burst below one is one", 1, 0, []step{{0, true, 0}, {0, false, time.Second}}},
		{"clock stepping back refills nothing", 1, 1, []step{{0, true, 0}, {-time.Minute, false, time.Second}, {time.Second, true, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeClock{t: time.Unix(1_700_000_000, 0)}
			b := NewBucket(tt.rate, tt.burst, c.now)
			for i, s := range tt.steps {
				c.advance(s.advance)
				ok, wait := b.Take()
				if ok != s.ok || (!ok && wait != s.wait) {
					t.Fatalf("step %d: Take = %v, %v; want %v, %v", i, ok, wait, s.ok, s.wait)
				}
			}
		})
	}
}

// A sustained caller gets the rate, not more: over 10 s at 1 call per ms
// against 20 qps with a burst of 5, 5 + 200 calls pass.
func TestBucketSustainedRate(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	b := NewBucket(20, 5, c.now)
	passed := 0
	for i := 0; i < 10000; i++ {
		if ok, _ := b.Take(); ok {
			passed++
		}
		c.advance(time.Millisecond)
	}
	if passed < 204 || passed > 206 {
		t.Fatalf("passed %d calls in 10 s, want 205", passed)
	}
}
