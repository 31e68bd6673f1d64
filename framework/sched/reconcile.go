package sched

import (
	"context"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// reconcile asks for the state of every known task and repeats, backing
// off, until each has reported since this subscription (Mesos's
// reconciliation algorithm), or the subscription is replaced.
func (c *Client) reconcile(ctx context.Context, session int, known map[string]string) {
	c.mu.Lock()
	c.reported = map[string]bool{}
	c.mu.Unlock()
	delay := c.cfg.ReconcileBackoff
	for {
		tasks := c.planner.Tasks()
		c.mu.Lock()
		pending := map[string]string{}
		for id, agent := range tasks {
			if _, ok := known[id]; ok && !c.reported[id] {
				pending[id] = agent
			}
		}
		current := c.session == session
		c.mu.Unlock()
		if !current {
			return
		}
		// An explicit reconciliation of the pending tasks; with none known,
		// one implicit reconciliation (empty list) and done.
		c.call(ctx, calls.Reconcile(calls.ReconcileTasks(pending)))
		if len(pending) == 0 {
			if c.reconcileDone != nil {
				c.reconcileDone <- struct{}{}
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		if delay *= 2; delay > c.cfg.ReconcileBackoffMax {
			delay = c.cfg.ReconcileBackoffMax
		}
	}
}

// acker sends queued acknowledgements off the event loop, so a burst of
// updates is not answered one round trip at a time inside it.
func (c *Client) acker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case a := <-c.acks:
			c.call(ctx, a)
		}
	}
}
