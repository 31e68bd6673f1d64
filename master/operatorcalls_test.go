package master

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
)

// Every read call of the master's operator API, in both codecs: the answer
// has the call's response type, decodes with mesos-go's master.Response
// and (JSON) says the same re-encoded by mesos-go, and holds the cluster
// the test built: one agent, one framework with a running task.
func TestMasterOperatorReadCalls(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Flags = map[string]string{"work_dir": "/x"} })
	agentID, _ := h.agent("cpus:4;mem:4096")
	fw := h.framework("reads")
	if err := h.call(fw, launchCall(h.offer(fw), refuse(5), commandTask("t1", agentID, 1, 1024))); err != nil {
		t.Fatal(err)
	}
	if err := h.agentUpdate(agentID, fw.id, "t1", mesos.TASK_RUNNING, "u1"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		typ   mmaster.Call_Type
		check func(r *mmaster.Response) bool
	}{
		{mmaster.Call_GET_HEALTH, func(r *mmaster.Response) bool { return r.GetGetHealth().Healthy }},
		{mmaster.Call_GET_FLAGS, func(r *mmaster.Response) bool { return r.GetGetFlags().Flags[0].GetValue() == "/x" }},
		{mmaster.Call_GET_VERSION, func(r *mmaster.Response) bool { return r.GetGetVersion().VersionInfo.Version != "" }},
		{mmaster.Call_GET_METRICS, func(r *mmaster.Response) bool { return len(r.GetGetMetrics().Metrics) > 0 }},
		{mmaster.Call_GET_STATE, func(r *mmaster.Response) bool {
			s := r.GetGetState()
			return len(s.GetGetAgents().Agents) == 1 && len(s.GetGetFrameworks().Frameworks) == 1 && len(s.GetGetTasks().Tasks) == 1
		}},
		{mmaster.Call_GET_AGENTS, func(r *mmaster.Response) bool { return r.GetGetAgents().Agents[0].AgentInfo.GetID().Value == agentID }},
		{mmaster.Call_GET_FRAMEWORKS, func(r *mmaster.Response) bool {
			return r.GetGetFrameworks().Frameworks[0].FrameworkInfo.GetID().Value == fw.id
		}},
		{mmaster.Call_GET_EXECUTORS, func(r *mmaster.Response) bool { return r.GetGetExecutors() != nil }},
		{mmaster.Call_GET_TASKS, func(r *mmaster.Response) bool {
			tk := r.GetGetTasks().Tasks
			return len(tk) == 1 && tk[0].TaskID.Value == "t1" && tk[0].GetState() == mesos.TASK_RUNNING
		}},
		{mmaster.Call_GET_ROLES, func(r *mmaster.Response) bool { return len(r.GetGetRoles().Roles) == 1 }},
		{mmaster.Call_GET_WEIGHTS, func(r *mmaster.Response) bool { return r.GetGetWeights() != nil }},
		{mmaster.Call_GET_MASTER, func(r *mmaster.Response) bool { return r.GetGetMaster().MasterInfo.GetHostname() != "" }},
		{mmaster.Call_GET_OPERATIONS, func(r *mmaster.Response) bool { return len(r.GetGetOperations().Operations) == 0 }},
		{mmaster.Call_GET_LOGGING_LEVEL, func(r *mmaster.Response) bool { return r.GetGetLoggingLevel().Level == 0 }},
	}
	for _, c := range cases {
		for _, codec := range []api.Codec{api.JSON, api.Protobuf} {
			code, body, r := operatorHTTP(t, h.m, codec, "", &mmaster.Call{Type: c.typ})
			if code != http.StatusOK || r == nil || r.Type.String() != c.typ.String() || !c.check(r) {
				t.Errorf("%s (%s): %d %s", c.typ, codec, code, body)
			}
		}
	}
}

// The operator event stream reports an agent's and a framework's life:
// AGENT_ADDED, FRAMEWORK_ADDED, FRAMEWORK_REMOVED after TEARDOWN, and
// AGENT_REMOVED when the agent is removed; HEARTBEAT keeps coming.
func TestOperatorEventsOfLifecycle(t *testing.T) {
	h := newAuthzHarness(t, `{"permissive": true}`, func(c *Config) { c.HeartbeatInterval = 20 * time.Millisecond })
	code, body, s := h.openStream("/api/v1", "", []byte(`{"type":"SUBSCRIBE"}`))
	if s == nil {
		t.Fatalf("operator SUBSCRIBE: %d %q", code, body)
	}
	next := func(want mmaster.Event_Type) *mmaster.Event {
		var ev mmaster.Event
		s.take(t, want.String(), func(b []byte) bool {
			ev = mmaster.Event{}
			return json.Unmarshal(b, &ev) == nil && ev.Type == want
		})
		return &ev
	}
	next(mmaster.Event_SUBSCRIBED)
	agentID, _ := h.agent("cpus:1;mem:64")
	if ev := next(mmaster.Event_AGENT_ADDED); ev.AgentAdded.Agent.AgentInfo.GetID().Value != agentID {
		t.Fatalf("AGENT_ADDED %+v, want agent %s", ev.AgentAdded, agentID)
	}
	fw := h.framework("life")
	if ev := next(mmaster.Event_FRAMEWORK_ADDED); ev.FrameworkAdded.Framework.FrameworkInfo.GetID().Value != fw.id {
		t.Fatalf("FRAMEWORK_ADDED %+v, want %s", ev.FrameworkAdded, fw.id)
	}
	if code, body, _ := operatorHTTP(t, h.m, api.JSON, "", &mmaster.Call{Type: mmaster.Call_TEARDOWN,
		Teardown: &mmaster.Call_Teardown{FrameworkID: mesos.FrameworkID{Value: fw.id}}}); code != http.StatusOK {
		t.Fatalf("TEARDOWN: %d %s", code, body)
	}
	if ev := next(mmaster.Event_FRAMEWORK_REMOVED); ev.FrameworkRemoved.FrameworkInfo.GetID().Value != fw.id {
		t.Fatalf("FRAMEWORK_REMOVED %+v, want %s", ev.FrameworkRemoved, fw.id)
	}
	h.m.mu.Lock()
	h.m.removeAgentLocked(h.m.agents[agentID], "test")
	h.m.mu.Unlock()
	if ev := next(mmaster.Event_AGENT_REMOVED); ev.AgentRemoved.AgentID.Value != agentID {
		t.Fatalf("AGENT_REMOVED %+v, want %s", ev.AgentRemoved, agentID)
	}
	next(mmaster.Event_HEARTBEAT)
}
