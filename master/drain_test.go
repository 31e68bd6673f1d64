package master

import (
	"strings"
	"testing"
	"time"

	gogotypes "github.com/gogo/protobuf/types"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// operator sends an operator call as an unauthenticated caller (no ACLs).
func (h *harness) operator(c *mmaster.Call) (*mmaster.Response, error) {
	return h.m.operatorCallAs(auth.Subject{}, c)
}

// agentEntry is the agent's GET_AGENTS entry.
func (h *harness) agentEntry(id string) mmaster.Response_GetAgents_Agent {
	h.t.Helper()
	resp, err := h.operator(&mmaster.Call{Type: mmaster.Call_GET_AGENTS})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, a := range resp.GetAgents.Agents {
		if a.AgentInfo.ID.Value == id {
			return a
		}
	}
	h.t.Fatalf("GET_AGENTS does not list agent %s", id)
	return mmaster.Response_GetAgents_Agent{}
}

// runningTasks launches tasks on the agent's one offer and reports each
// TASK_RUNNING.
func (h *harness) runningTasks(fw *fakeFramework, agentID string, tasks ...mesos.TaskInfo) {
	h.t.Helper()
	if err := h.call(fw, launchCall(h.offer(fw), &mesos.Filters{RefuseSeconds: floatPtr(0)}, tasks...)); err != nil {
		h.t.Fatalf("ACCEPT: %v", err)
	}
	for _, tk := range tasks {
		if err := h.agentUpdate(agentID, fw.id, tk.TaskID.Value, mesos.TASK_RUNNING, "run-"+tk.TaskID.Value); err != nil {
			h.t.Fatal(err)
		}
	}
}

func floatPtr(f float64) *float64 { return &f }

func TestDrainGrace(t *testing.T) {
	sec := func(n int64) *mesos.DurationInfo { return &mesos.DurationInfo{Nanoseconds: n * int64(time.Second)} }
	tests := []struct {
		name string
		kp   *mesos.KillPolicy
		max  *mesos.DurationInfo
		want int64
	}{
		{"no cap: the task's own policy", &mesos.KillPolicy{GracePeriod: sec(30)}, nil, 0},
		{"no cap, no policy", nil, nil, 0},
		{"policy longer than the cap", &mesos.KillPolicy{GracePeriod: sec(30)}, sec(5), int64(5 * time.Second)},
		{"policy within the cap", &mesos.KillPolicy{GracePeriod: sec(2)}, sec(5), 0},
		{"no policy under a cap", nil, sec(5), int64(5 * time.Second)},
		{"cap of zero kills at once", &mesos.KillPolicy{GracePeriod: sec(2)}, sec(0), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := drainGrace(tc.kp, tc.max); got != tc.want {
				t.Fatalf("drainGrace = %d, want %d", got, tc.want)
			}
		})
	}
}

// A drained agent is offered no more (its outstanding offer is rescinded),
// its tasks are killed with their kill policy capped by max_grace_period,
// it stays DRAINING (and may not be reactivated) until every task's end is
// acknowledged, then is DRAINED, and once reactivated is offered again.
func TestDrainAgentKillsItsTasksAndEndsDrained(t *testing.T) {
	h := newHarness(t, nil)
	agentID, as := h.agent("cpus:4;mem:4096")
	fw := h.framework("drained")
	long := commandTask("t1", agentID, 1, 512)
	long.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(time.Minute)}}
	short := commandTask("t2", agentID, 1, 512)
	short.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(time.Second)}}
	h.runningTasks(fw, agentID, long, short)
	h.allocate()
	if h.outstanding(fw) != 1 {
		t.Fatalf("outstanding offers before the drain: %d, want the rest of the agent", h.outstanding(fw))
	}

	if _, err := h.operator(&mmaster.Call{Type: mmaster.Call_DRAIN_AGENT, DrainAgent: &mmaster.Call_DrainAgent{
		AgentID: mesos.AgentID{Value: agentID}, MaxGracePeriod: &gogotypes.Duration{Seconds: 10}}}); err != nil {
		t.Fatalf("DRAIN_AGENT: %v", err)
	}
	fw.nextEvent(t, scheduler.Event_RESCIND)
	grace := map[string]int64{}
	for range 2 {
		ev := as.nextAgentEvent(t, api.AgentEventType_KILL)
		grace[ev.TaskId] = ev.GraceNanos
	}
	if grace["t1"] != int64(10*time.Second) || grace["t2"] != 0 {
		t.Fatalf("KILL grace periods %v, want t1 capped at 10s and t2 its own (0: the task's policy)", grace)
	}
	h.allocate()
	if n := h.outstanding(fw); n != 0 {
		t.Fatalf("a DRAINING agent was offered: %d outstanding offers", n)
	}
	e := h.agentEntry(agentID)
	if !e.GetDeactivated() || e.Active || e.GetDrainInfo().GetState() != mesos.DrainState_DRAINING ||
		e.GetDrainInfo().Config.GetMaxGracePeriod().GetNanoseconds() != int64(10*time.Second) {
		t.Fatalf("GET_AGENTS while draining: deactivated %v active %v drain_info %v", e.GetDeactivated(), e.Active, e.GetDrainInfo())
	}
	_, err := h.operator(&mmaster.Call{Type: mmaster.Call_REACTIVATE_AGENT, ReactivateAgent: &mmaster.Call_ReactivateAgent{AgentID: mesos.AgentID{Value: agentID}}})
	if err == nil || !strings.Contains(err.Error(), "Agent is still in the DRAINING state") {
		t.Fatalf("REACTIVATE_AGENT while draining: %v, want 400 Agent is still in the DRAINING state", err)
	}

	for _, id := range []string{"t1", "t2"} {
		if err := h.agentUpdate(agentID, fw.id, id, mesos.TASK_KILLED, "end-"+id); err != nil {
			t.Fatal(err)
		}
		if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_ACKNOWLEDGE, Acknowledge: &scheduler.Call_Acknowledge{
			AgentID: mesos.AgentID{Value: agentID}, TaskID: mesos.TaskID{Value: id}, UUID: []byte("end-" + id)}}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); h.agentEntry(agentID).DrainInfo.GetState() != mesos.DrainState_DRAINED; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("agent not DRAINED after its tasks' ends were acknowledged: %v", h.agentEntry(agentID).DrainInfo)
		}
		h.allocate()
	}
	if n := h.outstanding(fw); n != 0 {
		t.Fatalf("a DRAINED agent was offered: %d outstanding offers", n)
	}
	if _, err := h.operator(&mmaster.Call{Type: mmaster.Call_REACTIVATE_AGENT, ReactivateAgent: &mmaster.Call_ReactivateAgent{AgentID: mesos.AgentID{Value: agentID}}}); err != nil {
		t.Fatalf("REACTIVATE_AGENT: %v", err)
	}
	if o := h.offer(fw); scalarsOf(o.Resources)["cpus"] != 4 {
		t.Fatalf("offer after reactivation: %v, want the whole agent", o.Resources)
	}
}

// A deactivated agent keeps its tasks and is offered nothing until
// reactivated; the calls' errors are Mesos's.
func TestDeactivateAgent(t *testing.T) {
	h := newHarness(t, nil)
	agentID, as := h.agent("cpus:4;mem:4096")
	fw := h.framework("deact")
	h.runningTasks(fw, agentID, commandTask("t1", agentID, 1, 512))
	h.allocate()
	errs := []struct {
		call *mmaster.Call
		want string
	}{
		{&mmaster.Call{Type: mmaster.Call_DEACTIVATE_AGENT, DeactivateAgent: &mmaster.Call_DeactivateAgent{AgentID: mesos.AgentID{Value: "nope"}}}, "Unknown agent"},
		{&mmaster.Call{Type: mmaster.Call_DEACTIVATE_AGENT}, "Expecting 'deactivate_agent' to be present"},
		{&mmaster.Call{Type: mmaster.Call_REACTIVATE_AGENT, ReactivateAgent: &mmaster.Call_ReactivateAgent{AgentID: mesos.AgentID{Value: agentID}}}, "Agent is not deactivated"},
		{&mmaster.Call{Type: mmaster.Call_DRAIN_AGENT, DrainAgent: &mmaster.Call_DrainAgent{AgentID: mesos.AgentID{Value: "nope"}}}, "Unknown agent"},
	}
	for _, e := range errs {
		_, err := h.operator(e.call)
		if he, ok := err.(*api.HTTPError); !ok || he.Code != 400 || !strings.Contains(err.Error(), e.want) {
			t.Errorf("%s: %v, want 400 %q", e.call.Type, err, e.want)
		}
	}
	if _, err := h.operator(&mmaster.Call{Type: mmaster.Call_DEACTIVATE_AGENT, DeactivateAgent: &mmaster.Call_DeactivateAgent{AgentID: mesos.AgentID{Value: agentID}}}); err != nil {
		t.Fatalf("DEACTIVATE_AGENT: %v", err)
	}
	fw.nextEvent(t, scheduler.Event_RESCIND)
	h.allocate()
	if n := h.outstanding(fw); n != 0 {
		t.Fatalf("a deactivated agent was offered: %d outstanding offers", n)
	}
	h.m.mu.Lock()
	state := h.m.stateAgentsLocked()[0].State
	h.m.mu.Unlock()
	if state != agentDeactivated {
		t.Fatalf("/state agent state %q, want deactivated", state)
	}
	if _, err := h.operator(&mmaster.Call{Type: mmaster.Call_REACTIVATE_AGENT, ReactivateAgent: &mmaster.Call_ReactivateAgent{AgentID: mesos.AgentID{Value: agentID}}}); err != nil {
		t.Fatalf("REACTIVATE_AGENT: %v", err)
	}
	if o := h.offer(fw); scalarsOf(o.Resources)["cpus"] != 3 {
		t.Fatalf("offer after reactivation: %v, want what t1 leaves", o.Resources)
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	for _, f := range as.frames[as.next:] {
		var ev api.AgentEvent
		if proto.Unmarshal(f, &ev) == nil && ev.Type == api.AgentEventType_KILL {
			t.Fatalf("deactivation killed a task: %v", f)
		}
	}
}
