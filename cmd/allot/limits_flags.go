package main

import (
	"flag"
	"time"

	"github.com/allot-sched/allot/internal/limits"
	"github.com/allot-sched/allot/master"
)

// limitFlags are the master's limits that keep one client from hurting the
// others (docs/security-limits.md).
type limitFlags struct {
	maxRequestBytes  int64
	rateLimits       string
	maxSubs          int
	maxSnapshotBytes int64
	http             httpFlags
	healthLag        int64
}

func addLimitFlags(fs *flag.FlagSet, f *limitFlags) {
	addMaxRequestBytesFlag(fs, &f.maxRequestBytes)
	fs.StringVar(&f.rateLimits, "rate-limits", "", "per-principal request rates in Mesos's --rate_limits JSON format, inline or as a `file` path (file:// optional):\n"+
		`{"limits":[{"principal":"foo","qps":55.5,"capacity":100}],"aggregate_default_qps":33.3,"aggregate_default_capacity":100}`+
		"\ncalls over a principal's rate are answered 429 with Retry-After (empty: no rate limits)")
	fs.Int64Var(&f.maxSnapshotBytes, "max-snapshot-bytes", master.DefaultMaxSnapshotBytes, "largest registry snapshot a restore (POST /api/v1/allot/snapshot) accepts, in `bytes`; it is streamed to disk\nin the work directory and validated as it arrives, larger ones are answered 413")
	addHTTPFlags(fs, &f.http)
	fs.Int64Var(&f.healthLag, "health-max-raft-lag", master.DefaultHealthMaxRaftLag, "/health answers 503 when the registry lags what raft has committed by more than this many `entries`\n(it also answers 503 while the raft log cannot be written; 0: lag not checked)")
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
	if f.maxSnapshotBytes <= 0 {
		return usagef("--max-snapshot-bytes: want a size in bytes, got %d", f.maxSnapshotBytes)
	}
	cfg.MaxRequestBytes, cfg.RateLimits, cfg.MaxSubscriptionsPerPrincipal = f.maxRequestBytes, rl, f.maxSubs
	cfg.MaxSnapshotBytes, cfg.HTTP = f.maxSnapshotBytes, f.http.server()
	cfg.HealthMaxRaftLag = f.healthLag
	if f.healthLag <= 0 {
		cfg.HealthMaxRaftLag = -1 // off (0 in Config is the default)
	}
	return nil
}

// httpFlags are the --http-* bounds of a listener, on the master and the
// agent alike (limits.Server).
type httpFlags struct {
	readHeader, body, idle time.Duration
	maxConns, perHost      int
	inFlight               int64
}

func addHTTPFlags(fs *flag.FlagSet, f *httpFlags) {
	fs.DurationVar(&f.readHeader, "http-read-header-timeout", limits.DefaultReadHeaderTimeout, "a client must send a request's headers within this `duration` (0: no limit)")
	fs.DurationVar(&f.body, "http-body-timeout", limits.DefaultBodyTimeout, "a client must send a request's body within this `duration` after its headers, or is answered 408 and disconnected;\nresponses streamed after the body (SUBSCRIBE, the agent and executor streams) are not limited (0: no limit)")
	fs.DurationVar(&f.idle, "http-idle-timeout", limits.DefaultIdleTimeout, "a keep-alive connection idle this `duration` between requests is closed (0: no limit)")
	fs.IntVar(&f.maxConns, "http-max-connections", limits.DefaultMaxConns, "most HTTP connections open at once on the listener; more are closed as soon as they are accepted (0: no cap)")
	fs.IntVar(&f.perHost, "http-max-connections-per-host", limits.DefaultMaxConnsPerHost, "most HTTP connections open at once from one client IP address; more are closed at accept\n(a master does not count other masters, which forward their clients; 0: no cap)")
	fs.Int64Var(&f.inFlight, "http-max-body-bytes-in-flight", limits.DefaultMaxBodyBytesInFlight, "most request body `bytes` being read at once over all connections (each request reserves its Content-Length);\nbeyond it requests are answered 503 with Retry-After, so stalled uploads cannot hold the memory (0: no cap)")
}

// server is the flags as a limits.Server: 0 on a flag turns that bound off.
func (f httpFlags) server() limits.Server {
	off := func(v int64) int64 {
		if v <= 0 {
			return -1
		}
		return v
	}
	return limits.Server{
		ReadHeaderTimeout:    time.Duration(off(int64(f.readHeader))),
		BodyTimeout:          time.Duration(off(int64(f.body))),
		IdleTimeout:          time.Duration(off(int64(f.idle))),
		MaxConns:             int(off(int64(f.maxConns))),
		MaxConnsPerHost:      int(off(int64(f.perHost))),
		MaxBodyBytesInFlight: off(f.inFlight),
	}
}
