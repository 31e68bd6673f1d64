package master

import (
	"sync"

	"github.com/allot-sched/allot/api"
)

// Delivering a cycle's OFFERS events after m.mu is released.
//
// The leader's mutex profile in the scale harness (docs/scale.md, "Who
// holds the lock") named the allocation cycle as the holder of more than
// half the time calls waited for m.mu. Encoding the OFFERS events and
// queueing them on hundreds of streams (waking each stream's writer) is
// work that needs none of the master's state: an offer's id, the agent's
// encoded fields and the framework's id and role do not change once the
// offer is made. So the cycle records, under the lock, what each framework
// is to be sent (pendingOffers), and encodes and queues it after the unlock.
//
// Order. Whoever holds m.mu after the cycle may send the same framework an
// event about those very offers (a RESCIND when an offer times out or its
// agent goes, an ERROR on failover) or an UPDATE. It must reach the
// framework after the OFFERS that preceded it under the lock. So every
// send to a framework under m.mu first delivers the framework's pending
// OFFERS (deliverPendingLocked), and delivery happens exactly once,
// whichever of the cycle's goroutine and a later lock holder gets there
// first: a later event is queued only once the OFFERS is queued.

// pendingOffers is one framework's OFFERS event of a cycle, not yet
// encoded: everything encodeOffers reads, copied or immutable, so that it
// can be encoded without m.mu.
type pendingOffers struct {
	mu     sync.Mutex
	sent   bool
	stream *api.Stream
	fwID   string
	offers []madeOffer
}

// deliver encodes and queues the event once; a second call (from the other
// of the cycle and a later lock holder) waits for the first to finish, so
// that nothing it sends next can overtake the OFFERS.
func (p *pendingOffers) deliver() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sent {
		return
	}
	p.sent = true
	p.stream.SendFrame(encodeOffersFor(p.fwID, p.offers))
	// The offers and agents are no longer needed by this event.
	clear(p.offers)
	p.offers = nil
}

// offerBatch is a cycle's pending OFFERS events, one per framework, in the
// order of the frameworks' first offers.
type offerBatch []*pendingOffers

// deliver queues every event of the batch not yet queued. Called without
// m.mu by the allocation loop, or under it by offerLocked.
func (b offerBatch) deliver() {
	for _, p := range b {
		p.deliver()
	}
}

// deferOffersLocked records fw's offers of this cycle as an event to send
// once m.mu is released, and returns it. An earlier cycle's event still
// pending for fw goes first. Caller holds m.mu.
func (m *Master) deferOffersLocked(fw *framework, offers []madeOffer) *pendingOffers {
	m.deliverPendingLocked(fw)
	p := &pendingOffers{stream: fw.stream, fwID: fw.id,
		offers: append([]madeOffer(nil), offers...)}
	fw.pending = p
	return p
}

// deliverPendingLocked queues fw's pending OFFERS event, if any, before
// whatever the caller is about to send fw. Caller holds m.mu.
func (m *Master) deliverPendingLocked(fw *framework) {
	if fw == nil || fw.pending == nil {
		return
	}
	fw.pending.deliver()
	fw.pending = nil
}
