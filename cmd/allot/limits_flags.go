package main

import (
	"flag"

	"github.com/allot-sched/allot/internal/limits"
	"github.com/allot-sched/allot/master"
)

// limitFlags are the master's limits that keep one client from hurting the
// others (docs/security-limits.md).
type limitFlags struct {
	maxRequestBytes int64
	rateLimits      string
	maxSubs         int
}

func addLimitFlags(fs *flag.FlagSet, f *limitFlags) {
	addMaxRequestBytesFlag(fs, &f.maxRequestBytes)
	fs.StringVar(&f.rateLimits, "rate-limits", "", "per-principal request rates in Mesos's --rate_limits JSON format, inline or as a `file` path (file:// optional):\n"+
		`{"limits":[{"principal":"foo","qps":55.5,"capacity":100}],"aggregate_default_qps":33.3,"aggregate_default_capacity":100}`+
		"\ncalls over a principal's rate are answered 429 with Retry-After (empty: no rate limits)")
	fs.IntVar(&f.maxSubs, "max-subscriptions-per-principal", 0, "most scheduler plus operator SUBSCRIBE streams one principal (or, without one, one remote host) holds open;\nbeyond it SUBSCRIBE is answered 429 (0: no cap)")
}

// addMaxRequestBytesFlag is --max-request-bytes, on the master and the
// agent alike.
func addMaxRequestBytesFlag(fs *flag.FlagSet, v *int64) {
	fs.Int64Var(v, "max-request-bytes", limits.DefaultMaxRequestBytes, "largest request body read, in `bytes`; larger ones are answered 413 (negative: only each endpoint's own cap)")
}

// apply checks the flags and sets them on cfg.
func (f limitFlags) apply(cfg *master.Config) error {
	if f.maxRequestBytes == 0 {
		return usagef("--max-request-bytes: 0 would refuse every body; give a size, or a negative number for no cap")
	}
	if f.maxSubs < 0 {
		return usagef("--max-subscriptions-per-principal: want 0 (no cap) or more, got %d", f.maxSubs)
	}
	rl, err := limits.LoadRateLimits(f.rateLimits)
	if err != nil {
		return usagef("--rate-limits: %v", err)
	}
	cfg.MaxRequestBytes, cfg.RateLimits, cfg.MaxSubscriptionsPerPrincipal = f.maxRequestBytes, rl, f.maxSubs
	return nil
}
