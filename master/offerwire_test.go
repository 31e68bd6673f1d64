package master

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/resources"
)

// TestOfferEncoderMatchesMesosGo checks that the OFFERS event the master
// encodes itself is byte for byte what mesos-go marshals for the same
// offers, and that it decodes back to them.
func TestOfferEncoderMatchesMesosGo(t *testing.T) {
	long := strings.Repeat("x", 200) // lengths past one varint byte
	cases := []struct {
		name      string
		multiRole bool
		role      string
		fwID      string
		offers    int
		res       string
		res2      string // if set, every other offer's, so an agent's resources change
		address   string
		hostname  string
		attrs     map[string]string
		masterID  string // "master" if empty
		seqBase   uint64 // the first offer's sequence number
		unavail   bool   // the agents are on a DRAINING machine: offers carry the window
	}{
		{name: "one offer", fwID: "fw-1", offers: 1, res: "cpus:2;mem:1024", address: "10.0.0.1:5051", hostname: "a1"},
		{name: "resources change", fwID: "fw-7", offers: 12, res: "cpus:2;mem:1024;ports:[1-5]", res2: "cpus:1;mem:1024;ports:[1-2,4-5]", address: "h:5051", hostname: "a7"},
		{name: "ports and extras", fwID: "fw-2", offers: 3, res: "cpus:24;mem:4096;disk:4096;gpus:1;fpgas:2;ports:[31000-32000,33000-33010]", address: "h:5051", hostname: "a2"},
		{name: "multi-role", multiRole: true, role: "analytics", fwID: "fw-3", offers: 2, res: "cpus:1.5;mem:64", address: "h:5051", hostname: "a3"},
		{name: "attributes in name order", fwID: "fw-4", offers: 2, res: "cpus:1", address: "h:5051", hostname: "a4",
			attrs: map[string]string{"rack": "r1", "zone": "z9", "arch": "amd64", "os": "linux"}},
		{name: "no port: no URL", fwID: "fw-5", offers: 1, res: "mem:32", address: "nohostport", hostname: "a5"},
		{name: "long ids", fwID: long, offers: 2, res: "cpus:4", address: long + ":1", hostname: long, masterID: long, seqBase: math.MaxUint64 - 1},
		{name: "sequence numbers across digit counts", fwID: "fw-8", offers: 12, res: "cpus:1", address: "h:5051", hostname: "a8", seqBase: 995},
		{name: "maintenance unavailability", fwID: "fw-9", offers: 4, res: "cpus:2", address: "h:5051", hostname: "a9", unavail: true,
			attrs: map[string]string{"rack": "r2"}},
		{name: "event past two varint bytes", fwID: "fw-6", offers: 400, res: "cpus:24;mem:4096;disk:4096;ports:[31000-32000]", address: "h:5051", hostname: "a6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &Master{}
			fw := &framework{id: tc.fwID, multiRole: tc.multiRole, role: tc.role}
			var agents [3]*agentState
			for i := range agents {
				agents[i] = &agentState{rec: &api.AgentRecord{Id: fmt.Sprintf("agent-%d-%s", i, tc.hostname), Hostname: tc.hostname, Address: tc.address, Attributes: tc.attrs}}
				if tc.unavail {
					agents[i].unavail = &mesos.Unavailability{Start: mesos.TimeInfo{Nanoseconds: 1_700_000_000e9 + int64(i)}, Duration: &mesos.DurationInfo{Nanoseconds: 3600e9}}
				}
			}
			masterID := tc.masterID
			if masterID == "" {
				masterID = "master"
			}
			var made []madeOffer
			for i := 0; i < tc.offers; i++ {
				a := agents[i%len(agents)]
				res := tc.res
				if tc.res2 != "" && i%2 == 1 {
					res = tc.res2
				}
				o := &offer{seq: tc.seqBase + uint64(i), master: masterID, stamp: "-T17", fw: fw.id, agent: a.rec.Id, res: resources.MustParse(res)}
				made = append(made, madeOffer{offer: o, agent: a})
			}
			// The second pass reuses the agents' cached fields; the
			// third is for a framework of another role.
			for pass := 0; pass < 3; pass++ {
				if pass == 2 {
					fw.multiRole, fw.role = true, "other"
				}
				checkOffersEncoding(t, m, fw, made)
			}
		})
	}
}

// checkOffersEncoding checks that encodeOffers writes what mesos-go
// marshals for made, and that it decodes back to the same offers.
func checkOffersEncoding(t *testing.T, m *Master, fw *framework, made []madeOffer) {
	t.Helper()
	want := &schedEvent{Type: evOffers, Offers: &schedOffers{}}
	for _, mo := range made {
		want.Offers.Offers = append(want.Offers.Offers, m.mesosOfferLocked(fw, mo.agent, mo.offer))
	}
	wantB, err := want.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for i := range made {
		made[i].prepare(fw.id, fw.allocRole(made[i].offer), m.scheme())
	}
	got := encodeOffers(fw, made).B
	if !bytes.Equal(got, wantB) {
		t.Fatalf("encoded %d bytes, mesos-go %d; they differ", len(got), len(wantB))
	}
	var back scheduler.Event
	if err := back.Unmarshal(got); err != nil {
		t.Fatal(err)
	}
	if !back.Equal(want) {
		t.Fatal("decoded event differs from the offers")
	}
}

// TestAgentWireFollowsRecord checks that an agent's cached offer fields are
// rebuilt when it re-registers with a new record or the URL scheme changes.
func TestAgentWireFollowsRecord(t *testing.T) {
	a := &agentState{rec: &api.AgentRecord{Id: "a", Hostname: "old", Address: "h:1"}}
	head1 := a.offerWire("http").head
	if h := a.offerWire("http").head; &h[0] != &head1[0] {
		t.Fatal("the same record and scheme rebuilt the fields")
	}
	a.rec = &api.AgentRecord{Id: "a", Hostname: "new", Address: "h:2"}
	w2 := a.offerWire("http")
	if !bytes.Contains(w2.head, []byte("new")) || !bytes.Contains(head1, []byte("old")) {
		t.Fatalf("a new record kept the old fields (%q), or changed the old ones (%q)", w2.head, head1)
	}
	tail2 := w2.tail
	w3 := a.offerWire("https")
	if !bytes.Contains(w3.tail, []byte("https")) || bytes.Contains(tail2, []byte("https")) {
		t.Fatalf("a new scheme kept the old URL (%q), or changed the old one (%q)", w3.tail, tail2)
	}
	tail3 := w3.tail
	a.unavail = &mesos.Unavailability{Start: mesos.TimeInfo{Nanoseconds: 42}}
	if w4 := a.offerWire("https"); len(w4.tail) <= len(tail3) {
		t.Fatalf("a maintenance window left the fields as they were (%q)", w4.tail)
	}
}
