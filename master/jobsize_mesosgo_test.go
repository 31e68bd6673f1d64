package master

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/apierrors"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/api"
)

// sizedMesosGo is a mesos-go httpsched framework that declares its job's
// size in FrameworkInfo labels and declines every offer for an hour,
// noting in which order (across frameworks: seq) each agent was offered.
type sizedMesosGo struct {
	name   string
	info   mesos.FrameworkInfo
	caller calls.Caller
	seq    *offerSeq
	mu     sync.Mutex
	id     string
	offers map[string]int // agent id -> seq of its first offer
	done   chan struct{}
}

// offerSeq numbers OFFERS events across frameworks in arrival order.
type offerSeq struct {
	mu sync.Mutex
	n  int
}

func (s *offerSeq) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.n
}

func subscribeSized(t *testing.T, addr, name string, js *api.JobSize, seq *offerSeq) *sizedMesosGo {
	t.Helper()
	f := &sizedMesosGo{name: name, seq: seq, offers: map[string]int{}, done: make(chan struct{}), caller: httpsched.NewCaller(httpcli.New(
		httpcli.Endpoint("http://"+addr+"/api/v1/scheduler"),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second))),
	))}
	ctx, cancel := context.WithCancel(context.Background())
	f.info = mesos.FrameworkInfo{User: "root", Name: name, Labels: &mesos.Labels{Labels: api.JobSizeLabels(js)}}
	resp, err := f.caller.Call(ctx, calls.Subscribe(&f.info))
	if err != nil {
		cancel()
		t.Fatalf("SUBSCRIBE %s: %v", name, err)
	}
	go func() {
		defer close(f.done)
		defer resp.Close()
		for {
			var e scheduler.Event
			if resp.Decode(&e) != nil {
				return
			}
			f.handle(ctx, t, &e)
		}
	}()
	t.Cleanup(func() { cancel(); <-f.done })
	waitUntil(t, name+" SUBSCRIBED", func() bool { return f.ID() != "" })
	return f
}

func (f *sizedMesosGo) handle(ctx context.Context, t *testing.T, e *scheduler.Event) {
	switch e.Type {
	case scheduler.Event_SUBSCRIBED:
		f.mu.Lock()
		f.id = e.Subscribed.FrameworkID.Value
		f.mu.Unlock()
	case scheduler.Event_OFFERS:
		n := f.seq.next()
		var ids []mesos.OfferID
		f.mu.Lock()
		for _, o := range e.Offers.Offers {
			if _, seen := f.offers[o.AgentID.Value]; !seen {
				f.offers[o.AgentID.Value] = n
			}
			ids = append(ids, o.ID)
		}
		id := f.id
		f.mu.Unlock()
		decline := calls.Decline(ids...).With(calls.RefuseSeconds(time.Hour))
		decline.FrameworkID = &mesos.FrameworkID{Value: id} // as mesos-go's callrules.WithFrameworkID would
		if err := calls.CallNoData(ctx, f.caller, decline); err != nil && ctx.Err() == nil {
			t.Errorf("%s: DECLINE through mesos-go: %v", f.name, err)
		}
	}
}

// call sends c as f through mesos-go.
func (f *sizedMesosGo) call(c *scheduler.Call) error {
	c.FrameworkID = &mesos.FrameworkID{Value: f.ID()}
	return calls.CallNoData(context.Background(), f.caller, c)
}

// declare replaces f's job-size labels with UPDATE_FRAMEWORK.
func (f *sizedMesosGo) declare(js *api.JobSize) error {
	info := f.info
	info.ID = &mesos.FrameworkID{Value: f.ID()}
	info.Labels = api.WithJobSize(info.Labels, js)
	return f.call(calls.UpdateFramework(info))
}

func (f *sizedMesosGo) ID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.id
}

// offered is the seq of agent's first offer to f, 0 if none yet.
func (f *sizedMesosGo) offered(agent string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.offers[agent]
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// orderOfOffers waits until every framework was offered agent and returns
// their names in the order they were.
func orderOfOffers(t *testing.T, agent string, fws ...*sizedMesosGo) []string {
	t.Helper()
	waitUntil(t, "offers of agent "+agent+" to every framework", func() bool {
		for _, f := range fws {
			if f.offered(agent) == 0 {
				return false
			}
		}
		return true
	})
	sorted := slices.Clone(fws)
	slices.SortFunc(sorted, func(a, b *sizedMesosGo) int { return a.offered(agent) - b.offered(agent) })
	var names []string
	for _, f := range sorted {
		names = append(names, f.name)
	}
	return names
}

// skipClock is the wall clock plus an offset the test moves forward: time
// passes as it does, and a test can make more of it pass at once.
type skipClock struct{ off atomic.Int64 }

func (c *skipClock) Now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

func (c *skipClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

func (c *skipClock) skip(d time.Duration) { c.off.Add(int64(d)) }

// A master on a loopback port under --sorter fspy and three mesos-go
// frameworks that declare their job sizes only through FrameworkInfo
// labels: a (1e6 MB x s, first), b (10 less, but subscribing after a was
// served alone for a while), c (half a's size, last). A new agent is
// offered by smallest remaining virtual size: c, a, b, neither in
// subscription order (a b c) nor by declared size (c b a).
func TestJobSizeLabelsOrderOffersWithMesosGo(t *testing.T) {
	clock := &skipClock{}
	m := startMasterWith(t, Config{Listen: "127.0.0.1:0", WorkDir: t.TempDir(), AllocationInterval: 20 * time.Millisecond, Log: zerolog.Nop(), Sorter: "fspy", Clock: clock})
	waitUntil(t, "leadership", m.leader.Load)
	agent := func() string {
		id, err := m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER,
			Agent: &api.AgentRecord{Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:4096"}}, newFakeStream(t, api.Protobuf).Stream)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	first := agent()
	seq := &offerSeq{}
	a := subscribeSized(t, m.Addr(), "a", known("a1", 1e6, 4096), seq)
	// a's head start: a second of the master's time alone, at 4,096 MB of
	// virtual memory: far more than b's 10 MB x s less, whatever the host's
	// speed (the wall clock alone may move only microseconds here).
	waitUntil(t, "a's offer of the first agent", func() bool { return a.offered(first) > 0 })
	clock.skip(time.Second)
	b := subscribeSized(t, m.Addr(), "b", known("b1", 1e6-10, 4096), seq)
	c := subscribeSized(t, m.Addr(), "c", known("c1", 5e5, 4096), seq)
	orderOfOffers(t, first, a, b, c) // in subscription order: only one was there at a time
	if got := orderOfOffers(t, agent(), a, b, c); !slices.Equal(got, []string{"c", "a", "b"}) {
		t.Fatalf("a new agent was offered in the order %v, want c a b (smallest remaining virtual size first)", got)
	}

	// Through mesos-go's own calls: b's next job is tiny (UPDATE_FRAMEWORK
	// replaces the head job), a prediction for a's job arrives (REQUEST,
	// eq. 10: a drops below c).
	if err := b.declare(known("b2", 1e3, 4096)); err != nil {
		t.Fatalf("UPDATE_FRAMEWORK through mesos-go: %v", err)
	}
	pred := &api.JobSize{Job: "a1", Kind: api.JobSizePredicted, SizeMbS: 1e5, ApbMb: 4096}
	if err := a.call(calls.Request(mesos.Request{Resources: []mesos.Resource{api.JobSizeResource(pred)}})); err != nil {
		t.Fatalf("REQUEST through mesos-go: %v", err)
	}
	if got := orderOfOffers(t, agent(), a, b, c); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Fatalf("after b's new job and a's prediction a new agent was offered in the order %v, want b a c", got)
	}

	// A bad label is refused with a 400 that names it. (mesos-go v0.0.11's
	// httpsched then drops its own subscription, as after any 400; the
	// master keeps c's stream and serves the others.)
	bad := known("c2", 1, 4096)
	bad.AmMb = 8192
	err := c.declare(bad)
	if !apierrors.CodeMalformedRequest.Matches(err) || !strings.Contains(err.Error(), "label "+api.JobAMLabel+": ") {
		t.Fatalf("UPDATE_FRAMEWORK with am above apb through mesos-go: %v, want a 400 naming %s", err, api.JobAMLabel)
	}
	if err := a.declare(known("a2", 10, 4096)); err != nil {
		t.Fatalf("the master stopped serving after a 400: %v", err)
	}
}
