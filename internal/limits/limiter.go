package limits

import (
	"fmt"
	"math"
	"time"
)

// DefaultGroup names the aggregate bucket that every principal not listed
// in RateLimits shares (and what metrics label it with).
const DefaultGroup = "(default)"

// Limiter applies a RateLimits: a bucket per listed principal with a qps and
// one shared by all the others. Safe for concurrent use; its map is built
// once and never written.
type Limiter struct {
	listed map[string]*Bucket // nil bucket: listed, not throttled
	limit  map[string]string  // principal -> "55.5 qps, capacity 100"
	def    *Bucket            // nil: unlisted principals not throttled
	defLim string
}

// Verdict is a Limiter's answer for one request.
type Verdict struct {
	OK bool
	// Group is the bucket the request was charged to: the principal if it
	// is listed, DefaultGroup otherwise. Bounded by the configuration, so
	// it is safe as a metric label whatever principals clients send.
	Group string
	// Limit describes the group's limit, for the 429's body.
	Limit string
	// RetryAfter is how long until the group has a token again.
	RetryAfter time.Duration
}

// NewLimiter builds a Limiter; rl nil throttles nothing. now is the
// buckets' clock (nil: time.Now).
func NewLimiter(rl *RateLimits, now func() time.Time) *Limiter {
	l := &Limiter{listed: map[string]*Bucket{}, limit: map[string]string{}}
	if rl == nil {
		return l
	}
	for _, e := range rl.Limits {
		l.listed[e.Principal] = bucketFor(e.QPS, e.Capacity, now)
		l.limit[e.Principal] = describe(e.QPS, e.Capacity)
	}
	l.def = bucketFor(rl.AggregateDefaultQPS, rl.AggregateDefaultCapacity, now)
	l.defLim = "aggregate_default " + describe(rl.AggregateDefaultQPS, rl.AggregateDefaultCapacity)
	return l
}

// bucketFor is nil (not throttled) without a qps. Without a capacity the
// bucket holds one second of calls (at least one).
func bucketFor(qps *float64, capacity *uint64, now func() time.Time) *Bucket {
	if qps == nil {
		return nil
	}
	burst := int(math.Min(math.Max(1, math.Ceil(*qps)), maxCapacity))
	if capacity != nil {
		burst = int(*capacity)
	}
	return NewBucket(*qps, burst, now)
}

func describe(qps *float64, capacity *uint64) string {
	switch {
	case qps == nil:
		return "unlimited"
	case capacity == nil:
		return fmt.Sprintf("%g qps", *qps)
	}
	return fmt.Sprintf("%g qps, capacity %d", *qps, *capacity)
}

// Allow charges one request of principal ("" for none) to its bucket.
func (l *Limiter) Allow(principal string) Verdict {
	b, listed := l.listed[principal]
	v := Verdict{OK: true, Group: principal, Limit: l.limit[principal]}
	if !listed || principal == "" {
		b, v.Group, v.Limit = l.def, DefaultGroup, l.defLim
	}
	if b == nil {
		return v
	}
	v.OK, v.RetryAfter = b.Take()
	return v
}

// Listed reports whether principal has an entry of its own.
func (l *Limiter) Listed(principal string) bool {
	_, ok := l.listed[principal]
	return ok && principal != ""
}
