package sched

import (
	"context"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// InversePlanner is a Planner that hears inverse offers: the master asking
// for resources back on an agent because other frameworks wait (allot's
// `master --reclaim`). A Planner without these methods ignores them, as a
// framework that never answers: the master rescinds them in time.
//
// Answers are the planner's to make, whenever it is ready (AcceptInverse
// once it has released what the offer asks, DeclineInverse when it keeps
// it): an inverse offer is not a question to answer within the event.
type InversePlanner interface {
	Planner
	// InverseOffers reports inverse offers just received.
	InverseOffers(offers []mesos.InverseOffer)
	// InverseRescinded reports that the master withdrew one (nobody waits
	// any more, or the framework already gave back enough).
	InverseRescinded(id string)
}

// handleInverse routes the inverse-offer events to the planner, if it
// hears them. It reports whether e was one.
func (c *Client) handleInverse(e *scheduler.Event) bool {
	ip, ok := c.planner.(InversePlanner)
	switch e.Type {
	case scheduler.Event_INVERSE_OFFERS:
		if ok {
			ip.InverseOffers(e.InverseOffers.InverseOffers)
		}
		return true
	case scheduler.Event_RESCIND_INVERSE_OFFER:
		if ok {
			ip.InverseRescinded(e.RescindInverseOffer.InverseOfferID.Value)
		}
		return true
	}
	return false
}

// AcceptInverse answers inverse offers with ACCEPT_INVERSE_OFFERS: the
// framework has given back what they asked for.
func (c *Client) AcceptInverse(ids ...string) error {
	return c.call(context.Background(), calls.AcceptInverseOffers(offerIDs(ids)...))
}

// DeclineInverse answers inverse offers with DECLINE_INVERSE_OFFERS and a
// refuse filter: the master should not ask again on those agents for that
// long.
func (c *Client) DeclineInverse(refuse time.Duration, ids ...string) error {
	return c.call(context.Background(), calls.DeclineInverseOffers(offerIDs(ids)...).With(calls.RefuseSeconds(refuse)))
}

// Redeclare sends the REQUEST again with the task count set to tasks, so
// the master's view of the framework's demand follows a pool that shrank.
// Nothing is sent without a declared demand.
func (c *Client) Redeclare(tasks int) error {
	if c.cfg.Demand == nil {
		return nil
	}
	d := *c.cfg.Demand
	d.Tasks = tasks
	return c.call(context.Background(), calls.Request(demandRequest(d)))
}

func offerIDs(ids []string) []mesos.OfferID {
	out := make([]mesos.OfferID, len(ids))
	for i, id := range ids {
		out[i] = mesos.OfferID{Value: id}
	}
	return out
}
