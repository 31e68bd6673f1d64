package master

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// roleFramework subscribes a framework in role, through the JSON stream
// (so its events decode with mesos-go's own types).
func (h *harness) roleFramework(name, role string) *fakeFramework {
	h.t.Helper()
	s := newFakeStream(h.t, api.JSON)
	ft := 60.0
	info := mesos.FrameworkInfo{User: "test", Name: name, FailoverTimeout: &ft, Role: &role}
	id, sid, err := h.m.admitFramework("", info, nil, s.Stream)
	if err != nil {
		h.t.Fatal(err)
	}
	s.nextEvent(h.t, scheduler.Event_SUBSCRIBED)
	return &fakeFramework{id: id, streamID: sid, fakeStream: s}
}

func acceptOps(o mesos.Offer, ops ...mesos.Offer_Operation) *scheduler.Call {
	return &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{
		OfferIDs: []mesos.OfferID{o.ID}, Operations: ops, Filters: refuse(0)}}
}

func opID(id string) *mesos.OperationID { return &mesos.OperationID{Value: id} }

// reservedOf returns the offer's resources reserved for role, and its
// volumes.
func reservedOf(o mesos.Offer, role string) (map[string]float64, []mesos.Resource) {
	var in []mesos.Resource
	var vols []mesos.Resource
	for _, r := range o.Resources {
		if n := len(r.Reservations); n > 0 && r.Reservations[n-1].GetRole() == role {
			in = append(in, r)
			if r.IsPersistentVolume() {
				vols = append(vols, r)
			}
		}
	}
	return scalarsOf(in), vols
}

// A framework reserves, creates a volume and launches a task on it through
// ACCEPT; each operation with an id hears OPERATION_FINISHED; offers carry
// Resource.reservations and disk.persistence as Mesos fills them (decoded
// here with mesos-go's types); a volume in use cannot be destroyed, and an
// invalid operation with an id hears OPERATION_ERROR.
func TestAcceptReservationOperations(t *testing.T) {
	h := newHarness(t, nil)
	agentID, agent := h.agent("cpus:4;mem:1024;disk:1000")
	agent.nextAgentEvent(t, api.AgentEventType_CHECKPOINT_RESOURCES)
	fw := h.roleFramework("stateful", "eng")

	reserve := mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, ID: opID("r1"), Reserve: &mesos.Offer_Operation_Reserve{
		Resources: []mesos.Resource{dynRes("cpus", 1, "eng", ""), dynRes("disk", 200, "eng", "")}}}
	if err := h.call(fw, acceptOps(h.offer(fw), reserve)); err != nil {
		t.Fatalf("ACCEPT RESERVE: %v", err)
	}
	st := fw.nextEvent(t, scheduler.Event_UPDATE_OPERATION_STATUS).UpdateOperationStatus.Status
	if st.State != mesos.OPERATION_FINISHED || st.OperationID.Value != "r1" || len(st.ConvertedResources) != 2 || st.UUID == nil {
		t.Fatalf("RESERVE feedback %+v", st)
	}
	if ev := agent.nextAgentEvent(t, api.AgentEventType_CHECKPOINT_RESOURCES); len(ev.Resources) != 2 {
		t.Fatalf("agent told to keep %d resources, want the 2 reserved", len(ev.Resources))
	}
	o := h.offer(fw)
	if got, _ := reservedOf(o, "eng"); got["cpus"] != 1 || got["disk"] != 200 {
		t.Fatalf("offer after RESERVE holds %v reserved for eng (offer %v)", got, o.Resources)
	}

	vol := volRes(100, "eng", "", "v1")
	create := mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, ID: opID("c1"), Create: &mesos.Offer_Operation_Create{Volumes: []mesos.Resource{vol}}}
	bad := mesos.Offer_Operation{Type: mesos.Offer_Operation_UNRESERVE, ID: opID("bad"), Unreserve: &mesos.Offer_Operation_Unreserve{
		Resources: []mesos.Resource{scalarRes("cpus", 1)}}}
	if err := h.call(fw, acceptOps(o, create, bad)); err != nil {
		t.Fatalf("ACCEPT CREATE: %v", err)
	}
	for _, want := range []mesos.OperationState{mesos.OPERATION_FINISHED, mesos.OPERATION_ERROR} {
		st := fw.nextEvent(t, scheduler.Event_UPDATE_OPERATION_STATUS).UpdateOperationStatus.Status
		if st.State != want {
			t.Fatalf("feedback %+v (%s), want %v", st, st.GetMessage(), want)
		}
		if want == mesos.OPERATION_ERROR && (!strings.Contains(st.GetMessage(), "is not dynamically reserved") || st.UUID != nil) {
			t.Errorf("OPERATION_ERROR %+v, want the reason and no uuid", st)
		}
	}
	o = h.offer(fw)
	_, vols := reservedOf(o, "eng")
	if len(vols) != 1 || vols[0].Disk.Persistence.ID != "v1" || vols[0].Disk.Volume.ContainerPath != "data" {
		t.Fatalf("offer after CREATE holds volumes %v", vols)
	}

	task := commandTask("writer", agentID, 0.5, 64)
	task.Resources = append(task.Resources, vols[0])
	if err := h.call(fw, launchCall(o, nil, task)); err != nil {
		t.Fatalf("ACCEPT LAUNCH with the volume: %v", err)
	}
	agent.nextAgentEvent(t, api.AgentEventType_RUN)
	destroy := mmaster.Call{Type: mmaster.Call_DESTROY_VOLUMES, DestroyVolumes: &mmaster.Call_DestroyVolumes{
		AgentID: mesos.AgentID{Value: agentID}, Volumes: []mesos.Resource{vols[0]}}}
	if _, err := h.m.operatorCallAs(auth.Subject{}, &destroy); err == nil || !strings.Contains(err.Error(), "is in use by task writer") {
		t.Fatalf("DESTROY_VOLUMES of a volume in use: %v", err)
	}

	checkOperationsKept(t, h, fw, agentID, st.UUID.Value)
}

// checkOperationsKept checks that fw's operations r1 and c1 are listed by
// GET_OPERATIONS until acknowledged (r1 with uuid), and that
// RECONCILE_OPERATIONS answers for the one left.
func checkOperationsKept(t *testing.T, h *harness, fw *fakeFramework, agentID string, uuid []byte) {
	t.Helper()
	h.m.mu.Lock()
	kept := len(h.m.operations[fw.id])
	h.m.mu.Unlock()
	if kept != 2 {
		t.Fatalf("%d unacknowledged operations kept, want r1 and c1", kept)
	}
	resp, err := h.m.operatorCallAs(auth.Subject{}, &mmaster.Call{Type: mmaster.Call_GET_OPERATIONS})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := api.JSON.Marshal(resp)
	var back mmaster.Response
	if err := api.JSON.Unmarshal(b, &back); err != nil {
		t.Fatalf("GET_OPERATIONS does not decode with mesos-go: %v\n%s", err, b)
	}
	if ops := back.GetOperations.Operations; len(ops) != 2 || ops[0].Info.ID.Value != "c1" || ops[1].Info.Type != mesos.Offer_Operation_RESERVE ||
		ops[1].LatestStatus.State != mesos.OPERATION_FINISHED || ops[1].FrameworkID.Value != fw.id {
		t.Errorf("GET_OPERATIONS lists %+v", ops)
	}
	ack := &scheduler.Call{Type: scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS, AcknowledgeOperationStatus: &scheduler.Call_AcknowledgeOperationStatus{
		AgentID: &mesos.AgentID{Value: agentID}, UUID: uuid, OperationID: mesos.OperationID{Value: "r1"}}}
	if err := h.call(fw, ack); err != nil {
		t.Fatal(err)
	}
	rec := &scheduler.Call{Type: scheduler.Call_RECONCILE_OPERATIONS, ReconcileOperations: &scheduler.Call_ReconcileOperations{}}
	if err := h.call(fw, rec); err != nil {
		t.Fatal(err)
	}
	if st := fw.nextEvent(t, scheduler.Event_UPDATE_OPERATION_STATUS).UpdateOperationStatus.Status; st.OperationID.Value != "c1" ||
		st.State != mesos.OPERATION_FINISHED || st.UUID != nil {
		t.Errorf("reconciliation answered %+v, want c1 FINISHED without uuid", st)
	}
}

// A framework in eng/ml is offered the static reservation of its ancestor
// eng and refines part of it for eng/ml: the next offer carries the two
// reservations stacked, as Mesos shows a refinement.
func TestAcceptRefinesAncestorReservation(t *testing.T) {
	h := newHarness(t, nil)
	_, agent := h.agent("cpus:2;mem:1024;cpus(eng):2")
	agent.nextAgentEvent(t, api.AgentEventType_CHECKPOINT_RESOURCES)
	fw := h.roleFramework("ml", "eng/ml")
	o := h.offer(fw)
	var static mesos.Resource
	for _, r := range o.Resources {
		if len(r.Reservations) == 1 && r.Reservations[0].GetRole() == "eng" {
			static = r
		}
	}
	if static.Name != "cpus" || static.Reservations[0].GetType() != mesos.Resource_ReservationInfo_STATIC {
		t.Fatalf("eng/ml was not offered eng's static reservation: %v", o.Resources)
	}
	refined := static
	refined.Scalar = &mesos.Value_Scalar{Value: 1}
	dyn, role := mesos.Resource_ReservationInfo_DYNAMIC, "eng/ml"
	refined.Reservations = append(append([]mesos.Resource_ReservationInfo(nil), static.Reservations...), mesos.Resource_ReservationInfo{Type: &dyn, Role: &role})
	op := mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, ID: opID("refine"), Reserve: &mesos.Offer_Operation_Reserve{Resources: []mesos.Resource{refined}}}
	if err := h.call(fw, acceptOps(o, op)); err != nil {
		t.Fatal(err)
	}
	if st := fw.nextEvent(t, scheduler.Event_UPDATE_OPERATION_STATUS).UpdateOperationStatus.Status; st.State != mesos.OPERATION_FINISHED {
		t.Fatalf("refinement: %+v (%s)", st, st.GetMessage())
	}
	o = h.offer(fw)
	got, _ := reservedOf(o, "eng/ml")
	stacked := false
	for _, r := range o.Resources {
		stacked = stacked || len(r.Reservations) == 2 && r.Reservations[0].GetRole() == "eng" && r.Reservations[1].GetRole() == "eng/ml"
	}
	if got["cpus"] != 1 || !stacked {
		t.Errorf("after the refinement eng/ml is offered %v reserved (stacked: %v): %v", got, stacked, o.Resources)
	}
}
