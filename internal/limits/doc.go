// Package limits keeps one client of a master or an agent from hurting the
// others: a token bucket per principal for request rates
// (configured in Mesos's --rate_limits JSON format), a count of open
// subscription streams per principal, a cap on request body sizes, and the
// bounds of a listener: connections per listener and per client host
// (ConnLimiter), a body read deadline that spares streamed responses and a
// budget of body bytes being read at once (BodyDeadline), and net/http's
// header and idle timeouts (Server).
//
// It decides, and answers only where no handler runs (a connection closed
// at accept, a 503 for a spent body budget); the master and the agent
// answer the rest (429 with Retry-After, 413, 408) and count (their
// Prometheus metrics, through hooks). Time comes from an injected
// clock so the bucket arithmetic is tested without sleeping.
//
// The package imports only the standard library.
package limits
