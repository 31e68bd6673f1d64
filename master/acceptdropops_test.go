package master

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

// An ACCEPT whose reservation operations cannot be carried out (a role the
// framework is not in, nothing reserved to unreserve, a volume on
// unreserved disk) is answered 202, as Mesos: each such operation is
// dropped, with OPERATION_ERROR only where it has an id, and the rest of
// the call goes on: its task launches.
func TestAcceptDropsInvalidOperations(t *testing.T) {
	h := newHarness(t, nil)
	agentID, agent := h.agent("cpus:4;mem:1024;disk:1000")
	agent.nextAgentEvent(t, api.AgentEventType_CHECKPOINT_RESOURCES)
	fw := h.roleFramework("stateful", "eng")
	o := h.offer(fw)

	wrongRole := mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{
		Resources: []mesos.Resource{dynRes("cpus", 1, "ops", "")}}}
	noReservation := mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{
		Resources: []mesos.Resource{scalarRes("cpus", 1)}}}
	unreserveNothing := mesos.Offer_Operation{Type: mesos.Offer_Operation_UNRESERVE, ID: opID("u1"), Unreserve: &mesos.Offer_Operation_Unreserve{
		Resources: []mesos.Resource{dynRes("cpus", 1, "eng", "")}}}
	createUnreserved := mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, Create: &mesos.Offer_Operation_Create{
		Volumes: []mesos.Resource{volRes(100, "eng", "", "v1")}}}
	task := commandTask("still-runs", agentID, 0.5, 64)
	launch := mesos.Offer_Operation{Type: mesos.Offer_Operation_LAUNCH, Launch: &mesos.Offer_Operation_Launch{TaskInfos: []mesos.TaskInfo{task}}}

	if err := h.call(fw, acceptOps(o, wrongRole, noReservation, unreserveNothing, createUnreserved, launch)); err != nil {
		t.Fatalf("ACCEPT with invalid operations answered %v, want 202", err)
	}
	st := fw.nextEvent(t, scheduler.Event_UPDATE_OPERATION_STATUS).UpdateOperationStatus.Status
	if st.State != mesos.OPERATION_ERROR || st.OperationID.Value != "u1" || st.GetMessage() == "" {
		t.Fatalf("feedback %+v, want OPERATION_ERROR for u1 with the reason", st)
	}
	var ran mesos.TaskInfo
	if ran.Unmarshal(agent.nextAgentEvent(t, api.AgentEventType_RUN).Task); ran.TaskID.Value != "still-runs" {
		t.Fatalf("agent told to run %q, want still-runs", ran.TaskID.Value)
	}
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if ops := h.m.operations[fw.id]; len(ops) != 0 {
		t.Errorf("dropped operations are kept: %v", ops)
	}
	for _, r := range h.m.agents[agentID].resv.total {
		if len(r.Reservations) != 0 || r.IsPersistentVolume() {
			t.Errorf("agent holds %v after dropped operations", r)
		}
	}
}
