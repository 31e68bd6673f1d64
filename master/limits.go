package master

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/limits"
)

// Limits that keep one client from hurting the others (see
// docs/security-limits.md): request bodies capped at
// Config.MaxRequestBytes (413), request rates per principal from
// Config.RateLimits (429 with Retry-After), and open subscription streams
// per principal capped at Config.MaxSubscriptionsPerPrincipal (429).
//
// Who the principal is: the authenticated one (auth.PrincipalFrom) when
// there is one. Without authentication a scheduler call is charged to its
// framework's FrameworkInfo.principal, as Mesos's framework rate limiting
// does (its RateLimit.principal "should match FrameworkInfo.principal");
// that is what the client claims, so without authentication a framework can
// spend another's budget but not escape the aggregate default. Any other
// caller without a principal is charged to the aggregate default bucket,
// which Mesos gives "a framework without a principal". Only a subscription
// stream of a caller without any principal is counted by its remote IP, so
// that anonymous subscribers on different hosts do not share one cap.

// limiter is the master's part: the buckets, the stream counts and their
// metrics.
type limiter struct {
	rate     *limits.Limiter
	streams  *limits.Streams
	maxBody  int64 // <= 0: no cap beyond each handler's own
	throttle *prometheus.CounterVec
	open     *prometheus.GaugeVec
	bodies   prometheus.Counter
	// byStream maps an open scheduler stream's Mesos-Stream-Id to its
	// principal (chargeSchedulerEarly).
	byStream sync.Map
}

func newLimiter(cfg Config, clock Clock, reg *prometheus.Registry) *limiter {
	l := &limiter{
		rate:    limits.NewLimiter(cfg.RateLimits, clock.Now),
		maxBody: cfg.MaxRequestBytes,
		throttle: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "allot_master_throttled_requests_total",
			Help: "Requests answered 429, by principal (a listed one, an authenticated one, or (default) for the rest) and reason (rate, streams)."},
			[]string{"principal", "reason"}),
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "allot_master_open_streams",
			Help: "Open scheduler and operator subscription streams by principal (ip:<host> for a caller without one)."},
			[]string{"principal"}),
		bodies: prometheus.NewCounter(prometheus.CounterOpts{Name: "allot_master_request_bodies_rejected_total",
			Help: "Requests answered 413: the body was over --max-request-bytes."}),
	}
	if l.maxBody == 0 {
		l.maxBody = limits.DefaultMaxRequestBytes
	}
	l.streams = limits.NewStreams(cfg.MaxSubscriptionsPerPrincipal, func(key string, n int) {
		if n == 0 {
			l.open.DeleteLabelValues(key) // keys come from clients: do not keep them
			return
		}
		l.open.WithLabelValues(key).Set(float64(n))
	})
	reg.MustRegister(l.throttle, l.open, l.bodies)
	return l
}

// limitRequests wraps the master's routes: body caps on every route, and
// rate limits on every route but those exempt (rateLimited).
func (m *Master) limitRequests(h http.Handler) http.Handler {
	rated := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rateLimited(r.URL.Path) {
			p, _ := auth.PrincipalFrom(r.Context())
			if !m.allow(w, r, p, "") {
				return
			}
		}
		h.ServeHTTP(w, r)
	})
	return limits.CapBodies(rated, m.bodyCap, func(*http.Request) { m.lim.bodies.Inc() })
}

// bodyCap is the largest body a route reads. A snapshot restore keeps its
// own cap, --max-snapshot-bytes, and streams to disk (restore.go); the agent protocol keeps at least
// api.MaxBodyBytes, because an agent re-registering with every task it runs
// is a cluster member, not a client to be kept small.
func (m *Master) bodyCap(r *http.Request) int64 {
	switch {
	case m.lim.maxBody < 0 || r.URL.Path == SnapshotPath:
		return 0
	case r.URL.Path == AgentPath:
		return max(m.lim.maxBody, api.MaxBodyBytes)
	}
	return m.lim.maxBody
}

// rateLimited says which routes are charged in the middleware. Not the
// scheduler API (charged in handleScheduler once the call, and with it the
// framework, is decoded), not agents (throttling them would delay status
// updates every framework waits for), and not /health and /metrics, which
// monitoring must reach even when a principal is over its limit.
func rateLimited(path string) bool {
	switch path {
	case "/api/v1/scheduler", AgentPath, "/health", "/metrics":
		return false
	}
	return true
}

// maxThrottleHold bounds how long a throttled request is held before its
// 429 goes out (allow).
const maxThrottleHold = 100 * time.Millisecond

// allow charges one request of principal; over the limit it answers 429
// with Retry-After and a body naming the principal and the limit. claimed
// is "" or, for an unauthenticated scheduler call, where the principal came
// from (shown in the body).
//
// The 429 is held until the principal's next token is due, at most
// maxThrottleHold: a client that retries at once, in a tight loop, then
// makes a few calls a second per connection instead of thousands, which
// would cost the master (and on a shared host, everyone) CPU even when
// each is refused. Mesos holds throttled messages too (it queues them).
// The hold costs nothing per request beyond the goroutine net/http already
// keeps for the connection.
func (m *Master) allow(w http.ResponseWriter, r *http.Request, principal, claimed string) bool {
	v := m.lim.rate.Allow(principal)
	if v.OK {
		return true
	}
	m.lim.throttle.WithLabelValues(v.Group, "rate").Inc()
	hold := time.NewTimer(min(v.RetryAfter, maxThrottleHold))
	select {
	case <-hold.C:
	case <-r.Context().Done():
		hold.Stop()
	}
	secs := int(math.Max(1, math.Ceil(v.RetryAfter.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	who := fmt.Sprintf("principal %q", principal)
	if principal == "" {
		who = "a caller without a principal"
	}
	if claimed != "" {
		who += " (" + claimed + ")"
	}
	if v.Group == limits.DefaultGroup {
		who += ", charged to the aggregate default,"
	}
	api.WriteError(w, api.Errorf(http.StatusTooManyRequests, "%s is over its rate limit (%s, --rate-limits); retry after %s",
		who, v.Limit, time.Duration(secs)*time.Second))
	return false
}

// chargeSchedulerEarly charges a scheduler call before its body is read
// when the request alone says who sends it: an authenticated principal, or
// a Mesos-Stream-Id of an open subscription (its SUBSCRIBE's principal).
// A throttled flood then costs the master no body read, decode or m.mu.
// charged false: the call must be charged once decoded (schedulerPrincipal).
func (m *Master) chargeSchedulerEarly(w http.ResponseWriter, r *http.Request) (charged, ok bool) {
	if p, authed := auth.PrincipalFrom(r.Context()); authed {
		return true, m.allow(w, r, p, "")
	}
	sid := r.Header.Get(headerStreamID)
	if sid == "" {
		return false, true
	}
	p, known := m.lim.byStream.Load(sid)
	if !known {
		return false, true
	}
	return true, m.allow(w, r, p.(string), "FrameworkInfo.principal")
}

// streamPrincipal remembers which principal a scheduler stream id belongs
// to until the returned func is called (the stream ended).
func (l *limiter) streamPrincipal(streamID, principal string) (forget func()) {
	l.byStream.Store(streamID, principal)
	return func() { l.byStream.Delete(streamID) }
}

// schedulerPrincipal is who a scheduler call is charged to: the
// authenticated principal, else the FrameworkInfo.principal of the
// SUBSCRIBE or of the subscribed framework the call names. Takes m.mu for
// the latter.
func (m *Master) schedulerPrincipal(r *http.Request, call *scheduler.Call) (principal, claimed string) {
	if p, ok := auth.PrincipalFrom(r.Context()); ok {
		return p, ""
	}
	if call.Type == scheduler.Call_SUBSCRIBE {
		return call.GetSubscribe().GetFrameworkInfo().GetPrincipal(), "FrameworkInfo.principal"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if fw := m.frameworks[call.GetFrameworkID().GetValue()]; fw != nil {
		return fw.info.GetPrincipal(), "FrameworkInfo.principal"
	}
	return "", ""
}

// admitStream counts a subscription stream of principal against
// --max-subscriptions-per-principal; beyond it, it answers 429 and reports
// false. release must be called when the stream ends.
func (m *Master) admitStream(w http.ResponseWriter, r *http.Request, principal string) (release func(), ok bool) {
	key := principal
	if key == "" {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		key = "ip:" + host
	}
	release, ok = m.lim.streams.Acquire(key)
	if ok {
		return release, true
	}
	label := limits.DefaultGroup
	if _, authed := auth.PrincipalFrom(r.Context()); authed || m.lim.rate.Listed(principal) {
		label = principal
	}
	m.lim.throttle.WithLabelValues(label, "streams").Inc()
	w.Header().Set("Retry-After", "1")
	api.WriteError(w, api.Errorf(http.StatusTooManyRequests, "%q already has %d subscription streams open, the most --max-subscriptions-per-principal allows; close one first",
		key, m.lim.streams.Max()))
	return release, false
}
