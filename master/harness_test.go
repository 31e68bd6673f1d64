package master

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// The in-process harness: a master without HTTP listeners, allocation loop
// or background goroutines of its own. Its registry is a lone raft (in-memory
// transport, bolt log in a temp dir), its time a manualClock, and every
// scheduler and agent connection a fakeStream that collects what the master
// sends. Tests drive the allocation cycle by hand (harness.allocate), so what
// a cycle offers is decided by the test, not by a ticker.

var _ Clock = (*manualClock)(nil)

// manualClock is a Clock that moves only when Advance is called. Due
// AfterFunc callbacks run inside Advance on the caller's goroutine, in time
// order, with no lock of the clock's held (they take m.mu themselves).
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	c             *manualClock
	at            time.Time
	f             func()
	stopped, done bool
}

func newManualClock() *manualClock { return &manualClock{now: time.Unix(1_700_000_000, 0)} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped && !t.done
	t.stopped = true
	return was
}

// Advance moves the clock by d and runs the callbacks that fell due.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due, left []*manualTimer
	for _, t := range c.timers {
		switch {
		case t.stopped || t.done:
		case !t.at.After(c.now):
			t.done = true
			due = append(due, t)
		default:
			left = append(left, t)
		}
	}
	c.timers = left
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		t.f()
	}
}

// fakeStream is the client end of one master stream: api.Stream.Serve
// writes into it as into an HTTP response, and it splits what arrives into
// RecordIO frames.
type fakeStream struct {
	*api.Stream
	mu     sync.Mutex
	buf    []byte
	frames [][]byte
	next   int // frames before next were consumed by the test
	hdr    http.Header
}

func newFakeStream(t testing.TB, c api.Codec) *fakeStream {
	s := &fakeStream{Stream: api.NewStream(c, 4096), hdr: http.Header{}}
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx)
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.Stream.Serve(s, r, true, nil)
	}()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	return s
}

func (s *fakeStream) Header() http.Header { return s.hdr }
func (s *fakeStream) WriteHeader(int)     {}

func (s *fakeStream) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, b...)
	for {
		nl := -1
		for i, c := range s.buf {
			if c == '\n' {
				nl = i
				break
			}
		}
		if nl < 0 {
			break
		}
		n, err := strconv.Atoi(string(s.buf[:nl]))
		if err != nil || len(s.buf) < nl+1+n {
			break
		}
		s.frames = append(s.frames, append([]byte(nil), s.buf[nl+1:nl+1+n]...))
		s.buf = s.buf[nl+1+n:]
	}
	return len(b), nil
}

// take waits (up to 5 s of real time: the stream's writer is a goroutine)
// for the next unconsumed frame that decode accepts, consuming the frames
// up to it.
func (s *fakeStream) take(t testing.TB, what string, decode func([]byte) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		for s.next < len(s.frames) {
			f := s.frames[s.next]
			s.next++
			if decode(f) {
				s.mu.Unlock()
				return
			}
		}
		s.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no %s arrived on the stream within 5 s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// nextEvent returns the next scheduler event of type typ, skipping others.
func (s *fakeStream) nextEvent(t testing.TB, typ scheduler.Event_Type) scheduler.Event {
	t.Helper()
	var ev scheduler.Event
	s.take(t, typ.String()+" event", func(b []byte) bool {
		ev = scheduler.Event{}
		return s.Codec.Unmarshal(b, &ev) == nil && ev.Type == typ
	})
	return ev
}

// nextAgentEvent returns the next agent-protocol command of type typ.
func (s *fakeStream) nextAgentEvent(t testing.TB, typ api.AgentEventType) *api.AgentEvent {
	t.Helper()
	var ev api.AgentEvent
	s.take(t, typ.String()+" agent event", func(b []byte) bool {
		proto.Reset(&ev)
		return proto.Unmarshal(b, &ev) == nil && ev.Type == typ
	})
	return &ev
}

// harness is one in-process master.
type harness struct {
	t     testing.TB
	m     *Master
	clock *manualClock
}

// newHarness builds and elects a master; cfg may adjust its configuration.
func newHarness(t testing.TB, cfg func(*Config)) *harness {
	t.Helper()
	clock := newManualClock()
	c := Config{WorkDir: t.TempDir(), Clock: clock, Log: zerolog.Nop(), AllocationInterval: time.Second}
	if cfg != nil {
		cfg(&c)
	}
	m, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	m.info = masterInfo(m.id, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5050})
	if err := m.openReplication(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.mu.Lock()
		m.resetLiveLocked("test over")
		m.mu.Unlock()
		m.rep.close()
	})
	if err := m.leadAlone(); err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, m: m, clock: clock}
}

// agent registers an agent with the given resources ("cpus:4;mem:4096").
func (h *harness) agent(res string) (string, *fakeStream) {
	h.t.Helper()
	s := newFakeStream(h.t, api.Protobuf)
	id, err := h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER,
		Agent: &api.AgentRecord{Hostname: "agent", Address: "127.0.0.1:5051", Resources: res}}, s.Stream)
	if err != nil {
		h.t.Fatal(err)
	}
	if ev := s.nextAgentEvent(h.t, api.AgentEventType_REGISTERED); ev.AgentId != id {
		h.t.Fatalf("REGISTERED names agent %q, want %q", ev.AgentId, id)
	}
	return id, s
}

// fakeFramework is a subscribed scheduler.
type fakeFramework struct {
	id, streamID string
	*fakeStream
}

func (h *harness) framework(name string) *fakeFramework {
	h.t.Helper()
	s := newFakeStream(h.t, api.JSON)
	ft := 60.0
	info := mesos.FrameworkInfo{User: "test", Name: name, FailoverTimeout: &ft}
	id, sid, err := h.m.admitFramework("", info, nil, s.Stream)
	if err != nil {
		h.t.Fatal(err)
	}
	if ev := s.nextEvent(h.t, scheduler.Event_SUBSCRIBED); ev.Subscribed.FrameworkID.Value != id {
		h.t.Fatalf("SUBSCRIBED names framework %q, want %q", ev.Subscribed.FrameworkID.Value, id)
	}
	return &fakeFramework{id: id, streamID: sid, fakeStream: s}
}

// call sends a scheduler call as fw, as the HTTP handler would.
func (h *harness) call(fw *fakeFramework, c *scheduler.Call) error {
	c.FrameworkID = &mesos.FrameworkID{Value: fw.id}
	return h.m.schedulerCall(fw.streamID, c)
}

// allocate runs one allocation cycle.
func (h *harness) allocate() { h.m.allocate() }

// outstanding is the number of offers the master holds for fw.
func (h *harness) outstanding(fw *fakeFramework) int {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if f := h.m.frameworks[fw.id]; f != nil {
		return len(f.offers)
	}
	return 0
}

// offer runs a cycle and returns the one offer fw must get from it.
func (h *harness) offer(fw *fakeFramework) mesos.Offer {
	h.t.Helper()
	h.allocate()
	ev := fw.nextEvent(h.t, scheduler.Event_OFFERS)
	if n := len(ev.Offers.Offers); n != 1 {
		h.t.Fatalf("OFFERS carries %d offers, want 1", n)
	}
	return ev.Offers.Offers[0]
}

func scalarRes(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

// scalarsOf sums an offer's scalar resources by name.
func scalarsOf(rs []mesos.Resource) map[string]float64 {
	out := map[string]float64{}
	for _, r := range rs {
		if r.GetType() == mesos.SCALAR {
			out[r.Name] += r.GetScalar().GetValue()
		}
	}
	return out
}
