package master

import (
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/resources"
)

// The OFFERS event, encoded straight into protobuf. An allocation cycle that
// offers every agent builds one Offer per agent; through mesos-go each was a
// mesos.Offer value, its resource list and a marshal of both, about half of
// the master's cycle (BenchmarkMasterOfferPath, docs/scale.md). Most of an
// offer is its agent's (agent id, hostname, attributes, URL) and does not
// change between cycles, so each agent keeps those fields encoded
// (agentWire) and an offer adds only its id, framework id, resources and
// allocation role. The bytes are exactly what scheduler.Event.Marshal
// writes for the same offers in the same order (offerwire_test.go checks).
// JSON streams, and events held for a framework still subscribing, take the
// mesos-go path.

// Field tags, as mesos-go's generated code writes them.
const (
	tagEventType    = 0x08 // scheduler.Event.type, varint
	tagEventOffers  = 0x1a // scheduler.Event.offers
	tagOffersOffer  = 0x0a // scheduler.Event.Offers.offers
	tagIDValue      = 0x0a // OfferID/FrameworkID/AgentID.value
	tagOfferID      = 0x0a // Offer.id
	tagOfferFw      = 0x12 // Offer.framework_id
	tagOfferAgent   = 0x1a // Offer.agent_id
	tagOfferHost    = 0x22 // Offer.hostname
	tagOfferRes     = 0x2a // Offer.resources
	tagOfferAttr    = 0x3a // Offer.attributes
	tagOfferURL     = 0x42 // Offer.url
	tagOfferUnavail = 0x4a // Offer.unavailability
	tagOfferAlloc   = 0x52 // Offer.allocation_info
	tagAllocRole    = 0x0a // Resource.AllocationInfo.role
	maxVarintLength = 10
)

// agentWire is an agent's part of every offer on it, encoded: head holds
// Offer fields 3-4 (agent id, hostname), which come before the resources,
// and tail fields 7-8 (attributes, URL), which come after. It is rebuilt
// when the agent's record (a re-registration), the URL scheme or the
// agent's maintenance unavailability changes; tail then ends with it.
type agentWire struct {
	rec        *api.AgentRecord
	scheme     string
	unavail    *mesos.Unavailability // tail's unavailability (field 9)
	head, tail []byte
	// fields is head, the Offer.resources fields of the last offer on the
	// agent and tail, contiguous, so an offer copies the agent's part in
	// one piece; res and resRole are what its resources encode. An agent
	// is offered the same resources cycle after cycle until a framework
	// takes some, so most offers reuse it.
	fields  []byte
	res     resources.Resources
	resRole string
}

// offerFields returns Offer fields 3-8 of an offer of r, allocated to
// allocRole, on this agent. Equal resources encode the same: ToMesos follows
// their order.
func (w *agentWire) offerFields(r resources.Resources, allocRole string) []byte {
	if w.fields != nil && w.resRole == allocRole && w.res.Equal(r) {
		return w.fields
	}
	res := resources.ToMesos(r, "", allocRole)
	// A new buffer, not w.fields[:0]: the cycle's earlier offers on this
	// agent hold the old one until their OFFERS events are written. Sized
	// first, so it is one allocation (the first cycle builds one per agent).
	n := len(w.head) + len(w.tail)
	for i := range res {
		n += sizeMessageField(&res[i])
	}
	enc := append(make([]byte, 0, n), w.head...)
	for i := range res {
		enc = appendMessage(enc, tagOfferRes, &res[i])
	}
	enc = append(enc, w.tail...)
	w.res, w.resRole, w.fields = r.Clone(), allocRole, enc
	return enc
}

// offerWire returns a's encoded offer fields, building them on first use.
// They are a's own (not behind a pointer): one memory wait less per offer.
// A rebuild makes new buffers, so the cycle's offers keep the old ones.
func (a *agentState) offerWire(scheme string) *agentWire {
	w := &a.wire
	if w.rec != nil && w.rec == a.rec && w.scheme == scheme && w.unavail == a.unavail {
		return w
	}
	*w = agentWire{rec: a.rec, scheme: scheme, unavail: a.unavail}
	// Each buffer sized first: one allocation apiece, for every agent in
	// the first cycle.
	id, host := a.rec.Id, a.rec.Hostname
	w.head = make([]byte, 0, sizeIDField(id)+1+protowire.SizeBytes(len(host)))
	w.head = appendIDField(w.head, tagOfferAgent, id)
	w.head = appendString(w.head, tagOfferHost, host)
	attrs, u := offerAttributes(a.rec), a.offerURL(scheme)
	n := 0
	for i := range attrs {
		n += sizeMessageField(&attrs[i])
	}
	if u != nil {
		n += sizeMessageField(u)
	}
	if a.unavail != nil {
		n += sizeMessageField(a.unavail)
	}
	w.tail = make([]byte, 0, n)
	for i := range attrs {
		w.tail = appendMessage(w.tail, tagOfferAttr, &attrs[i])
	}
	if u != nil {
		w.tail = appendMessage(w.tail, tagOfferURL, u)
	}
	if a.unavail != nil {
		w.tail = appendMessage(w.tail, tagOfferUnavail, a.unavail)
	}
	return w
}

// sizeMessageField is the size of m as a length-delimited field with a
// one-byte tag, as appendMessage writes it.
func sizeMessageField(m wireMessage) int {
	return 1 + protowire.SizeBytes(m.Size())
}

// offerAttributes is the agent's attributes as offers carry them, by name:
// one order for every offer on the agent and for both encodings.
func offerAttributes(rec *api.AgentRecord) []mesos.Attribute {
	if len(rec.Attributes) == 0 {
		return nil
	}
	out := make([]mesos.Attribute, 0, len(rec.Attributes))
	for k, v := range rec.Attributes {
		out = append(out, mesos.Attribute{Name: k, Type: mesos.TEXT, Text: &mesos.Value_Text{Value: v}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// encodeOffers returns the protobuf OFFERS event for offers, all made to fw
// in this cycle, in order and sized by prepare, in a pooled frame for fw's
// stream. Knowing the sizes, it writes the event once, straight into a frame
// of the right size: encoding into a scratch buffer and copying it out into
// a fresh exactly sized one was a fifth of the master's cycle.
func encodeOffers(fw *framework, offers []madeOffer) *api.Frame {
	return encodeOffersFor(fw.id, offers)
}

// encodeOffersFor is encodeOffers for the framework fwID, so that it needs
// no framework state (it runs after m.mu is released, offerdeliver.go).
func encodeOffersFor(fwID string, offers []madeOffer) *api.Frame {
	body := 0
	for i := range offers {
		n := offers[i].size
		body += 1 + protowire.SizeVarint(uint64(n)) + n
	}
	f := api.NewFrame(2 + maxVarintLength + body)
	b := append(f.B, tagEventType)
	b = protowire.AppendVarint(b, uint64(evOffers))
	b = append(b, tagEventOffers)
	b = protowire.AppendVarint(b, uint64(body))
	for i := range offers {
		b = appendOffer(b, fwID, &offers[i])
	}
	f.B = b
	return f
}

// allocRole is the role offer o's resources are allocated to, as its
// allocation_info names it: the role the allocator offered them to (one
// of a multi-role framework's roles), none for a framework that is not
// multi-role.
func (fw *framework) allocRole(o *offer) string {
	if fw.multiRole {
		if o.role != "" {
			return o.role
		}
		return fw.role
	}
	return ""
}

// prepare finds mo's encoded agent fields and resources for a framework fwID
// of allocRole, and the size of its Offer message. makeOfferLocked calls
// it while the agent's state is in the cache, so encodeOffers does not
// fetch it again.
func (mo *madeOffer) prepare(fwID, allocRole, scheme string) {
	mo.allocRole = allocRole
	if mo.offer.reserved != nil {
		mo.fields = mo.agent.offerWire(scheme).reservedOfferFields(mo.offer, allocRole) // resvoffers.go
	} else {
		mo.fields = mo.agent.offerWire(scheme).offerFields(mo.offer.res, allocRole)
	}
	n := sizeIDFieldLen(mo.offer.idLen()) + sizeIDField(fwID) + len(mo.fields)
	if allocRole != "" {
		n += 1 + protowire.SizeBytes(1+protowire.SizeBytes(len(allocRole)))
	}
	mo.size = n
}

// appendOffer appends one prepared Offer as field 1 of
// scheduler.Event.Offers.
func appendOffer(b []byte, fwID string, mo *madeOffer) []byte {
	allocRole := mo.allocRole
	idLen := mo.offer.idLen()
	b = append(b, tagOffersOffer)
	b = protowire.AppendVarint(b, uint64(mo.size))
	b = append(b, tagOfferID)
	b = protowire.AppendVarint(b, uint64(1+protowire.SizeBytes(idLen)))
	b = append(b, tagIDValue)
	b = protowire.AppendVarint(b, uint64(idLen))
	b = mo.offer.appendID(b)
	b = appendIDField(b, tagOfferFw, fwID)
	b = append(b, mo.fields...)
	if allocRole != "" {
		b = append(b, tagOfferAlloc)
		b = protowire.AppendVarint(b, uint64(1+protowire.SizeBytes(len(allocRole))))
		b = appendString(b, tagAllocRole, allocRole)
	}
	return b
}

// sizeIDField is the encoded size of an OfferID, FrameworkID or AgentID
// field (a message holding one string) with its one-byte tag.
func sizeIDField(v string) int { return sizeIDFieldLen(len(v)) }

// sizeIDFieldLen is sizeIDField of a string of n bytes.
func sizeIDFieldLen(n int) int {
	return 1 + protowire.SizeBytes(1+protowire.SizeBytes(n))
}

func appendIDField(b []byte, tag byte, v string) []byte {
	b = append(b, tag)
	b = protowire.AppendVarint(b, uint64(1+protowire.SizeBytes(len(v))))
	return appendString(b, tagIDValue, v)
}

func appendString(b []byte, tag byte, v string) []byte {
	b = append(b, tag)
	b = protowire.AppendVarint(b, uint64(len(v)))
	return append(b, v...)
}

// wireMessage is what appendMessage needs of a mesos-go message.
type wireMessage interface {
	Size() int
	MarshalTo([]byte) (int, error)
}

// appendMessage appends m as a length-delimited field. mesos-go's
// MarshalTo fails only on a buffer too small, which Size rules out.
func appendMessage(b []byte, tag byte, m wireMessage) []byte {
	n := m.Size()
	b = append(b, tag)
	b = protowire.AppendVarint(b, uint64(n))
	start := len(b)
	b = append(b, make([]byte, n)...)
	m.MarshalTo(b[start:])
	return b
}
