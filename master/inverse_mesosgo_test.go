package master

import (
	"context"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/api"
)

// mesosGoSched is a scheduler written with mesos-go's own client library:
// httpsched over HTTP, protobuf, events decoded by mesos-go.
type mesosGoSched struct {
	caller calls.Caller
	mu     sync.Mutex
	id     string
	events []scheduler.Event
	done   chan struct{}
}

func subscribeMesosGo(t *testing.T, addr, name string) *mesosGoSched {
	t.Helper()
	s := &mesosGoSched{done: make(chan struct{}), caller: httpsched.NewCaller(httpcli.New(
		httpcli.Endpoint("http://"+addr+"/api/v1/scheduler"),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second))),
	))}
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := s.caller.Call(ctx, calls.Subscribe(&mesos.FrameworkInfo{User: "root", Name: name}))
	if err != nil {
		cancel()
		t.Fatalf("SUBSCRIBE: %v", err)
	}
	go func() {
		defer close(s.done)
		defer resp.Close()
		for {
			var e scheduler.Event
			if resp.Decode(&e) != nil {
				return
			}
			s.mu.Lock()
			if e.Type == scheduler.Event_SUBSCRIBED {
				s.id = e.Subscribed.FrameworkID.Value
			}
			s.events = append(s.events, e)
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-s.done })
	s.waitFor(t, "SUBSCRIBED", func(e *scheduler.Event) bool { return e.Type == scheduler.Event_SUBSCRIBED })
	return s
}

// waitFor polls for an event match accepts and returns it.
func (s *mesosGoSched) waitFor(t *testing.T, what string, match func(*scheduler.Event) bool) scheduler.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		for i := range s.events {
			if match(&s.events[i]) {
				e := s.events[i]
				s.mu.Unlock()
				return e
			}
		}
		s.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s within 10 s", what)
	return scheduler.Event{}
}

// A master on a loopback port with reclaim on; mesos-go's scheduler client
// receives the inverse offer, declines it with a filter, and the master
// drops it.
func TestInverseOffersWithMesosGo(t *testing.T) {
	m := startMasterWith(t, Config{Listen: "127.0.0.1:0", WorkDir: t.TempDir(), AllocationInterval: 50 * time.Millisecond, Log: zerolog.Nop(), Reclaim: true})
	waitUntil(t, "leadership", m.leader.Load)
	agentStream := newFakeStream(t, api.Protobuf)
	agentID, err := m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER,
		Agent: &api.AgentRecord{Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:4096"}}, agentStream.Stream)
	if err != nil {
		t.Fatal(err)
	}

	f1 := subscribeMesosGo(t, m.Addr(), "holder")
	f1.waitFor(t, "OFFERS", func(e *scheduler.Event) bool { return e.Type == scheduler.Event_OFFERS })
	f2 := subscribeMesosGo(t, m.Addr(), "starving")
	ev := f1.waitFor(t, "INVERSE_OFFERS", func(e *scheduler.Event) bool { return e.Type == scheduler.Event_INVERSE_OFFERS })
	io := ev.GetInverseOffers().InverseOffers[0]
	if io.FrameworkID.Value != f1.id || io.GetAgentID().GetValue() != agentID || len(io.Resources) == 0 {
		t.Fatalf("inverse offer %+v", io)
	}

	decline := calls.DeclineInverseOffers(io.OfferID)
	decline.FrameworkID = &mesos.FrameworkID{Value: f1.id} // as mesos-go's callrules.WithFrameworkID would
	refuse := 3600.0
	decline.DeclineInverseOffers.Filters = &mesos.Filters{RefuseSeconds: &refuse}
	if err := calls.CallNoData(context.Background(), f1.caller, decline); err != nil {
		t.Fatalf("DECLINE_INVERSE_OFFERS through mesos-go: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.mu.Lock()
		p := m.pressureLocked()
		m.mu.Unlock()
		if len(p.InverseOffers) == 0 && len(p.Starving) == 1 && p.Starving[0].FrameworkID == f2.id {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the decline: %+v", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
