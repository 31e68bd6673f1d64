package sched

import (
	"context"
	"errors"
	"time"
)

// ErrNoMaster is returned by Run when Config.ReconnectTimeout passed with
// no master taking the framework's re-subscription.
var ErrNoMaster = errors.New("no master took the framework's subscription")

// reconnectClock remembers when the framework last lost a subscription it
// had, for Config.ReconnectTimeout.
type reconnectClock struct {
	since time.Time // zero: never subscribed
}

// ended records that a subscription attempt returned; subscribed says
// whether it had got as far as SUBSCRIBED, so that the wait starts again.
func (r *reconnectClock) ended(subscribed bool) {
	if subscribed || r.since.IsZero() {
		r.since = time.Now()
	}
}

// expired reports whether timeout (when positive) has passed since the
// last subscription ended.
func (r *reconnectClock) expired(timeout time.Duration) bool {
	return timeout > 0 && !r.since.IsZero() && time.Since(r.since) >= timeout
}

// sessionCount is the number of SUBSCRIBED events so far.
func (c *Client) sessionCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// attemptContext bounds one subscription attempt by ReconnectTimeout once
// the framework has lost a subscription: a master that accepts the
// connection and never answers (stopped, overloaded) would otherwise hold
// the attempt past it. The attempt's context ends at the deadline unless
// the attempt got as far as SUBSCRIBED by then.
func (c *Client) attemptContext(ctx context.Context, lost *reconnectClock, session int) (context.Context, context.CancelFunc) {
	actx, cancel := context.WithCancel(ctx)
	if c.cfg.ReconnectTimeout <= 0 || lost.since.IsZero() || c.ID() == "" {
		return actx, cancel
	}
	t := time.AfterFunc(time.Until(lost.since.Add(c.cfg.ReconnectTimeout)), func() {
		if c.sessionCount() == session {
			cancel()
		}
	})
	return actx, func() { t.Stop(); cancel() }
}
