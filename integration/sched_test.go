package integration

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// sched is a framework written the way mesos-go users write them: httpsched
// for the connection, scheduler/calls to build calls, the encoding package
// to read the event stream. It records everything and acknowledges updates.
type sched struct {
	t      testing.TB
	caller calls.Caller
	cancel context.CancelFunc
	ended  chan struct{}

	mu      sync.Mutex
	id      string
	offers  []mesos.Offer
	inverse []mesos.InverseOffer // every inverse offer received
	updates []mesos.TaskStatus
	events  []scheduler.Event_Type
	msgs    [][]byte
	err     error
	noAck   bool
	// onUpdate, if set before subscribing, sees every status update as it
	// arrives (on the event goroutine).
	onUpdate func(mesos.TaskStatus)
	// acks queues acknowledgements for a few workers, so that a burst of
	// updates does not open a connection per update.
	acks chan *scheduler.Call
	// failures are the FAILURE events heard (an agent or executor lost).
	failures []scheduler.Event_Failure
}

// startAckers runs n goroutines sending queued acknowledgements until ctx
// ends.
func (s *sched) startAckers(ctx context.Context, n int) {
	s.acks = make(chan *scheduler.Call, 1<<16)
	for i := 0; i < n; i++ {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case c := <-s.acks:
					s.call(c)
				}
			}
		}()
	}
}

// subscribeDirect subscribes with a plain mesos-go httpcli client rather
// than httpsched, reading Mesos-Stream-Id from the response; later calls go
// through a caller that sets the header, and may run concurrently (httpsched
// serialises every call, which caps a benchmark at one request in flight).
func subscribeDirect(t testing.TB, addr string, info mesos.FrameworkInfo, onUpdate func(mesos.TaskStatus)) *sched {
	t.Helper()
	endpoint := "http://" + addr + "/api/v1/scheduler"
	codec := httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf])
	sub := httpcli.New(httpcli.Endpoint(endpoint), codec, httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second))))
	resp, err := sub.Do(calls.Subscribe(&info), httpcli.Close(true))
	if err != nil {
		t.Fatalf("SUBSCRIBE: %v", err)
	}
	hr, ok := resp.(*httpcli.Response)
	if !ok || hr.Header.Get("Mesos-Stream-Id") == "" {
		t.Fatalf("SUBSCRIBE response has no Mesos-Stream-Id")
	}
	cli := httpcli.New(httpcli.Endpoint(endpoint), codec, httpcli.DefaultHeader("Mesos-Stream-Id", hr.Header.Get("Mesos-Stream-Id")),
		httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second), httpcli.Transport(func(tr *http.Transport) { tr.MaxIdleConnsPerHost = 64 }))))
	caller := calls.CallerFunc(func(ctx context.Context, c *scheduler.Call) (mesos.Response, error) {
		return cli.Do(c, httpcli.Context(ctx))
	})
	ctx, cancel := context.WithCancel(context.Background())
	s := &sched{t: t, caller: caller, cancel: cancel, ended: make(chan struct{}), onUpdate: onUpdate}
	s.startAckers(ctx, 8)
	go func() {
		<-ctx.Done()
		resp.Close()
	}()
	go func() {
		defer close(s.ended)
		for {
			var e scheduler.Event
			if err := resp.Decode(&e); err != nil {
				return
			}
			s.handle(ctx, &e)
		}
	}()
	t.Cleanup(s.close)
	testcluster.WaitFor(t, 15*time.Second, "SUBSCRIBED", func() bool { return s.ID() != "" })
	return s
}

// newCaller returns an httpsched caller speaking protobuf, or JSON if media
// is "json".
func newCaller(addr, media string) calls.Caller {
	codec := codecs.ByMediaType[codecs.MediaTypeProtobuf]
	if media == "json" {
		codec = codecs.ByMediaType[codecs.MediaTypeJSON]
	}
	return httpsched.NewCaller(httpcli.New(
		httpcli.Endpoint("http://"+addr+"/api/v1/scheduler"),
		httpcli.Codec(codec),
		httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second))),
	))
}

// subscribe starts a framework; it fails the test unless SUBSCRIBED comes.
func subscribe(t testing.TB, addr string, info mesos.FrameworkInfo) *sched {
	t.Helper()
	return subscribeWith(t, newCaller(addr, "protobuf"), info)
}

func subscribeWith(t testing.TB, caller calls.Caller, info mesos.FrameworkInfo, onUpdate ...func(mesos.TaskStatus)) *sched {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &sched{t: t, caller: caller, cancel: cancel, ended: make(chan struct{})}
	if len(onUpdate) > 0 {
		s.onUpdate = onUpdate[0]
	}
	s.startAckers(ctx, 1)
	if info.User == "" {
		info.User = "root"
	}
	resp, err := caller.Call(ctx, calls.Subscribe(&info))
	if err != nil {
		cancel()
		t.Fatalf("SUBSCRIBE: %v", err)
	}
	go func() {
		defer close(s.ended)
		defer resp.Close()
		for {
			var e scheduler.Event
			if err := resp.Decode(&e); err != nil {
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
				return
			}
			s.handle(ctx, &e)
		}
	}()
	t.Cleanup(s.close)
	testcluster.WaitFor(t, 15*time.Second, "SUBSCRIBED", func() bool { return s.ID() != "" })
	return s
}

func (s *sched) close() {
	s.cancel()
	<-s.ended
}

func (s *sched) handle(ctx context.Context, e *scheduler.Event) {
	s.mu.Lock()
	s.events = append(s.events, e.Type)
	noAck := s.noAck
	s.mu.Unlock()
	switch e.Type {
	case scheduler.Event_SUBSCRIBED:
		s.mu.Lock()
		s.id = e.Subscribed.FrameworkID.Value
		s.mu.Unlock()
	case scheduler.Event_OFFERS:
		s.mu.Lock()
		s.offers = append(s.offers, e.Offers.Offers...)
		s.mu.Unlock()
	case scheduler.Event_INVERSE_OFFERS:
		s.mu.Lock()
		s.inverse = append(s.inverse, e.InverseOffers.InverseOffers...)
		s.mu.Unlock()
	case scheduler.Event_RESCIND:
		s.mu.Lock()
		for i, o := range s.offers {
			if o.ID == e.Rescind.OfferID {
				s.offers = append(s.offers[:i], s.offers[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
	case scheduler.Event_UPDATE:
		st := e.Update.Status
		if s.onUpdate != nil {
			s.onUpdate(st)
		} else {
			s.mu.Lock()
			s.updates = append(s.updates, st)
			s.mu.Unlock()
		}
		if len(st.UUID) > 0 && !noAck {
			s.acks <- calls.Acknowledge(st.GetAgentID().GetValue(), st.TaskID.Value, st.UUID)
		}
	case scheduler.Event_MESSAGE:
		s.mu.Lock()
		s.msgs = append(s.msgs, e.Message.Data)
		s.mu.Unlock()
	case scheduler.Event_FAILURE:
		s.mu.Lock()
		s.failures = append(s.failures, *e.Failure)
		s.mu.Unlock()
	}
}

// ID is the framework id ("" before SUBSCRIBED).
func (s *sched) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// call sends a call for this framework and returns the client's error.
func (s *sched) call(c *scheduler.Call) error {
	c.FrameworkID = &mesos.FrameworkID{Value: s.ID()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return calls.CallNoData(ctx, s.caller, c)
}

// takeOffer waits for an outstanding offer (optionally on a given agent)
// and removes it from the list.
func (s *sched) takeOffer(t testing.TB, agentID string) mesos.Offer {
	t.Helper()
	var got mesos.Offer
	testcluster.WaitFor(t, 20*time.Second, "an offer", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, o := range s.offers {
			if agentID == "" || o.AgentID.Value == agentID {
				got = o
				s.offers = append(s.offers[:i], s.offers[i+1:]...)
				return true
			}
		}
		return false
	})
	return got
}

// takeOfferFits waits for an offer holding at least cpus and mem and takes
// it. A framework that follows another on the same cluster may first be
// offered only what the other one's outstanding offer left over; the rest
// comes once that framework is gone.
func (s *sched) takeOfferFits(t testing.TB, cpus, mem float64) mesos.Offer {
	t.Helper()
	var got mesos.Offer
	testcluster.WaitFor(t, 20*time.Second, fmt.Sprintf("an offer of at least cpus:%g;mem:%g", cpus, mem), func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, o := range s.offers {
			if offered(o, "cpus") >= cpus && offered(o, "mem") >= mem {
				got = o
				s.offers = append(s.offers[:i], s.offers[i+1:]...)
				return true
			}
		}
		return false
	})
	return got
}

// offered is the amount of the scalar resource name in o.
func offered(o mesos.Offer, name string) float64 {
	n := 0.0
	for _, r := range o.Resources {
		if r.Name == name && r.Scalar != nil {
			n += r.Scalar.Value
		}
	}
	return n
}

// states returns the states seen for a task, in order.
func (s *sched) states(taskID string) []mesos.TaskState {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []mesos.TaskState
	for _, u := range s.updates {
		if u.TaskID.Value == taskID {
			out = append(out, u.GetState())
		}
	}
	return out
}

func (s *sched) waitState(t testing.TB, taskID string, want mesos.TaskState) mesos.TaskStatus {
	t.Helper()
	var st mesos.TaskStatus
	testcluster.WaitFor(t, 30*time.Second, "task "+taskID+" to reach "+want.String(), func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, u := range s.updates {
			if u.TaskID.Value == taskID && u.GetState() == want {
				st = u
				return true
			}
		}
		return false
	})
	return st
}

// Builders for tasks.

func scalar(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

func cmdTask(id string, o mesos.Offer, shell string, cpus, mem float64) mesos.TaskInfo {
	return mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID,
		Command:   &mesos.CommandInfo{Value: &shell},
		Resources: []mesos.Resource{scalar("cpus", cpus), scalar("mem", mem)}}
}

func execInfo(id string) *mesos.ExecutorInfo {
	return &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: id}, Type: mesos.ExecutorInfo_CUSTOM,
		Command:   &mesos.CommandInfo{Value: &testExec, Shell: boolPtr(false)},
		Resources: []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 32)}}
}

func execTask(id string, o mesos.Offer, ex *mesos.ExecutorInfo, data string) mesos.TaskInfo {
	return mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID, Executor: ex, Data: []byte(data),
		Resources: []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 16)}}
}

func boolPtr(b bool) *bool { return &b }

func launch(o mesos.Offer, tasks ...mesos.TaskInfo) *scheduler.Call {
	return calls.Accept(calls.OfferOperations{calls.OpLaunch(tasks...)}.WithOffers(o.ID))
}

func messageCall(agentID, executorID, data string) *scheduler.Call {
	return calls.Message(agentID, executorID, []byte(data))
}

func declineCall(o mesos.Offer) *scheduler.Call { return calls.Decline(o.ID) }
