package master

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

// A task with a malformed health check is answered TASK_ERROR by the
// master and never reaches the agent; the rest of the ACCEPT launches. In
// a task group, one bad check refuses the whole group.
func TestInvalidHealthCheckIsTaskError(t *testing.T) {
	noPort := &mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{}}
	unknown := &mesos.HealthCheck{Type: 9}
	tests := []struct {
		name     string
		call     func(o mesos.Offer, agentID string) *scheduler.Call
		launched []string                           // tasks recorded and sent to the agent
		errors   map[string]mesos.TaskStatus_Reason // tasks answered TASK_ERROR
		want     string                             // in every TASK_ERROR's message
	}{
		{"launch", func(o mesos.Offer, a string) *scheduler.Call {
			good, bad := commandTask("good", a, 1, 128), commandTask("bad", a, 1, 128)
			bad.HealthCheck = noPort
			return launchCall(o, nil, good, bad)
		}, []string{"good"}, map[string]mesos.TaskStatus_Reason{"bad": mesos.REASON_TASK_INVALID}, "Task uses invalid health check: HTTP health check must set 'port'"},
		{"group", func(o mesos.Offer, a string) *scheduler.Call {
			g1, g2 := commandTask("g1", a, 1, 128), commandTask("g2", a, 1, 128)
			g2.HealthCheck = unknown
			ex := mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "gx"}, Type: mesos.ExecutorInfo_DEFAULT,
				Resources: []mesos.Resource{scalarRes("cpus", 0.1), scalarRes("mem", 32)}}
			return &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{OfferIDs: []mesos.OfferID{o.ID},
				Operations: []mesos.Offer_Operation{{Type: mesos.Offer_Operation_LAUNCH_GROUP,
					LaunchGroup: &mesos.Offer_Operation_LaunchGroup{Executor: ex, TaskGroup: mesos.TaskGroupInfo{Tasks: []mesos.TaskInfo{g1, g2}}}}}}}
		}, nil, map[string]mesos.TaskStatus_Reason{"g1": mesos.REASON_TASK_GROUP_INVALID, "g2": mesos.REASON_TASK_GROUP_INVALID},
			"Task 'g2' is invalid: Task uses invalid health check: '9' is not a valid health check type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			agentID, agent := h.agent("cpus:4;mem:4096")
			fw := h.framework("health")
			o := h.offer(fw)
			if err := h.call(fw, tc.call(o, agentID)); err != nil {
				t.Fatalf("ACCEPT: %v", err)
			}
			for range tc.errors {
				st := fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
				reason, ok := tc.errors[st.TaskID.Value]
				if !ok || st.GetState() != mesos.TASK_ERROR || st.GetReason() != reason || st.GetSource() != mesos.SOURCE_MASTER {
					t.Errorf("update %s %v %v %v, want TASK_ERROR %v from the master", st.TaskID.Value, st.GetState(), st.GetReason(), st.GetSource(), reason)
				}
				if !strings.Contains(st.GetMessage(), tc.want) || st.GetAgentID().GetValue() != agentID {
					t.Errorf("TASK_ERROR message %q agent %v, want %q on %s", st.GetMessage(), st.GetAgentID(), tc.want, agentID)
				}
			}
			for _, id := range tc.launched {
				var ti mesos.TaskInfo
				if ti.Unmarshal(agent.nextAgentEvent(t, api.AgentEventType_RUN).Task); ti.TaskID.Value != id {
					t.Errorf("RUN for %q, want %q", ti.TaskID.Value, id)
				}
			}
			h.m.mu.Lock()
			var recorded []string
			for id := range h.m.frameworks[fw.id].tasks {
				recorded = append(recorded, id)
			}
			h.m.mu.Unlock()
			if strings.Join(recorded, ",") != strings.Join(tc.launched, ",") {
				t.Errorf("tasks recorded %v, want %v", recorded, tc.launched)
			}
		})
	}
}
