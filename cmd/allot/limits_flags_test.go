package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/internal/limits"
	"github.com/allot-sched/allot/master"
)

func TestLimitFlags(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
		check   func(master.Config) bool
	}{
		{nil, "", func(c master.Config) bool {
			return c.MaxRequestBytes == 4<<20 && c.RateLimits == nil && c.MaxSubscriptionsPerPrincipal == 0
		}},
		{[]string{"--rate-limits", `{"limits":[{"principal":"a","qps":2}]}`, "--max-subscriptions-per-principal", "3", "--max-request-bytes", "-1"},
			"", func(c master.Config) bool {
				return c.RateLimits != nil && c.RateLimits.Limits[0].Principal == "a" && c.MaxSubscriptionsPerPrincipal == 3 && c.MaxRequestBytes == -1
			}},
		{nil, "", func(c master.Config) bool {
			s := c.HTTP.WithDefaults()
			return c.MaxSnapshotBytes == master.DefaultMaxSnapshotBytes && s.BodyTimeout == limits.DefaultBodyTimeout &&
				s.MaxConnsPerHost == limits.DefaultMaxConnsPerHost && s.MaxBodyBytesInFlight == limits.DefaultMaxBodyBytesInFlight
		}},
		{[]string{"--http-body-timeout", "0", "--http-idle-timeout", "5s", "--http-max-connections-per-host", "0", "--max-snapshot-bytes", "1024"},
			"", func(c master.Config) bool {
				s := c.HTTP.WithDefaults()
				return s.BodyTimeout == 0 && s.IdleTimeout == 5*time.Second && s.MaxConnsPerHost == 0 && s.MaxConns == limits.DefaultMaxConns &&
					c.MaxSnapshotBytes == 1024
			}},
		{[]string{"--max-snapshot-bytes", "0"}, "--max-snapshot-bytes: want a size", nil},
		{[]string{"--rate-limits", `{"limits":[{}]}`}, "--rate-limits: rate limits: limits[0]: principal is required", nil},
		{[]string{"--rate-limits", "/no/such/rates.json"}, "--rate-limits: rate limits: open /no/such/rates.json", nil},
		{[]string{"--max-request-bytes", "0"}, "--max-request-bytes: 0 would refuse every body", nil},
		{[]string{"--max-subscriptions-per-principal", "-2"}, "want 0 (no cap) or more", nil},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f limitFlags
		addLimitFlags(fs, &f)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		var cfg master.Config
		err := f.apply(&cfg)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: err = %v, want %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !tt.check(cfg) {
			t.Errorf("%v: err %v, config %+v", tt.args, err, cfg)
		}
	}
}
