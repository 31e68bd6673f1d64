package framework

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/framework/sched"
)

// recordingCaller is a master that accepts every call and records it;
// SUBSCRIBE answers with a stream that says SUBSCRIBED, then stays open.
type recordingCaller struct {
	mu    sync.Mutex
	calls []*scheduler.Call
}

func (r *recordingCaller) Call(ctx context.Context, c *scheduler.Call) (mesos.Response, error) {
	r.mu.Lock()
	cp := *c
	r.calls = append(r.calls, &cp)
	r.mu.Unlock()
	if c.Type == scheduler.Call_SUBSCRIBE {
		return &subscribedStream{ctx: ctx}, nil
	}
	return &subscribedStream{done: true}, nil
}

func (r *recordingCaller) of(t scheduler.Call_Type) []*scheduler.Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*scheduler.Call
	for _, c := range r.calls {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

type subscribedStream struct {
	ctx  context.Context
	sent bool
	done bool
}

func (s *subscribedStream) Close() error { return nil }
func (s *subscribedStream) Decode(u encoding.Unmarshaler) error {
	if s.done {
		return io.EOF
	}
	if !s.sent {
		s.sent = true
		e := &scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{FrameworkID: &mesos.FrameworkID{Value: "fw"}}}
		b, _ := e.Marshal()
		return u.Unmarshal(b)
	}
	<-s.ctx.Done()
	return s.ctx.Err()
}

// TestMesosInverseOffers: an inverse offer makes others wait until an
// epoch after the last; it is accepted when an executor on its agent is
// released, and declined with refuse_seconds = the epoch once it has waited
// an epoch with no giver there; the demand is redeclared as the target.
func TestMesosInverseOffers(t *testing.T) {
	mc := newManualClock()
	cfg := Config{MonitorEpoch: 2 * time.Second, DemandFollowsTarget: true, Logf: t.Logf, Clock: mc}
	cfg.setDefaults()
	c := &Context{cfg: cfg, clock: mc}
	b := &mesosBackend{c: c, tasks: map[string]*mesosExec{"exec-1": {agent: "a1"}, "exec-2": {agent: "a2"}}}
	rc := &recordingCaller{}
	cl, err := sched.New(sched.Config{Masters: []string{"m:5050"}, Caller: func(string) calls.Caller { return rc }, Logf: t.Logf,
		Demand: &sched.Demand{Resources: []mesos.Resource{sched.Scalar("cpus", 1)}, Tasks: 4}}, b)
	if err != nil {
		t.Fatal(err)
	}
	b.client = cl
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cl.Run(ctx)
	<-cl.Subscribed()

	if b.othersWaiting() {
		t.Fatal("others wait before any inverse offer")
	}
	a1, a2 := mesos.AgentID{Value: "a1"}, mesos.AgentID{Value: "a2"}
	b.InverseOffers([]mesos.InverseOffer{{OfferID: mesos.OfferID{Value: "io-1"}, AgentID: &a1}, {OfferID: mesos.OfferID{Value: "io-2"}, AgentID: &a2}})
	if !b.othersWaiting() {
		t.Fatal("others do not wait with inverse offers outstanding")
	}
	b.release("exec-1")
	acc := rc.of(scheduler.Call_ACCEPT_INVERSE_OFFERS)
	if len(acc) != 1 || acc[0].AcceptInverseOffers.InverseOfferIDs[0].Value != "io-1" {
		t.Fatalf("ACCEPT_INVERSE_OFFERS after releasing the executor on a1: %v", acc)
	}
	b.answerInverse(nil)
	if n := len(rc.of(scheduler.Call_DECLINE_INVERSE_OFFERS)); n != 0 {
		t.Fatal("declined before the inverse offer waited an epoch")
	}
	mc.Advance(2 * time.Second)
	b.answerInverse([]string{"exec-2"})
	if n := len(rc.of(scheduler.Call_DECLINE_INVERSE_OFFERS)); n != 0 {
		t.Fatal("declined on an agent whose executor is being given back")
	}
	b.answerInverse(nil)
	dec := rc.of(scheduler.Call_DECLINE_INVERSE_OFFERS)
	if len(dec) != 1 || dec[0].DeclineInverseOffers.InverseOfferIDs[0].Value != "io-2" || dec[0].DeclineInverseOffers.Filters.GetRefuseSeconds() != 2 {
		t.Fatalf("DECLINE_INVERSE_OFFERS after an epoch with no giver on a2: %v", dec)
	}
	if b.othersWaiting() {
		t.Fatal("others still wait an epoch after the last inverse offer, with none outstanding")
	}
	b.setTarget(1)
	reqs := rc.of(scheduler.Call_REQUEST)
	if got := sched.ScalarOf(reqs[len(reqs)-1].Request.Requests[0].Resources, "tasks"); got != 1 {
		t.Fatalf("declared tasks %v after the target dropped to 1", got)
	}
}
