package limits

import (
	"encoding/json"
	"testing"
	"time"
)

// FuzzParseRateLimits: the --rate-limits file (docs/fuzzing.md). No panic;
// an accepted document re-encodes to one that parses to the same limits,
// and a Limiter built from it answers without panicking.
func FuzzParseRateLimits(f *testing.F) {
	for _, s := range []string{
		`{"limits":[{"principal":"foo","qps":55.5,"capacity":100},{"principal":"bar","qps":300},{"principal":"baz"}],"aggregate_default_qps":33.3,"aggregate_default_capacity":1000}`,
		`{}`, `{"limits":[]}`, `{"limits":[{"principal":"a","capacity":5}]}`,
		`{"limits":[{"principal":"a","qps":1e-300}]}`, `{"aggregate_default_qps":1e308}`,
		`{"limits":[{"principal":"a"},{"principal":"a"}]}`, `{} {}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rl, err := ParseRateLimits(data)
		if err != nil {
			return
		}
		b, err := json.Marshal(rl)
		if err != nil {
			t.Fatalf("accepted limits do not encode: %v", err)
		}
		again, err := ParseRateLimits(b)
		if err != nil {
			t.Fatalf("re-encoded limits %s rejected: %v", b, err)
		}
		if describeAll(rl) != describeAll(again) {
			t.Fatalf("round trip changed the limits: %s -> %s", describeAll(rl), describeAll(again))
		}
		now := time.Unix(0, 0)
		l := NewLimiter(rl, func() time.Time { return now })
		for _, e := range rl.Limits {
			if v := l.Allow(e.Principal); !v.OK {
				t.Fatalf("a full bucket refused %q's first call", e.Principal)
			}
		}
		l.Allow("")
	})
}
