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
	tagOfferAlloc   = 0x52 // Offer.allocation_info
	tagAllocRole    = 0x0a // Resource.AllocationInfo.role
	maxVarintLength = 10
)

// agentWire is an agent's part of every offer on it, encoded: head holds
// Offer fields 3-4 (agent id, hostname), which come before the resources,
// and tail fields 7-8 (attributes, URL), which come after. It is rebuilt
// when the agent's record (a re-registration) or the URL scheme changes.
type agentWire struct {
	rec        *api.AgentRecord
	scheme     string
	head, tail []byte
	// resEnc is the Offer.resources fields of the last offer on the
	// agent, res and resRole what they encode. An agent is offered the same
	// resources cycle after cycle until a framework takes some, so most
	// offers reuse them.
	res     resources.Resources
	resRole string
	resEnc  []byte
}

// encodedResources returns r, allocated to allocRole, as Offer.resources
// fields. Equal resources encode the same: ToMesos follows their order.
func (w *agentWire) encodedResources(r resources.Resources, allocRole string) []byte {
	if w.resEnc != nil && w.resRole == allocRole && w.res.Equal(r) {
		return w.resEnc
	}
	res := resources.ToMesos(r, "", allocRole)
	enc := w.resEnc[:0]
	for i := range res {
		enc = appendMessage(enc, tagOfferRes, &res[i])
	}
	w.res, w.resRole, w.resEnc = r.Clone(), allocRole, enc
	return enc
}

// offerWire returns a's encoded offer fields, building them on first use.
func (a *agentState) offerWire(scheme string) *agentWire {
	if w := a.wire; w != nil && w.rec == a.rec && w.scheme == scheme {
		return w
	}
	w := &agentWire{rec: a.rec, scheme: scheme}
	w.head = appendIDField(w.head, tagOfferAgent, a.rec.Id)
	w.head = appendString(w.head, tagOfferHost, a.rec.Hostname)
	for _, at := range offerAttributes(a.rec) {
		w.tail = appendMessage(w.tail, tagOfferAttr, &at)
	}
	if u := a.offerURL(scheme); u != nil {
		w.tail = appendMessage(w.tail, tagOfferURL, u)
	}
	a.wire = w
	return w
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

// offerEncoder builds OFFERS events for one cycle. Its scratch buffer is
// reused from framework to framework; each event is then copied out
// exactly sized, because the stream keeps it until its writer runs.
type offerEncoder struct {
	scratch []byte
}

// encode returns the protobuf OFFERS event for offers, all made to fw in
// this cycle, in order.
func (e *offerEncoder) encode(fw *framework, offers []madeOffer, scheme string) []byte {
	allocRole := ""
	if fw.multiRole {
		allocRole = fw.role
	}
	body := e.scratch[:0]
	for _, mo := range offers {
		body = e.appendOffer(body, fw.id, allocRole, mo, scheme)
	}
	e.scratch = body
	out := make([]byte, 0, 2+maxVarintLength+protowire.SizeBytes(len(body)))
	out = append(out, tagEventType)
	out = protowire.AppendVarint(out, uint64(evOffers))
	out = append(out, tagEventOffers)
	out = protowire.AppendVarint(out, uint64(len(body)))
	return append(out, body...)
}

// appendOffer appends one Offer as field 1 of scheduler.Event.Offers.
func (e *offerEncoder) appendOffer(b []byte, fwID, allocRole string, mo madeOffer, scheme string) []byte {
	w := mo.agent.offerWire(scheme)
	res := w.encodedResources(mo.offer.res, allocRole)
	n := sizeIDField(mo.offer.id) + sizeIDField(fwID) + len(w.head) + len(res) + len(w.tail)
	if allocRole != "" {
		n += 1 + protowire.SizeBytes(1+protowire.SizeBytes(len(allocRole)))
	}
	b = append(b, tagOffersOffer)
	b = protowire.AppendVarint(b, uint64(n))
	b = appendIDField(b, tagOfferID, mo.offer.id)
	b = appendIDField(b, tagOfferFw, fwID)
	b = append(b, w.head...)
	b = append(b, res...)
	b = append(b, w.tail...)
	if allocRole != "" {
		b = append(b, tagOfferAlloc)
		b = protowire.AppendVarint(b, uint64(1+protowire.SizeBytes(len(allocRole))))
		b = appendString(b, tagAllocRole, allocRole)
	}
	return b
}

// sizeIDField is the encoded size of an OfferID, FrameworkID or AgentID
// field (a message holding one string) with its one-byte tag.
func sizeIDField(v string) int {
	return 1 + protowire.SizeBytes(1+protowire.SizeBytes(len(v)))
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
