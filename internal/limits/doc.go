// Package limits keeps one client of a master or an agent from hurting the
// others (issue 16, item 5): a token bucket per principal for request rates
// (configured in Mesos's --rate_limits JSON format), a count of open
// subscription streams per principal, and a cap on request body sizes.
//
// It decides only; the master and the agent answer (429 with Retry-After,
// 413) and count (their Prometheus metrics). Time comes from an injected
// clock so the bucket arithmetic is tested without sleeping.
//
// The package imports only the standard library.
package limits
