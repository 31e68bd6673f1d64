package limits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func f64(v float64) *float64 { return &v }
func u64(v uint64) *uint64   { return &v }

func TestParseRateLimits(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    *RateLimits
		wantErr string
	}{
		{name: "mesos example",
			in: `{"limits":[{"principal":"foo","qps":55.5,"capacity":100},{"principal":"bar","qps":300},{"principal":"baz"}],
			      "aggregate_default_qps":33.3,"aggregate_default_capacity":1000}`,
			want: &RateLimits{Limits: []RateLimit{{"foo", f64(55.5), u64(100)}, {"bar", f64(300), nil}, {"baz", nil, nil}},
				AggregateDefaultQPS: f64(33.3), AggregateDefaultCapacity: u64(1000)}},
		{name: "empty object", in: `{}`, want: &RateLimits{}},
		{name: "capacity without qps is kept, ignored", in: `{"limits":[{"principal":"a","capacity":5}]}`,
			want: &RateLimits{Limits: []RateLimit{{"a", nil, u64(5)}}}},
		{name: "not JSON", in: `limits`, wantErr: "invalid character"},
		{name: "unknown field", in: `{"limits":[{"principal":"a","qpss":1}]}`, wantErr: `unknown field "qpss"`},
		{name: "missing principal", in: `{"limits":[{"qps":1}]}`, wantErr: "limits[0]: principal is required"},
		{name: "duplicate principal", in: `{"limits":[{"principal":"a"},{"principal":"a"}]}`, wantErr: `limits[1]: principal "a" is listed twice`},
		{name: "zero qps", in: `{"limits":[{"principal":"a","qps":0}]}`, wantErr: "qps must be a positive number"},
		{name: "negative qps", in: `{"limits":[{"principal":"a","qps":-1}]}`, wantErr: "qps must be a positive number"},
		{name: "zero capacity", in: `{"limits":[{"principal":"a","qps":1,"capacity":0}]}`, wantErr: "capacity must be 1 to"},
		{name: "huge capacity", in: `{"aggregate_default_qps":1,"aggregate_default_capacity":1000000000000}`, wantErr: "aggregate_default: capacity"},
		{name: "negative capacity", in: `{"limits":[{"principal":"a","qps":1,"capacity":-3}]}`, wantErr: "cannot unmarshal"},
		{name: "trailing data", in: `{} {}`, wantErr: "data after the JSON object"},
		{name: "mesos doc's missing comma", in: `{"limits":[{"principal":"foo","qps":55.5 "capacity":1}]}`, wantErr: "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRateLimits([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a, b := describeAll(got), describeAll(tt.want); a != b {
				t.Fatalf("got %s, want %s", a, b)
			}
		})
	}
}

func describeAll(rl *RateLimits) string {
	var b strings.Builder
	for _, l := range rl.Limits {
		b.WriteString(l.Principal + ": " + describe(l.QPS, l.Capacity) + capNote(l.QPS, l.Capacity) + "; ")
	}
	b.WriteString("default: " + describe(rl.AggregateDefaultQPS, rl.AggregateDefaultCapacity))
	return b.String()
}

func capNote(q *float64, c *uint64) string {
	if q == nil && c != nil {
		return " (capacity set)"
	}
	return ""
}

func TestLoadRateLimits(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rates.json")
	os.WriteFile(file, []byte(`{"limits":[{"principal":"foo","qps":2}]}`), 0o600)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"limits":[{}]}`), 0o600)
	tests := []struct {
		flag    string
		want    string // the foo entry, "" for nil
		wantErr string
	}{
		{"", "", ""},
		{"  ", "", ""},
		{`{"limits":[{"principal":"foo","qps":1}]}`, "1 qps", ""},
		{file, "2 qps", ""},
		{"file://" + file, "2 qps", ""},
		{filepath.Join(dir, "missing.json"), "", "no such file"},
		{bad, "", bad + ": rate limits: limits[0]: principal is required"},
	}
	for _, tt := range tests {
		rl, err := LoadRateLimits(tt.flag)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("LoadRateLimits(%q) err = %v, want %q", tt.flag, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("LoadRateLimits(%q): %v", tt.flag, err)
			continue
		}
		got := ""
		if rl != nil {
			got = describe(rl.Limits[0].QPS, rl.Limits[0].Capacity)
		}
		if got != tt.want {
			t.Errorf("LoadRateLimits(%q) = %q, want %q", tt.flag, got, tt.want)
		}
	}
}

func TestLimiter(t *testing.T) {
	rl, err := ParseRateLimits([]byte(`{"limits":[{"principal":"foo","qps":1,"capacity":2},{"principal":"bar"}],
		"aggregate_default_qps":1,"aggregate_default_capacity":1}`))
	if err != nil {
		t.Fatal(err)
	}
	c := &fakeClock{t: time.Unix(0, 0)}
	l := NewLimiter(rl, c.now)
	type call struct {
		principal string
		ok        bool
		group     string
	}
	calls := []call{
		{"foo", true, "foo"}, {"foo", true, "foo"}, {"foo", false, "foo"}, // capacity 2
		{"bar", true, "bar"}, {"bar", true, "bar"}, {"bar", true, "bar"}, // listed without qps: unlimited
		{"qux", true, DefaultGroup}, {"", false, DefaultGroup}, // unlisted and anonymous share one bucket
		{"other", false, DefaultGroup},
	}
	for i, cl := range calls {
		v := l.Allow(cl.principal)
		if v.OK != cl.ok || v.Group != cl.group {
			t.Fatalf("call %d (%q): OK %v group %q; want %v %q", i, cl.principal, v.OK, v.Group, cl.ok, cl.group)
		}
		if !v.OK && v.RetryAfter != time.Second {
			t.Fatalf("call %d: RetryAfter %v, want 1s", i, v.RetryAfter)
		}
	}
	if v := l.Allow("foo"); v.Limit != "1 qps, capacity 2" {
		t.Errorf("foo's limit described as %q", v.Limit)
	}
	if v := l.Allow("zed"); v.Limit != "aggregate_default 1 qps, capacity 1" {
		t.Errorf("default limit described as %q", v.Limit)
	}
	c.advance(time.Second)
	if v := l.Allow("foo"); !v.OK {
		t.Error("foo still throttled a second later")
	}
	if !l.Listed("foo") || l.Listed("qux") || l.Listed("") {
		t.Error("Listed wrong")
	}
	// No configuration: nothing is throttled.
	none := NewLimiter(nil, c.now)
	for i := 0; i < 1000; i++ {
		if v := none.Allow("x"); !v.OK {
			t.Fatal("a nil configuration throttled")
		}
	}
	// A qps without capacity holds one second of calls.
	rl2, _ := ParseRateLimits([]byte(`{"limits":[{"principal":"a","qps":3}]}`))
	l2 := NewLimiter(rl2, c.now)
	n := 0
	for l2.Allow("a").OK {
		n++
	}
	if n != 3 {
		t.Errorf("a qps of 3 without capacity let %d calls through at once, want 3", n)
	}
}

func TestStreams(t *testing.T) {
	seen := map[string]int{}
	s := NewStreams(2, func(k string, n int) { seen[k] = n })
	r1, ok1 := s.Acquire("a")
	_, ok2 := s.Acquire("a")
	_, ok3 := s.Acquire("a")
	_, okb := s.Acquire("b")
	if !ok1 || !ok2 || ok3 || !okb {
		t.Fatalf("acquire a,a,a,b = %v %v %v %v; want true true false true", ok1, ok2, ok3, okb)
	}
	r1()
	r1() // twice: counted once
	if s.Open("a") != 1 || seen["a"] != 1 {
		t.Fatalf("open a = %d (gauge %d), want 1", s.Open("a"), seen["a"])
	}
	if _, ok := s.Acquire("a"); !ok {
		t.Fatal("a slot released but not reusable")
	}
	un := NewStreams(0, nil)
	for i := 0; i < 100; i++ {
		if _, ok := un.Acquire("x"); !ok {
			t.Fatal("max 0 capped")
		}
	}
	if un.Open("x") != 100 {
		t.Fatalf("uncapped streams not counted: %d", un.Open("x"))
	}
}
