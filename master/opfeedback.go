package master

// Operation feedback, as Mesos gives it for operations on an agent's
// default resources: an operation with an id hears UPDATE_OPERATION_STATUS.
// OPERATION_FINISHED (with the converted resources) and OPERATION_FAILED
// carry a uuid and are kept until the framework acknowledges them
// (ACKNOWLEDGE_OPERATION_STATUS); OPERATION_ERROR (an invalid operation,
// dropped) carries none and is not kept. RECONCILE_OPERATIONS answers each
// operation asked about (every unacknowledged one if none is named) with
// its latest status, without a uuid; an operation the master does not hold
// is OPERATION_UNKNOWN. GET_OPERATIONS lists the unacknowledged ones, to
// callers who may view their framework. The leader keeps them in memory
// only: after a failover every operation is OPERATION_UNKNOWN, as Mesos's
// master reports one it has not heard of (docs/roles.md).

import (
	"crypto/rand"
	"net/http"
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// operationLog is each framework's unacknowledged operations, keyed by
// framework id, then operation id.
type operationLog map[string]map[string]*mesos.Operation

// maxOperationsPerFramework bounds what one framework's unacknowledged
// operations hold; the oldest is dropped beyond it.
const maxOperationsPerFramework = 1024

// operationStatusLocked sends fb, the outcome of op, to fw and, if it
// needs acknowledging, keeps it. Caller holds m.mu.
func (m *Master) operationStatusLocked(fw *framework, agentID string, op *mesos.Offer_Operation, fb opFeedback) {
	st := mesos.OperationStatus{OperationID: &mesos.OperationID{Value: fb.id}, State: fb.state,
		AgentID: &mesos.AgentID{Value: agentID}, ConvertedResources: fb.conv}
	if fb.msg != "" {
		msg := fb.msg
		st.Message = &msg
	}
	if fb.state != mesos.OPERATION_ERROR {
		u := make([]byte, 16)
		rand.Read(u)
		st.UUID = &mesos.UUID{Value: u}
		if m.operations == nil {
			m.operations = operationLog{}
		}
		ops := m.operations[fw.id]
		if ops == nil {
			ops = map[string]*mesos.Operation{}
			m.operations[fw.id] = ops
		}
		if len(ops) >= maxOperationsPerFramework {
			for id := range ops {
				delete(ops, id)
				break
			}
		}
		ops[fb.id] = &mesos.Operation{FrameworkID: &mesos.FrameworkID{Value: fw.id}, AgentID: st.AgentID, Info: *op,
			LatestStatus: st, Statuses: []mesos.OperationStatus{st}, UUID: *st.UUID}
	}
	m.sendFrameworkLocked(fw, operationEvent(st))
}

func operationEvent(st mesos.OperationStatus) *schedEvent {
	return &schedEvent{Type: scheduler.Event_UPDATE_OPERATION_STATUS,
		UpdateOperationStatus: &scheduler.Event_UpdateOperationStatus{Status: st}}
}

// acknowledgeOperationLocked is ACKNOWLEDGE_OPERATION_STATUS: the status
// with that uuid is delivered and forgotten. Caller holds m.mu.
func (m *Master) acknowledgeOperationLocked(fw *framework, ack *scheduler.Call_AcknowledgeOperationStatus) error {
	if ack == nil || ack.OperationID.Value == "" || len(ack.UUID) == 0 {
		return api.Errorf(http.StatusBadRequest, "ACKNOWLEDGE_OPERATION_STATUS without operation_id and uuid")
	}
	ops := m.operations[fw.id]
	if op := ops[ack.OperationID.Value]; op != nil && string(op.LatestStatus.GetUUID().GetValue()) == string(ack.UUID) {
		delete(ops, ack.OperationID.Value)
		if len(ops) == 0 {
			delete(m.operations, fw.id)
		}
	}
	return nil
}

// reconcileOperationsLocked is RECONCILE_OPERATIONS. Caller holds m.mu.
func (m *Master) reconcileOperationsLocked(fw *framework, rc *scheduler.Call_ReconcileOperations) {
	ops := m.operations[fw.id]
	var asked []scheduler.Call_ReconcileOperations_Operation
	if rc != nil {
		asked = rc.Operations
	}
	if len(asked) == 0 {
		ids := make([]string, 0, len(ops))
		for id := range ops {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			asked = append(asked, scheduler.Call_ReconcileOperations_Operation{OperationID: mesos.OperationID{Value: id}})
		}
	}
	for _, q := range asked {
		st := mesos.OperationStatus{OperationID: &mesos.OperationID{Value: q.OperationID.Value}, State: mesos.OPERATION_UNKNOWN, AgentID: q.AgentID}
		if kept := ops[q.OperationID.Value]; kept != nil {
			st = kept.LatestStatus
			st.UUID = nil
		}
		m.sendFrameworkLocked(fw, operationEvent(st))
	}
}

// forgetOperationsLocked drops a removed framework's operations. Caller
// holds m.mu.
func (m *Master) forgetOperationsLocked(fwID string) { delete(m.operations, fwID) }

// getOperations answers GET_OPERATIONS with the operations of the
// frameworks who may view. Takes m.mu.
func (m *Master) getOperations(who auth.Subject) *mmaster.Response {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := &mmaster.Response_GetOperations{}
	fws := make([]string, 0, len(m.operations))
	for id := range m.operations {
		fws = append(fws, id)
	}
	sort.Strings(fws)
	for _, fw := range fws {
		if !m.mayViewFrameworkLocked(who, fw) {
			continue
		}
		ids := make([]string, 0, len(m.operations[fw]))
		for id := range m.operations[fw] {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			out.Operations = append(out.Operations, *m.operations[fw][id])
		}
	}
	return &mmaster.Response{Type: mmaster.Response_GET_OPERATIONS, GetOperations: out}
}
