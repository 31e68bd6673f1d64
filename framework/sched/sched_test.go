package sched

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// fakeCaller records calls; SUBSCRIBE answers with a stream fed from
// events (closing the channel ends the stream).
type fakeCaller struct {
	mu     sync.Mutex
	calls  []*scheduler.Call
	events chan *scheduler.Event
}

func newFake() *fakeCaller { return &fakeCaller{events: make(chan *scheduler.Event, 16)} }

func (f *fakeCaller) Call(ctx context.Context, c *scheduler.Call) (mesos.Response, error) {
	f.mu.Lock()
	cp := *c
	f.calls = append(f.calls, &cp)
	events := f.events
	f.mu.Unlock()
	if c.Type == scheduler.Call_SUBSCRIBE {
		return &fakeStream{events: events, ctx: ctx}, nil
	}
	return &fakeStream{}, nil
}

func (f *fakeCaller) types() []scheduler.Call_Type {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []scheduler.Call_Type
	for _, c := range f.calls {
		out = append(out, c.Type)
	}
	return out
}

func (f *fakeCaller) find(t scheduler.Call_Type) []*scheduler.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*scheduler.Call
	for _, c := range f.calls {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

type fakeStream struct {
	events chan *scheduler.Event
	ctx    context.Context
}

func (s *fakeStream) Close() error { return nil }
func (s *fakeStream) Decode(u encoding.Unmarshaler) error {
	if s.events == nil {
		return io.EOF
	}
	select {
	case e, ok := <-s.events:
		if !ok {
			return io.EOF
		}
		b, _ := e.Marshal()
		return u.Unmarshal(b)
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

// fakePlanner takes offers whose id is in take, wants what want says.
type fakePlanner struct {
	mu      sync.Mutex
	want    bool
	take    map[string]bool
	tasks   map[string]string
	updates []mesos.TaskStatus
	// declined records OnDecline reports: offers and refuse filter.
	declined [][2]float64
}

func (p *fakePlanner) Offers(offers []mesos.Offer) []Launch {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Launch
	for _, o := range offers {
		if p.take[o.ID.Value] {
			out = append(out, Launch{Offer: o.ID, Tasks: []mesos.TaskInfo{{Name: "t", TaskID: mesos.TaskID{Value: "t-" + o.ID.Value}, AgentID: o.AgentID}}})
		}
	}
	return out
}
func (p *fakePlanner) Update(st mesos.TaskStatus) {
	p.mu.Lock()
	p.updates = append(p.updates, st)
	p.mu.Unlock()
}
func (p *fakePlanner) Wants() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.want
}
func (p *fakePlanner) Tasks() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for k, v := range p.tasks {
		out[k] = v
	}
	return out
}

// waitFor polls the in-process fakes every 2ms, for up to 5s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testcluster.WaitEvery(t, 5*time.Second, 2*time.Millisecond, what, cond)
}

func subscribed(id string) *scheduler.Event {
	return &scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{FrameworkID: &mesos.FrameworkID{Value: id}}}
}

func offer(id string) mesos.Offer {
	return mesos.Offer{ID: mesos.OfferID{Value: id}, AgentID: mesos.AgentID{Value: "a1"}, FrameworkID: mesos.FrameworkID{Value: "fw"}, Hostname: "h"}
}

func newClient(t *testing.T, p Planner, f *fakeCaller, mod func(*Config)) *Client {
	cfg := Config{Masters: []string{"m:5050"}, Caller: func(string) calls.Caller { return f }, Logf: func(string, ...any) {},
		ReconcileBackoff: 5 * time.Millisecond, ReconnectBackoffMax: 10 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// policyCase is a planner that wants offers or not, the events the client
// handles for it, and what the calls it made must show.
type policyCase struct {
	name   string
	want   bool
	demand *Demand
	events []*scheduler.Event
	check  func(t *testing.T, f *fakeCaller, p *fakePlanner)
}

// policyCases cover demand, suppression, declines and acknowledgements.
var policyCases = []policyCase{
	{name: "subscribe declares demand, reconciles and suppresses when idle", demand: &Demand{Resources: []mesos.Resource{Scalar("cpus", 1)}, Tasks: 3},
		events: []*scheduler.Event{subscribed("fw")},
		check: func(t *testing.T, f *fakeCaller, p *fakePlanner) {
			waitFor(t, "RECONCILE", func() bool { return len(f.find(scheduler.Call_RECONCILE)) == 1 })
			rq := f.find(scheduler.Call_REQUEST)
			if len(rq) != 1 || ScalarOf(rq[0].Request.Requests[0].Resources, "tasks") != 3 || ScalarOf(rq[0].Request.Requests[0].Resources, "cpus") != 1 {
				t.Fatalf("REQUEST = %v, want cpus 1 and tasks 3", rq)
			}
			if n := len(f.find(scheduler.Call_SUPPRESS)); n != 1 {
				t.Fatalf("%d SUPPRESS calls, want 1 (planner wants nothing): %v", n, f.types())
			}
		}},
	{name: "a busy framework does not suppress", want: true, events: []*scheduler.Event{subscribed("fw")},
		check: func(t *testing.T, f *fakeCaller, p *fakePlanner) {
			if n := len(f.find(scheduler.Call_SUPPRESS)); n != 0 {
				t.Fatalf("SUPPRESS while wanting offers: %v", f.types())
			}
		}},
	{name: "unused offers are declined at once with the refuse filter", want: true,
		events: []*scheduler.Event{subscribed("fw"), {Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: []mesos.Offer{offer("o1"), offer("o2"), offer("o3")}}}},
		check: func(t *testing.T, f *fakeCaller, p *fakePlanner) {
			acc := f.find(scheduler.Call_ACCEPT)
			if len(acc) != 1 || acc[0].Accept.OfferIDs[0].Value != "o2" {
				t.Fatalf("ACCEPT = %v, want one for o2", acc)
			}
			dec := f.find(scheduler.Call_DECLINE)
			if len(dec) != 1 || len(dec[0].Decline.OfferIDs) != 2 || dec[0].Decline.Filters.GetRefuseSeconds() != 7 {
				t.Fatalf("DECLINE = %v, want o1 and o3 with refuse_seconds 7", dec)
			}
			if dec[0].FrameworkID.GetValue() != "fw" {
				t.Fatalf("DECLINE without the framework id")
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if len(p.declined) != 1 || p.declined[0] != [2]float64{2, 7} {
				t.Fatalf("OnDecline reports %v, want one call for 2 offers refused for 7s", p.declined)
			}
		}},
	{name: "every update with a uuid is acknowledged", want: true,
		events: []*scheduler.Event{subscribed("fw"),
			{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t1"}, AgentID: &mesos.AgentID{Value: "a1"}, State: mesos.TASK_RUNNING.Enum(), UUID: []byte("u1")}}},
			{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t2"}, State: mesos.TASK_LOST.Enum()}}}},
		check: func(t *testing.T, f *fakeCaller, p *fakePlanner) {
			waitFor(t, "ACKNOWLEDGE", func() bool { return len(f.find(scheduler.Call_ACKNOWLEDGE)) >= 1 })
			acks := f.find(scheduler.Call_ACKNOWLEDGE)
			if len(acks) != 1 || string(acks[0].Acknowledge.UUID) != "u1" || acks[0].Acknowledge.AgentID.Value != "a1" {
				t.Fatalf("ACKNOWLEDGE = %v, want one for u1 (reconciliation answers carry no uuid)", acks)
			}
			if len(p.updates) != 2 {
				t.Fatalf("planner saw %d updates, want 2", len(p.updates))
			}
		}},
}

func TestPolicy(t *testing.T) {
	for _, tc := range policyCases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			p := &fakePlanner{want: tc.want, take: map[string]bool{"o2": true}}
			c := newClient(t, p, f, func(cfg *Config) {
				cfg.Demand = tc.demand
				cfg.RefuseSeconds = 7 * time.Second
				cfg.OnDecline = func(n int, refuse, held time.Duration) {
					p.mu.Lock()
					p.declined = append(p.declined, [2]float64{float64(n), refuse.Seconds()})
					p.mu.Unlock()
				}
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go c.acker(ctx)
			for _, e := range tc.events {
				if err := c.handle(ctx, f, e); err != nil {
					t.Fatal(err)
				}
			}
			tc.check(t, f, p)
		})
	}
}

func TestWakeRevivesThenSuppresses(t *testing.T) {
	f := newFake()
	p := &fakePlanner{}
	c := newClient(t, p, f, nil)
	ctx := context.Background()
	c.handle(ctx, f, subscribed("fw"))
	if !c.Suppressed() {
		t.Fatal("idle framework not suppressed after subscribing")
	}
	p.mu.Lock()
	p.want = true
	p.mu.Unlock()
	c.Wake()
	c.Wake() // idempotent: one REVIVE
	if c.Suppressed() || len(f.find(scheduler.Call_REVIVE)) != 1 {
		t.Fatalf("want exactly one REVIVE after Wake: %v", f.types())
	}
	p.mu.Lock()
	p.want = false
	p.mu.Unlock()
	c.Wake()
	if !c.Suppressed() || len(f.find(scheduler.Call_SUPPRESS)) != 2 {
		t.Fatalf("want a second SUPPRESS once idle again: %v", f.types())
	}
}

func TestReconcileRetriesUntilEveryTaskReports(t *testing.T) {
	f := newFake()
	p := &fakePlanner{want: true, tasks: map[string]string{"t1": "a1", "t2": "a2"}}
	c := newClient(t, p, f, nil)
	c.reconcileDone = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.handle(ctx, f, subscribed("fw"))
	waitFor(t, "a retried RECONCILE", func() bool { return len(f.find(scheduler.Call_RECONCILE)) >= 3 })
	first := f.find(scheduler.Call_RECONCILE)[0]
	if len(first.Reconcile.Tasks) != 2 {
		t.Fatalf("first RECONCILE asks for %d tasks, want 2", len(first.Reconcile.Tasks))
	}
	c.handle(ctx, f, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t1"}, State: mesos.TASK_RUNNING.Enum()}}})
	waitFor(t, "a RECONCILE for t2 only", func() bool {
		rs := f.find(scheduler.Call_RECONCILE)
		last := rs[len(rs)-1]
		return len(last.Reconcile.Tasks) == 1 && last.Reconcile.Tasks[0].TaskID.Value == "t2"
	})
	c.handle(ctx, f, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t2"}, State: mesos.TASK_RUNNING.Enum()}}})
	select {
	case <-c.reconcileDone:
	case <-time.After(5 * time.Second):
		t.Fatal("reconciliation did not stop once every task reported")
	}
}

func TestResubscribesWithSameID(t *testing.T) {
	f := newFake()
	p := &fakePlanner{}
	c := newClient(t, p, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	f.events <- subscribed("fw-7")
	waitFor(t, "SUBSCRIBED", func() bool { return c.ID() == "fw-7" })
	// The stream breaks (master failover): the next SUBSCRIBE must carry the id.
	old := f.events
	f.mu.Lock()
	f.events = make(chan *scheduler.Event, 16)
	f.mu.Unlock()
	close(old)
	waitFor(t, "a second SUBSCRIBE", func() bool { return len(f.find(scheduler.Call_SUBSCRIBE)) == 2 })
	subs := f.find(scheduler.Call_SUBSCRIBE)
	if subs[0].Subscribe.FrameworkInfo.GetID() != nil {
		t.Fatalf("first SUBSCRIBE carries an id")
	}
	if got := subs[1].Subscribe.FrameworkInfo.GetID().GetValue(); got != "fw-7" || subs[1].FrameworkID.GetValue() != "fw-7" {
		t.Fatalf("re-SUBSCRIBE with id %q, want fw-7", got)
	}
	if ft := subs[1].Subscribe.FrameworkInfo.GetFailoverTimeout(); ft != 60 {
		t.Fatalf("failover_timeout = %v, want the 60s default", ft)
	}
	cancel()
	<-done
}

func TestNewRejectsBadConfig(t *testing.T) {
	if _, err := New(Config{}, &fakePlanner{}); err == nil {
		t.Fatal("no masters accepted")
	}
	if _, err := New(Config{Masters: []string{"x"}}, nil); err == nil {
		t.Fatal("nil planner accepted")
	}
}

func TestAskLeader(t *testing.T) {
	// A follower answers /redirect with 307 and the leader in Location, in
	// the scheme-relative form allot and Mesos use; a leader (or a master
	// that cannot tell) answers otherwise and is used as it is.
	follower := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/redirect" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Location", "//127.0.0.9:5050/redirect")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer follower.Close()
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	defer leader.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadAddr := strings.TrimPrefix(dead.URL, "http://")
	dead.Close()
	cases := []struct{ name, master, want string }{
		{"follower names the leader", strings.TrimPrefix(follower.URL, "http://"), "127.0.0.9:5050"},
		{"leader answers itself", strings.TrimPrefix(leader.URL, "http://"), strings.TrimPrefix(leader.URL, "http://")},
		{"unreachable master is tried as it is", deadAddr, deadAddr},
		{"a master named with its scheme keeps it", follower.URL, "http://127.0.0.9:5050"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := AskLeader(context.Background(), c.master); got != c.want {
				t.Fatalf("AskLeader(%s) = %q, want %q", c.master, got, c.want)
			}
		})
	}
}

// With SubscribeSuppressed the SUBSCRIBE names the role suppressed, the
// REQUEST goes before any REVIVE, and a framework that wants offers
// revives right after it.
func TestSubscribeSuppressedRequestsBeforeRevive(t *testing.T) {
	for _, c := range []struct {
		name       string
		suppressed bool
		want       string
	}{
		{"suppressed until the demand is declared", true, "SUBSCRIBE REQUEST REVIVE"},
		{"default: unsuppressed from the start", false, "SUBSCRIBE REQUEST"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			p := &fakePlanner{want: true}
			cl := newClient(t, p, f, func(cfg *Config) {
				cfg.SubscribeSuppressed = c.suppressed
				cfg.Demand = &Demand{Tasks: 1}
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- cl.Run(ctx) }()
			f.events <- subscribed("fw")
			waitFor(t, "REQUEST", func() bool { return len(f.find(scheduler.Call_REQUEST)) == 1 })
			if c.suppressed {
				waitFor(t, "REVIVE", func() bool { return len(f.find(scheduler.Call_REVIVE)) == 1 })
			}
			var got []string
			for _, typ := range f.types() {
				if typ != scheduler.Call_RECONCILE {
					got = append(got, typ.String())
				}
			}
			if s := strings.Join(got, " "); s != c.want {
				t.Errorf("calls %q, want %q", s, c.want)
			}
			roles := f.find(scheduler.Call_SUBSCRIBE)[0].Subscribe.SuppressedRoles
			if c.suppressed != (len(roles) == 1 && roles[0] == "*") {
				t.Errorf("SUBSCRIBE suppressed roles %v", roles)
			}
			cancel()
			<-done
		})
	}
}
