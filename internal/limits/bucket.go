package limits

import (
	"math"
	"sync"
	"time"
)

// Bucket is a token bucket: it holds up to Burst tokens, refills at Rate
// tokens a second, and a request takes one. Safe for concurrent use.
//
// Mesos queues a throttled framework's messages (up to capacity) and
// processes them at qps; allot answers 429 instead of holding the request,
// so the client backs off and the master keeps no queue. The bucket's depth
// plays capacity's role: how many calls a principal may make at once after
// it has been quiet.
type Bucket struct {
	rate  float64 // tokens per second, > 0
	burst float64 // >= 1
	now   func() time.Time

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// NewBucket returns a full bucket. now is its clock (nil: time.Now).
func NewBucket(rate float64, burst int, now func() time.Time) *Bucket {
	if now == nil {
		now = time.Now
	}
	b := float64(burst)
	if b < 1 {
		b = 1
	}
	return &Bucket{rate: rate, burst: b, now: now, tokens: b, last: now()}
}

// Take takes a token if one is there. If not, it reports how long until
// one will be: what a 429's Retry-After says.
func (b *Bucket) Take() (ok bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(b.burst, b.tokens+el*b.rate)
	}
	// A clock that steps back refills nothing, but moves last so the
	// next forward step is not counted twice.
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	secs := (1 - b.tokens) / b.rate
	return false, time.Duration(math.Ceil(secs * float64(time.Second)))
}
