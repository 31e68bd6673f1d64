package framework

import (
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/framework/sched"
)

// The Mesos backend's side of inverse offers: the master asks
// for resources back on an agent because other frameworks wait (`allot
// master --reclaim`). That is iSpark's "others are waiting": while an
// inverse offer is outstanding, or one was seen within the last monitoring
// epoch, the scaling policy hears others wait. An inverse offer is
// ACCEPTed once a giver on its agent has been released (release), and
// DECLINEd with refuse_seconds = the epoch when it has been outstanding a
// whole epoch and the policy releases nothing there (answerInverse).

var (
	_ sched.InversePlanner = (*mesosBackend)(nil)
	_ waitSignal           = (*mesosBackend)(nil)
)

// inverseOffer is an outstanding inverse offer.
type inverseOffer struct {
	agent    string
	received time.Time
}

// InverseOffers implements sched.InversePlanner.
func (b *mesosBackend) InverseOffers(offers []mesos.InverseOffer) {
	now := b.c.clock.Now()
	b.mu.Lock()
	if b.inverse == nil {
		b.inverse = map[string]inverseOffer{}
	}
	for _, o := range offers {
		b.inverse[o.OfferID.Value] = inverseOffer{agent: o.GetAgentID().GetValue(), received: now}
	}
	b.lastInverse = now
	b.mu.Unlock()
	b.c.cfg.Logf("%d inverse offers: other frameworks wait", len(offers))
}

// InverseRescinded implements sched.InversePlanner.
func (b *mesosBackend) InverseRescinded(id string) {
	b.mu.Lock()
	delete(b.inverse, id)
	b.mu.Unlock()
}

// othersWaiting implements waitSignal.
func (b *mesosBackend) othersWaiting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.inverse) > 0 {
		return true
	}
	return !b.lastInverse.IsZero() && b.c.clock.Now().Sub(b.lastInverse) < b.epoch()
}

func (b *mesosBackend) epoch() time.Duration {
	if e := b.c.cfg.MonitorEpoch; e > 0 {
		return e
	}
	return 5 * time.Second
}

// answerInverse implements waitSignal: decline the inverse offers that
// have waited an epoch on agents where none of busy (executors being
// given back) runs.
func (b *mesosBackend) answerInverse(busy []string) {
	now := b.c.clock.Now()
	b.mu.Lock()
	giving := map[string]bool{}
	for _, id := range busy {
		if t := b.tasks[id]; t != nil {
			giving[t.agent] = true
		}
	}
	var decline []string
	for id, io := range b.inverse {
		if !giving[io.agent] && now.Sub(io.received) >= b.epoch() {
			decline = append(decline, id)
			delete(b.inverse, id)
		}
	}
	b.mu.Unlock()
	if len(decline) > 0 {
		b.client.DeclineInverse(b.epoch(), decline...)
	}
}

// acceptInverseOn accepts the inverse offers on agent, whose giver has
// just been released. Caller does not hold b.mu.
func (b *mesosBackend) acceptInverseOn(agent string) {
	b.mu.Lock()
	var accept []string
	for id, io := range b.inverse {
		if io.agent == agent {
			accept = append(accept, id)
			delete(b.inverse, id)
		}
	}
	b.mu.Unlock()
	if len(accept) > 0 {
		b.client.AcceptInverse(accept...)
	}
}

// redeclare sends the executor target as the REQUEST's task count when
// the demand follows the target (iSpark). Caller does not hold b.mu.
func (b *mesosBackend) redeclare(n int) {
	if !b.c.cfg.DemandFollowsTarget {
		return
	}
	b.mu.Lock()
	same := b.declared == n
	b.declared = n
	b.mu.Unlock()
	if !same {
		b.client.Redeclare(n)
	}
}
