package master

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/allot-sched/allot/api"
)

func launchCall(o mesos.Offer, filters *mesos.Filters, tasks ...mesos.TaskInfo) *scheduler.Call {
	return &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{
		OfferIDs: []mesos.OfferID{o.ID}, Filters: filters,
		Operations: []mesos.Offer_Operation{{Type: mesos.Offer_Operation_LAUNCH,
			Launch: &mesos.Offer_Operation_Launch{TaskInfos: tasks}}}}}
}

func commandTask(id, agent string, cpus, mem float64) mesos.TaskInfo {
	sh := "true"
	return mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: mesos.AgentID{Value: agent},
		Command:   &mesos.CommandInfo{Value: &sh},
		Resources: []mesos.Resource{scalarRes("cpus", cpus), scalarRes("mem", mem)}}
}

func refuse(s float64) *mesos.Filters { return &mesos.Filters{RefuseSeconds: &s} }

// An accepted offer launches: the agent gets RUN with the task, the master
// records it STAGING (live state, registry, metrics), the offer is gone,
// and what the task did not use comes back in a later offer once the
// accept's filter expires.
func TestAcceptLaunchesOnAgent(t *testing.T) {
	h := newHarness(t, nil)
	agentID, agent := h.agent("cpus:4;mem:4096")
	fw := h.framework("accept")
	o := h.offer(fw)
	if got := scalarsOf(o.Resources); got["cpus"] != 4 || got["mem"] != 4096 || o.AgentID.Value != agentID {
		t.Fatalf("offer %v on %s, want the whole agent %s", got, o.AgentID.Value, agentID)
	}

	if err := h.call(fw, launchCall(o, refuse(5), commandTask("t1", agentID, 1, 1024))); err != nil {
		t.Fatalf("ACCEPT: %v", err)
	}
	run := agent.nextAgentEvent(t, api.AgentEventType_RUN)
	var ti mesos.TaskInfo
	if err := ti.Unmarshal(run.Task); err != nil || ti.TaskID.Value != "t1" || run.FrameworkId != fw.id {
		t.Fatalf("RUN for framework %q task %q (%v), want %s/t1", run.FrameworkId, ti.TaskID.Value, err, fw.id)
	}
	h.m.mu.Lock()
	tk := h.m.frameworks[fw.id].tasks["t1"]
	offers := len(h.m.offers)
	h.m.mu.Unlock()
	if tk == nil || tk.state != mesos.TASK_STAGING || tk.agent != agentID {
		t.Fatalf("task recorded as %+v, want STAGING on %s", tk, agentID)
	}
	if offers != 0 {
		t.Errorf("%d offers outstanding after the accept, want 0", offers)
	}
	if n := testutil.ToFloat64(h.m.m.tasksLaunched); n != 1 {
		t.Errorf("tasks launched metric %v, want 1", n)
	}
	waitRegistryTask(t, h, fw.id, "t1")

	// The remainder is filtered for the accept's 5 s, then offered.
	h.allocate()
	if n := h.outstanding(fw); n != 0 {
		t.Fatalf("%d offers within the accept's filter, want none", n)
	}
	h.clock.Advance(6 * time.Second)
	if got := scalarsOf(h.offer(fw).Resources); got["cpus"] != 3 || got["mem"] != 3072 {
		t.Errorf("remainder offered as %v, want cpus 3, mem 3072", got)
	}
}

func waitRegistryTask(t *testing.T, h *harness, fwID, taskID string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, rec := range h.m.reg.Tasks() {
			if rec.FrameworkId == fwID && rec.TaskId == taskID {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("task %s/%s never reached the registry", fwID, taskID)
}

// A declined offer's resources are not offered to the framework again
// until the decline's filter expires on the master's clock; then they are.
func TestDeclineFilter(t *testing.T) {
	tests := []struct {
		name    string
		filters *mesos.Filters
		quiet   time.Duration // still filtered this long after the decline
		expires time.Duration // offered again this long after the decline
	}{
		{"refuse 10 s", refuse(10), 9 * time.Second, 11 * time.Second},
		{"default 5 s", nil, 4 * time.Second, 6 * time.Second},
		{"refuse 60 s", refuse(60), 59 * time.Second, 61 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.agent("cpus:2;mem:2048")
			fw := h.framework("decline")
			o := h.offer(fw)
			err := h.call(fw, &scheduler.Call{Type: scheduler.Call_DECLINE,
				Decline: &scheduler.Call_Decline{OfferIDs: []mesos.OfferID{o.ID}, Filters: tc.filters}})
			if err != nil {
				t.Fatalf("DECLINE: %v", err)
			}
			h.allocate()
			if n := h.outstanding(fw); n != 0 {
				t.Fatalf("re-offered at once despite the filter (%d offers)", n)
			}
			h.clock.Advance(tc.quiet)
			h.allocate()
			if n := h.outstanding(fw); n != 0 {
				t.Fatalf("re-offered after %v, inside the filter (%d offers)", tc.quiet, n)
			}
			h.clock.Advance(tc.expires - tc.quiet)
			again := h.offer(fw)
			if again.ID == o.ID {
				t.Errorf("re-offer reuses offer id %s", o.ID.Value)
			}
			if got := scalarsOf(again.Resources); got["cpus"] != 2 || got["mem"] != 2048 {
				t.Errorf("re-offered %v, want the declined cpus 2, mem 2048", got)
			}
		})
	}
}

// An outstanding offer is rescinded (RESCIND with its id, gone from the
// offer table) when its agent disconnects or when it times out.
func TestOfferRescind(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		rescind func(h *harness, agentID string, agent *fakeStream)
		after   func(t *testing.T, h *harness, agentID string, fw *fakeFramework)
	}{
		{"agent disconnects", 0,
			func(h *harness, id string, s *fakeStream) { h.m.agentDisconnected(id, s.Stream) },
			func(t *testing.T, h *harness, id string, fw *fakeFramework) {
				// Not back within --agent-ping-timeout: removed.
				h.clock.Advance(h.m.cfg.AgentPingTimeout)
				h.m.mu.Lock()
				_, still := h.m.agents[id]
				h.m.mu.Unlock()
				if still {
					t.Errorf("agent %s still registered after the ping timeout", id)
				}
			}},
		{"offer times out", 30 * time.Second,
			func(h *harness, _ string, _ *fakeStream) { h.clock.Advance(31 * time.Second) },
			func(t *testing.T, h *harness, id string, fw *fakeFramework) {
				// Rescinded resources come back: the next cycle offers them.
				if o := h.offer(fw); o.AgentID.Value != id {
					t.Errorf("re-offer on agent %s, want %s", o.AgentID.Value, id)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.OfferTimeout = tc.timeout })
			agentID, agent := h.agent("cpus:2;mem:2048")
			fw := h.framework("rescind")
			o := h.offer(fw)
			tc.rescind(h, agentID, agent)
			ev := fw.nextEvent(t, scheduler.Event_RESCIND)
			if ev.Rescind.OfferID != o.ID {
				t.Fatalf("RESCIND for %s, want %s", ev.Rescind.OfferID.Value, o.ID.Value)
			}
			if n := h.outstanding(fw); n != 0 {
				t.Fatalf("%d offers outstanding after the rescind", n)
			}
			tc.after(t, h, agentID, fw)
		})
	}
}

// An allocation cycle that runs while a subscribing framework's id is being
// committed (m.mu is free then) must not put OFFERS on the stream before
// SUBSCRIBED: mesos-go's clients answer such an offer with an ACCEPT that
// has no framework id. The offer is held and follows SUBSCRIBED.
func TestSubscribedPrecedesOffers(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("cpus:4;mem:4096")
	h.m.hookBeforeSubscribed = func() { h.allocate() }
	s := newFakeStream(t, api.JSON)
	ft := 60.0
	id, _, err := h.m.admitFramework("", mesos.FrameworkInfo{User: "test", Name: "early", FailoverTimeout: &ft}, nil, s.Stream)
	if err != nil {
		t.Fatal(err)
	}
	var first scheduler.Event
	s.take(t, "first event", func(b []byte) bool {
		return s.Codec.Unmarshal(b, &first) == nil
	})
	if first.Type != scheduler.Event_SUBSCRIBED {
		t.Fatalf("first event on the stream is %s, want SUBSCRIBED", first.Type)
	}
	if ev := s.nextEvent(t, scheduler.Event_OFFERS); ev.Offers.Offers[0].FrameworkID.Value != id {
		t.Fatalf("held offer is for %q, want %q", ev.Offers.Offers[0].FrameworkID.Value, id)
	}
}
