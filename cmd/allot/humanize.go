package main

import (
	"regexp"
	"time"

	"github.com/allot-sched/allot/allocator"
)

var (
	// rfc3339RE matches a timestamp as the master writes them (RFC 3339,
	// fractional seconds and all).
	rfc3339RE = regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	// durationRE matches a Go duration with a fraction or sub-second
	// units: 59m59.812345678s, 1.5s, 250ms, 12µs, 800ns.
	durationRE = regexp.MustCompile(`\b(\d+h)?(\d+m)?\d+(\.\d+)?(s|ms|µs|us|ns)\b`)
)

// humanize rewrites the timestamps and durations in a master's text for a
// person: timestamps to the second in local time, durations rounded to
// what a person reads (whole seconds past a minute, tenths below). --json
// keeps the master's text as it came.
func humanize(s string) string {
	s = rfc3339RE.ReplaceAllStringFunc(s, func(m string) string {
		t, err := time.Parse(time.RFC3339Nano, m)
		if err != nil {
			return m
		}
		return t.Local().Format("2006-01-02 15:04:05 MST")
	})
	return durationRE.ReplaceAllStringFunc(s, func(m string) string {
		d, err := time.ParseDuration(m)
		if err != nil {
			return m
		}
		return allocator.HumanDuration(d)
	})
}
