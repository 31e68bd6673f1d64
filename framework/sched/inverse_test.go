package sched

import (
	"context"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// inversePlanner is a fakePlanner that records inverse offers.
type inversePlanner struct {
	fakePlanner
	imu       sync.Mutex
	offers    []string
	rescinded []string
}

func (p *inversePlanner) InverseOffers(offers []mesos.InverseOffer) {
	p.imu.Lock()
	defer p.imu.Unlock()
	for _, o := range offers {
		p.offers = append(p.offers, o.OfferID.Value+"@"+o.GetAgentID().GetValue())
	}
}

func (p *inversePlanner) InverseRescinded(id string) {
	p.imu.Lock()
	defer p.imu.Unlock()
	p.rescinded = append(p.rescinded, id)
}

var _ InversePlanner = (*inversePlanner)(nil)

// TestInverseOffers: INVERSE_OFFERS and RESCIND_INVERSE_OFFER reach a
// planner that hears them (and are ignored by one that does not), and the
// planner's answers go out as ACCEPT_INVERSE_OFFERS and
// DECLINE_INVERSE_OFFERS with the refuse filter.
func TestInverseOffers(t *testing.T) {
	agent := mesos.AgentID{Value: "a1"}
	inv := &scheduler.Event{Type: scheduler.Event_INVERSE_OFFERS, InverseOffers: &scheduler.Event_InverseOffers{InverseOffers: []mesos.InverseOffer{
		{OfferID: mesos.OfferID{Value: "io-1"}, AgentID: &agent, FrameworkID: mesos.FrameworkID{Value: "fw"}}}}}
	rescind := &scheduler.Event{Type: scheduler.Event_RESCIND_INVERSE_OFFER, RescindInverseOffer: &scheduler.Event_RescindInverseOffer{InverseOfferID: mesos.OfferID{Value: "io-1"}}}
	ctx := context.Background()

	plain := newFake()
	pc := newClient(t, &fakePlanner{}, plain, nil)
	pc.handle(ctx, plain, subscribed("fw"))
	if err := pc.handle(ctx, plain, inv); err != nil {
		t.Fatalf("a planner without inverse offers: %v", err)
	}

	f := newFake()
	p := &inversePlanner{}
	c := newClient(t, p, f, nil)
	c.handle(ctx, f, subscribed("fw"))
	c.handle(ctx, f, inv)
	c.handle(ctx, f, rescind)
	if len(p.offers) != 1 || p.offers[0] != "io-1@a1" || len(p.rescinded) != 1 || p.rescinded[0] != "io-1" {
		t.Fatalf("planner heard offers %v, rescinded %v", p.offers, p.rescinded)
	}
	if err := c.AcceptInverse("io-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeclineInverse(5*time.Second, "io-2", "io-3"); err != nil {
		t.Fatal(err)
	}
	acc, dec := f.find(scheduler.Call_ACCEPT_INVERSE_OFFERS), f.find(scheduler.Call_DECLINE_INVERSE_OFFERS)
	if len(acc) != 1 || len(acc[0].AcceptInverseOffers.InverseOfferIDs) != 1 || acc[0].AcceptInverseOffers.InverseOfferIDs[0].Value != "io-1" {
		t.Fatalf("ACCEPT_INVERSE_OFFERS calls: %v", acc)
	}
	if len(dec) != 1 || len(dec[0].DeclineInverseOffers.InverseOfferIDs) != 2 || dec[0].DeclineInverseOffers.Filters.GetRefuseSeconds() != 5 {
		t.Fatalf("DECLINE_INVERSE_OFFERS calls: %v", dec)
	}
}

// TestRedeclare: the REQUEST goes out again with the new task count, and
// not at all without a declared demand.
func TestRedeclare(t *testing.T) {
	ctx := context.Background()
	f := newFake()
	c := newClient(t, &fakePlanner{}, f, func(cfg *Config) {
		cfg.Demand = &Demand{Resources: []mesos.Resource{Scalar("cpus", 1)}, Tasks: 4}
	})
	c.handle(ctx, f, subscribed("fw"))
	if err := c.Redeclare(2); err != nil {
		t.Fatal(err)
	}
	reqs := f.find(scheduler.Call_REQUEST)
	if len(reqs) != 2 {
		t.Fatalf("%d REQUESTs, want the subscription's and the redeclared one", len(reqs))
	}
	if got := ScalarOf(reqs[1].Request.Requests[0].Resources, "tasks"); got != 2 {
		t.Fatalf("redeclared tasks %v, want 2", got)
	}
	if ScalarOf(reqs[0].Request.Requests[0].Resources, "tasks") != 4 {
		t.Fatal("the first REQUEST changed")
	}
	g := newFake()
	d := newClient(t, &fakePlanner{}, g, nil)
	d.handle(ctx, g, subscribed("fw"))
	d.Redeclare(2)
	if n := len(g.find(scheduler.Call_REQUEST)); n != 0 {
		t.Fatalf("%d REQUESTs without a demand", n)
	}
}
