package limits

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// RateLimits is the --rate-limits configuration, in Mesos's JSON format
// (its RateLimits protobuf):
//
//	{"limits": [{"principal": "foo", "qps": 55.5, "capacity": 100},
//	            {"principal": "bar"}],
//	 "aggregate_default_qps": 33.3, "aggregate_default_capacity": 1000}
//
// A listed principal with a qps is throttled at it; one listed without qps
// is not throttled at all. Every principal not listed (and every caller
// without a principal) shares one aggregate bucket at
// aggregate_default_qps, or is not throttled if that is unset. As in Mesos,
// a capacity without its qps means nothing and is ignored.
type RateLimits struct {
	Limits                   []RateLimit `json:"limits"`
	AggregateDefaultQPS      *float64    `json:"aggregate_default_qps,omitempty"`
	AggregateDefaultCapacity *uint64     `json:"aggregate_default_capacity,omitempty"`
}

// RateLimit is one principal's entry.
type RateLimit struct {
	Principal string   `json:"principal"`
	QPS       *float64 `json:"qps,omitempty"`
	Capacity  *uint64  `json:"capacity,omitempty"`
}

// maxCapacity bounds a bucket's depth: a token count above 2^53 cannot be
// decremented in a float64, and no client needs a billion calls of burst.
const maxCapacity = 1 << 30

// ParseRateLimits reads a RateLimits document. Unknown fields, a missing or
// repeated principal, a qps that is not a positive finite number, a
// capacity of 0 or above 2^30 and trailing data are errors naming the
// entry.
func ParseRateLimits(data []byte) (*RateLimits, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var rl RateLimits
	if err := dec.Decode(&rl); err != nil {
		return nil, fmt.Errorf("rate limits: %w (want {\"limits\":[{\"principal\":...,\"qps\":...,\"capacity\":...}],\"aggregate_default_qps\":...,\"aggregate_default_capacity\":...})", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("rate limits: data after the JSON object")
	}
	if err := rl.validate(); err != nil {
		return nil, fmt.Errorf("rate limits: %w", err)
	}
	return &rl, nil
}

func (rl *RateLimits) validate() error {
	seen := map[string]bool{}
	for i, l := range rl.Limits {
		if l.Principal == "" {
			return fmt.Errorf("limits[%d]: principal is required", i)
		}
		if seen[l.Principal] {
			return fmt.Errorf("limits[%d]: principal %q is listed twice", i, l.Principal)
		}
		seen[l.Principal] = true
		if err := checkRate(l.QPS, l.Capacity); err != nil {
			return fmt.Errorf("limits[%d] (principal %q): %w", i, l.Principal, err)
		}
	}
	if err := checkRate(rl.AggregateDefaultQPS, rl.AggregateDefaultCapacity); err != nil {
		return fmt.Errorf("aggregate_default: %w", err)
	}
	return nil
}

func checkRate(qps *float64, capacity *uint64) error {
	if qps != nil && !(*qps > 0 && !math.IsInf(*qps, 0)) {
		return fmt.Errorf("qps must be a positive number, got %v", *qps)
	}
	if capacity != nil && (*capacity == 0 || *capacity > maxCapacity) {
		return fmt.Errorf("capacity must be 1 to %d calls, got %d", maxCapacity, *capacity)
	}
	return nil
}

// LoadRateLimits reads the --rate-limits flag's value: inline JSON (it
// starts with "{", as Mesos accepts a JSON value), or a file's path, with
// or without Mesos's "file://" prefix. Empty: no limits (nil).
func LoadRateLimits(flag string) (*RateLimits, error) {
	v := strings.TrimSpace(flag)
	if v == "" {
		return nil, nil
	}
	if strings.HasPrefix(v, "{") {
		return ParseRateLimits([]byte(v))
	}
	path := strings.TrimPrefix(v, "file://")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rate limits: %w", err)
	}
	rl, err := ParseRateLimits(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rl, nil
}
