package master

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/allot-sched/allot/api"
)

// frameworkPA subscribes a framework, partition-aware if pa.
func (h *harness) frameworkPA(name string, pa bool) *fakeFramework {
	h.t.Helper()
	s := newFakeStream(h.t, api.JSON)
	ft := 60.0
	info := mesos.FrameworkInfo{User: "test", Name: name, FailoverTimeout: &ft}
	if pa {
		info.Capabilities = []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE}}
	}
	id, sid, err := h.m.admitFramework("", info, nil, s.Stream)
	if err != nil {
		h.t.Fatal(err)
	}
	s.nextEvent(h.t, scheduler.Event_SUBSCRIBED)
	return &fakeFramework{id: id, streamID: sid, fakeStream: s}
}

// partitioned is a framework's task t1 running on an agent that then stays
// away past --agent-ping-timeout.
type partitioned struct {
	h       *harness
	fw      *fakeFramework
	agentID string
	first   mesos.TaskStatus // what the framework heard of t1 when the agent was marked unreachable
	failure scheduler.Event
}

func partition(t *testing.T, pa bool) *partitioned {
	h := newHarness(t, nil)
	agentID, as := h.agent("cpus:4;mem:4096")
	fw := h.frameworkPA("p", pa)
	if err := h.call(fw, launchCall(h.offer(fw), nil, commandTask("t1", agentID, 1, 512))); err != nil {
		t.Fatalf("ACCEPT: %v", err)
	}
	if err := h.agentUpdate(agentID, fw.id, "t1", mesos.TASK_RUNNING, "u1"); err != nil {
		t.Fatal(err)
	}
	h.updatesUntilSentinel(fw)
	h.m.agentDisconnected(agentID, as.Stream)
	h.clock.Advance(h.m.cfg.AgentPingTimeout)
	p := &partitioned{h: h, fw: fw, agentID: agentID}
	p.first = fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
	p.failure = fw.nextEvent(t, scheduler.Event_FAILURE)
	return p
}

// reregister brings the agent back reporting t1 running.
func (p *partitioned) reregister() (*fakeStream, error) {
	s := newFakeStream(p.h.t, api.Protobuf)
	running := api.TaskRecord{FrameworkId: p.fw.id, TaskId: "t1", AgentId: p.agentID, State: int32(mesos.TASK_RUNNING)}
	_, err := p.h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER, AgentId: p.agentID,
		Agent: &api.AgentRecord{Id: p.agentID, Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:4096"},
		Tasks: []*api.TaskRecord{&running}}, s.Stream)
	return s, err
}

func (p *partitioned) markGone() {
	p.h.t.Helper()
	if _, err := p.h.m.markAgentGone(&mmaster.Call_MarkAgentGone{AgentID: mesos.AgentID{Value: p.agentID}}); err != nil {
		p.h.t.Fatalf("MARK_AGENT_GONE: %v", err)
	}
}

type heard struct {
	state  mesos.TaskState
	reason mesos.TaskStatus_Reason
}

func heardOf(sts []mesos.TaskStatus) []heard {
	var out []heard
	for _, st := range sts {
		out = append(out, heard{st.GetState(), st.GetReason()})
	}
	return out
}

// A lost agent is marked unreachable: a partition-aware framework hears
// TASK_UNREACHABLE (with unreachable_time), any other TASK_LOST, both
// FAILURE naming the agent. What follows is Mesos's: the agent coming back
// brings a partition-aware framework's task back (TASK_RUNNING,
// REASON_AGENT_REREGISTERED) and kills the other's, whose end it heard;
// MARK_AGENT_GONE ends the task (TASK_GONE_BY_OPERATOR) or, for a task
// already lost, says nothing more, and the agent is refused from then on.
func TestPartitionLifecycle(t *testing.T) {
	tests := []struct {
		name       string
		pa         bool
		then       string // "back", "gone" or "gone, back"
		first      heard
		after      []heard
		killed     bool
		refused    bool
		unreachble int // unreachable_slaves in /state at the end
	}{
		{"aware, comes back", true, "back", heard{mesos.TASK_UNREACHABLE, mesos.REASON_AGENT_REMOVED},
			[]heard{{mesos.TASK_RUNNING, mesos.REASON_AGENT_REREGISTERED}}, false, false, 0},
		{"not aware, comes back", false, "back", heard{mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED}, nil, true, false, 0},
		{"aware, marked gone", true, "gone", heard{mesos.TASK_UNREACHABLE, mesos.REASON_AGENT_REMOVED},
			[]heard{{mesos.TASK_GONE_BY_OPERATOR, mesos.REASON_AGENT_REMOVED_BY_OPERATOR}}, false, true, 0},
		{"not aware, marked gone", false, "gone", heard{mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED}, nil, false, true, 0},
		{"aware, still away", true, "", heard{mesos.TASK_UNREACHABLE, mesos.REASON_AGENT_REMOVED}, nil, false, false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := partition(t, tc.pa)
			if got := (heard{p.first.GetState(), p.first.GetReason()}); got != tc.first {
				t.Errorf("when the agent was lost the framework heard %v, want %v", got, tc.first)
			}
			if tc.pa && p.first.GetUnreachableTime().GetNanoseconds() != p.h.clock.Now().UnixNano() {
				t.Errorf("unreachable_time %v, want the moment it was marked", p.first.GetUnreachableTime())
			}
			if got := p.failure.GetFailure().GetAgentID().GetValue(); got != p.agentID || p.failure.GetFailure().ExecutorID != nil {
				t.Errorf("FAILURE names agent %q executor %v, want agent %q alone", got, p.failure.GetFailure().ExecutorID, p.agentID)
			}
			var err error
			var as *fakeStream
			switch tc.then {
			case "back":
				as, err = p.reregister()
			case "gone":
				p.markGone()
				_, err = p.reregister()
			}
			var he *api.HTTPError
			if refused := errors.As(err, &he) && he.Code == http.StatusGone; refused != tc.refused || err != nil && !refused {
				t.Errorf("re-registering: %v, want refused %v", err, tc.refused)
			}
			if tc.killed {
				if ev := as.nextAgentEvent(t, api.AgentEventType_KILL); ev.TaskId != "t1" {
					t.Errorf("KILL of %q, want t1", ev.TaskId)
				}
			}
			if got := heardOf(p.h.updatesUntilSentinel(p.fw)); !equalHeard(got, tc.after) {
				t.Errorf("then the framework heard %v, want %v", got, tc.after)
			}
			p.h.m.mu.Lock()
			n := len(p.h.m.stateUnreachableLocked())
			tasks := p.h.m.getTasksLocked()
			p.h.m.mu.Unlock()
			if n != tc.unreachble {
				t.Errorf("%d unreachable agents listed, want %d", n, tc.unreachble)
			}
			if got := testutil.ToFloat64(unreachableAgentsGauge(p.h.m)); got != float64(tc.unreachble) {
				t.Errorf("allot_master_agents_unreachable %v, want %d", got, tc.unreachble)
			}
			// GET_TASKS lists a task still unreachable in unreachable_tasks.
			if got, want := len(tasks.UnreachableTasks), tc.unreachble; got != want {
				t.Errorf("GET_TASKS lists %d unreachable tasks, want %d", got, want)
			}
		})
	}
}

func equalHeard(a, b []heard) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Explicit reconciliation of a task on an unreachable, admitted, gone or
// unknown agent answers as Mesos's master does, TASK_LOST throughout to a
// framework that is not partition-aware.
func TestPartitionReconcile(t *testing.T) {
	tests := []struct {
		name  string
		pa    bool
		task  string
		agent string // "away" (the partitioned agent), "other" (an admitted one), "gone", "" or "nobody"
		want  mesos.TaskState
	}{
		{"its task, agent unreachable", true, "t1", "away", mesos.TASK_UNREACHABLE},
		{"unknown task, agent unreachable", true, "x", "away", mesos.TASK_UNREACHABLE},
		{"unknown task, admitted agent", true, "x", "other", mesos.TASK_GONE},
		{"unknown task, gone agent", true, "x", "gone", mesos.TASK_GONE_BY_OPERATOR},
		{"unknown task, no agent", true, "x", "", mesos.TASK_UNKNOWN},
		{"unknown task, unknown agent", true, "x", "nobody", mesos.TASK_UNKNOWN},
		{"not aware: its lost task, agent unreachable", false, "t1", "away", mesos.TASK_LOST},
		{"not aware: unknown task, admitted agent", false, "x", "other", mesos.TASK_LOST},
		{"not aware: unknown task, no agent", false, "x", "", mesos.TASK_LOST},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := partition(t, tc.pa)
			agent := tc.agent
			switch agent {
			case "away":
				agent = p.agentID
			case "other":
				agent, _ = p.h.agent("cpus:1;mem:128")
			case "gone":
				p.markGone()
				p.h.updatesUntilSentinel(p.fw)
				agent = p.agentID
			}
			rc := reconcileCall(agent, tc.task)
			if agent == "" {
				rc.Reconcile.Tasks[0].AgentID = nil
			}
			if err := p.h.call(p.fw, rc); err != nil {
				t.Fatal(err)
			}
			st := p.fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
			if st.TaskID.Value != tc.task || st.GetState() != tc.want || st.GetReason() != mesos.REASON_RECONCILIATION {
				t.Errorf("reconciliation answered %s %v %v, want %s %v REASON_RECONCILIATION", st.TaskID.Value, st.GetState(), st.GetReason(), tc.task, tc.want)
			}
			if tc.want == mesos.TASK_UNREACHABLE && st.GetUnreachableTime() == nil {
				t.Error("TASK_UNREACHABLE without unreachable_time")
			}
		})
	}
}

// MARK_AGENT_GONE names an agent: 400 without one, 404 for one the master
// does not know, 200 again for one already gone.
func TestMarkAgentGoneErrors(t *testing.T) {
	p := partition(t, true)
	var he *api.HTTPError
	if _, err := p.h.m.markAgentGone(nil); !errors.As(err, &he) || he.Code != http.StatusBadRequest {
		t.Errorf("without mark_agent_gone: %v, want 400", err)
	}
	if _, err := p.h.m.markAgentGone(&mmaster.Call_MarkAgentGone{AgentID: mesos.AgentID{Value: "nobody"}}); !errors.As(err, &he) || he.Code != http.StatusNotFound ||
		he.Error() != "Agent 'nobody' not found" {
		t.Errorf("an unknown agent: %v, want 404 Agent 'nobody' not found", err)
	}
	p.markGone()
	p.markGone()
}

// The leader forgets unreachable agents past --registry-max-agent-age,
// then the oldest beyond --registry-max-agent-count, and the registry with
// it; a partition-aware framework reconciling a task of a forgotten agent
// hears TASK_UNKNOWN. An older unreachable agent ("old", marked an hour
// earlier) goes first.
func TestRegistryGCForgetsUnreachableAgents(t *testing.T) {
	tests := []struct {
		name           string
		after          time.Duration // since the mark, when GC runs
		count          int
		forgotten, old bool
	}{
		{"young, room left", time.Hour, 10, false, false},
		{"past the age", 15 * 24 * time.Hour, 10, true, true},
		{"only the older past the age", 14*24*time.Hour - time.Minute, 10, false, true},
		{"over the count: the oldest goes", time.Hour, 1, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := partition(t, true)
			p.h.m.cfg.RegistryMaxAgentCount = tc.count
			p.h.m.mu.Lock()
			old := &api.AgentRecord{Id: "old", Address: "127.0.0.1:1"}
			p.h.m.unreachable["old"] = &unreachableAgent{rec: old, at: p.h.clock.Now().Add(-time.Hour)}
			p.h.m.rep.propose(&api.Command{Type: api.CommandType_AGENT_UNREACHABLE, Agent: old, UnixNano: p.h.clock.Now().Add(-time.Hour).UnixNano()})
			p.h.m.registryGCLocked(p.h.clock.Now().Add(tc.after))
			_, kept := p.h.m.unreachable[p.agentID]
			_, oldKept := p.h.m.unreachable["old"]
			p.h.m.mu.Unlock()
			if kept == tc.forgotten || oldKept == tc.old {
				t.Fatalf("agent kept %v, old kept %v; want forgotten %v, %v", kept, oldKept, tc.forgotten, tc.old)
			}
			want := mesos.TASK_UNREACHABLE
			if tc.forgotten {
				want = mesos.TASK_UNKNOWN
			}
			if err := p.h.call(p.fw, reconcileCall(p.agentID, "t1")); err != nil {
				t.Fatal(err)
			}
			if st := p.fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status; st.GetState() != want {
				t.Errorf("reconciling t1 answered %v, want %v", st.GetState(), want)
			}
			wantKept := 0
			for _, k := range []bool{tc.forgotten, tc.old} {
				if !k {
					wantKept++
				}
			}
			for deadline := time.Now().Add(5 * time.Second); len(p.h.m.reg.Unreachable()) != wantKept; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the registry keeps %d unreachable agents, want %d", len(p.h.m.reg.Unreachable()), wantKept)
				}
			}
		})
	}
}

// A newly elected leader knows the unreachable agent and its
// partition-aware framework's unreachable task from the registry: it
// answers reconciliation TASK_UNREACHABLE with the same unreachable_time,
// and the agent coming back to it brings the task back as RUNNING.
func TestPartitionSurvivesFailover(t *testing.T) {
	p := partition(t, true)
	h := p.h
	for deadline := time.Now().Add(5 * time.Second); len(h.m.reg.Unreachable()) != 1 || !h.registryTaskIn("t1", mesos.TASK_UNREACHABLE); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the registry never recorded the unreachable agent and task")
		}
	}
	h.reelect(t)
	s := newFakeStream(t, api.JSON)
	ft := 60.0
	info := mesos.FrameworkInfo{User: "test", Name: "p", ID: &mesos.FrameworkID{Value: p.fw.id}, FailoverTimeout: &ft,
		Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE}}}
	_, sid, err := h.m.admitFramework(p.fw.id, info, nil, s.Stream)
	if err != nil {
		t.Fatal(err)
	}
	s.nextEvent(t, scheduler.Event_SUBSCRIBED)
	p.fw = &fakeFramework{id: p.fw.id, streamID: sid, fakeStream: s}

	if err := h.call(p.fw, reconcileCall(p.agentID, "t1")); err != nil {
		t.Fatal(err)
	}
	st := p.fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
	if st.GetState() != mesos.TASK_UNREACHABLE || !st.GetUnreachableTime().Equal(p.first.GetUnreachableTime()) {
		t.Errorf("after the failover t1 reconciles as %v unreachable_time %v, want TASK_UNREACHABLE %v",
			st.GetState(), st.GetUnreachableTime(), p.first.GetUnreachableTime())
	}
	if _, err := p.reregister(); err != nil {
		t.Fatalf("re-registering with the new leader: %v", err)
	}
	if got, want := heardOf(h.updatesUntilSentinel(p.fw)), []heard{{mesos.TASK_RUNNING, mesos.REASON_AGENT_REREGISTERED}}; !equalHeard(got, want) {
		t.Errorf("then the framework heard %v, want %v", got, want)
	}
}

// registryTaskIn reports whether the registry holds task id in state.
func (h *harness) registryTaskIn(id string, state mesos.TaskState) bool {
	for _, r := range h.m.reg.Tasks() {
		if r.TaskId == id && mesos.TaskState(r.State) == state {
			return true
		}
	}
	return false
}

// MARK_AGENT_GONE over HTTP is authorized by mark_agents_gone, the agent
// id its object: a denied call leaves the agent admitted.
func TestAuthzMarkAgentGone(t *testing.T) {
	h := newAuthzHarness(t, `{"mark_agents_gone": [
		{"principals": {"values": ["ops"]}, "agents": {"type": "ANY"}},
		{"principals": {"type": "ANY"}, "agents": {"type": "NONE"}}]}`)
	agentID, _ := h.agent("cpus:1;mem:128")
	body := []byte(`{"type":"MARK_AGENT_GONE","mark_agent_gone":{"agent_id":{"value":"` + agentID + `"}}}`)
	code, msg := h.do(http.MethodPost, "/api/v1", "eve", body, nil)
	wantDenied(t, code, msg, "mark_agents_gone[1]")
	h.m.mu.Lock()
	_, admitted := h.m.agents[agentID]
	h.m.mu.Unlock()
	if !admitted {
		t.Fatal("a denied MARK_AGENT_GONE removed the agent")
	}
	if code, msg := h.do(http.MethodPost, "/api/v1", "ops", body, nil); code != http.StatusOK {
		t.Fatalf("ops MARK_AGENT_GONE: %d %q", code, msg)
	}
	if code, msg := h.do(http.MethodPost, "/api/v1", "ops", []byte(`{"type":"MARK_AGENT_GONE","mark_agent_gone":{"agent_id":{"value":"nobody"}}}`), nil); code != http.StatusNotFound || strings.TrimSpace(msg) != "Agent 'nobody' not found" {
		t.Errorf("MARK_AGENT_GONE of an unknown agent: %d %q, want 404 Agent 'nobody' not found", code, msg)
	}
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if _, admitted := h.m.agents[agentID]; admitted || !h.m.removedAgents[agentID] {
		t.Error("an allowed MARK_AGENT_GONE left the agent admitted")
	}
}

// GET_AGENTS lists an agent a new leader knows from the registry only in
// recovered_agents, as Mesos, until it re-registers; an unreachable agent
// in neither.
func TestGetAgentsRecoveredAndUnreachable(t *testing.T) {
	p := partition(t, true)
	other, _ := p.h.agent("cpus:1;mem:128")
	for deadline := time.Now().Add(5 * time.Second); len(p.h.m.reg.Agents()) != 1 || len(p.h.m.reg.Unreachable()) != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the registry never recorded the admitted and the unreachable agent")
		}
	}
	p.h.reelect(t)
	p.h.m.mu.Lock()
	ga := p.h.m.getAgentsLocked()
	p.h.m.mu.Unlock()
	if len(ga.Agents) != 0 || len(ga.RecoveredAgents) != 1 || ga.RecoveredAgents[0].GetID().GetValue() != other {
		t.Errorf("after the election GET_AGENTS has agents %v and recovered_agents %v, want %s recovered only", ga.Agents, ga.RecoveredAgents, other)
	}
	if _, err := p.reregister(); err != nil {
		t.Fatal(err)
	}
	p.h.m.mu.Lock()
	ga = p.h.m.getAgentsLocked()
	p.h.m.mu.Unlock()
	if len(ga.Agents) != 1 || ga.Agents[0].AgentInfo.GetID().GetValue() != p.agentID || len(ga.RecoveredAgents) != 1 {
		t.Errorf("after the unreachable agent's return GET_AGENTS has agents %v and recovered_agents %v, want %s admitted and %s recovered", ga.Agents, ga.RecoveredAgents, p.agentID, other)
	}
}

// A connected agent the leader has heard nothing from (no call since its
// REGISTER or its last call) for --agent-ping-timeout is marked
// unreachable; one heard from within it is not.
func TestSilentAgentMarkedUnreachable(t *testing.T) {
	tests := []silenceCase{
		{"silent past the timeout", false, time.Second, true, 0},
		{"silent up to the timeout", false, 0, false, 0},
		{"answered a ping", true, time.Second, false, 0},
		{"silent past the timeout, checked a ping ago", false, time.Second, true, PingInterval},
		{"the master stalled since its last check", false, time.Second, false, 4 * PingInterval},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			agentID, _ := h.agent("cpus:1;mem:128")
			h.clock.Advance(tc.after)
			if tc.call {
				if err := h.m.agentCall(&api.AgentCall{Type: api.AgentCallType_AGENT_BATCH, AgentId: agentID}); err != nil {
					t.Fatal(err)
				}
			}
			h.m.mu.Lock()
			h.m.markSilentAgentsLocked(h.clock.Now().Add(h.m.cfg.AgentPingTimeout), tc.lastCheck(h.clock.Now().Add(h.m.cfg.AgentPingTimeout)))
			_, unreachable := h.m.unreachable[agentID]
			h.m.mu.Unlock()
			if unreachable != tc.silenced {
				t.Errorf("unreachable %v, want %v", unreachable, tc.silenced)
			}
		})
	}
}

// silenceCase is a row of TestSilentAgentMarkedUnreachable.
type silenceCase struct {
	name     string
	call     bool          // the agent posts a call (an empty batch, a pong) before the check
	after    time.Duration // of silence, beyond --agent-ping-timeout
	silenced bool
	// checkedAgo is when the check before ran (0: none)
	checkedAgo time.Duration
}

// lastCheck is the previous silence check's time, for a check at now.
func (tc silenceCase) lastCheck(now time.Time) time.Time {
	if tc.checkedAgo == 0 {
		return time.Time{}
	}
	return now.Add(-tc.checkedAgo)
}
