package master

// ACCEPT's answers by status update: Mesos answers an ACCEPT that is well
// formed as a call 202 whatever its offers and tasks, and tells the
// framework of each task that cannot run by a status update from the
// master. A client library that takes any non-2xx answer as fatal thus
// survives the ordinary race of an offer rescinded, declined or timed out
// before its ACCEPT arrived.

import (
	"fmt"
	"slices"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// refusedTask is a task of an accepted offer that is not launched but
// answered TASK_ERROR, as Mesos answers a task it finds invalid.
type refusedTask struct {
	id     mesos.TaskID
	reason mesos.TaskStatus_Reason
	msg    string
}

// refuseLocked sends fw a TASK_ERROR from the master for each refused
// task. The update carries no uuid: there is nothing to acknowledge, the
// task never existed. Caller holds m.mu.
func (m *Master) refuseLocked(fw *framework, agentID string, refused []refusedTask) {
	for _, r := range refused {
		m.masterUpdateLocked(fw, r.id, agentID, mesos.TASK_ERROR, r.reason, r.msg)
	}
}

// masterUpdateLocked sends fw a status update the master makes for a task
// it never launched (SOURCE_MASTER, no uuid). Caller holds m.mu.
func (m *Master) masterUpdateLocked(fw *framework, id mesos.TaskID, agentID string, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) {
	now := float64(m.clock.Now().UnixNano()) / 1e9
	st := mesos.TaskStatus{TaskID: id, State: state.Enum(), Source: mesos.SOURCE_MASTER.Enum(),
		Reason: reason.Enum(), Message: strPtr(msg), Timestamp: &now}
	if agentID != "" {
		st.AgentID = &mesos.AgentID{Value: agentID}
	}
	m.m.statusUpdates.WithLabelValues(state.String()).Inc()
	m.taskEndCountLocked(state)
	m.sendFrameworkLocked(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
}

// offersErrorLocked is why the offers of acc cannot be used, in Mesos's
// words and in the order of its checks (validation::offer::validate), or
// "" when they are fw's, distinct, outstanding and on one agent. Caller
// holds m.mu.
func (m *Master) offersErrorLocked(fw *framework, acc *scheduler.Call_Accept) string {
	if len(acc.OfferIDs) == 0 {
		return "No offers specified"
	}
	seen := map[string]bool{}
	for _, oid := range acc.OfferIDs {
		if seen[oid.Value] {
			return "Duplicate offer " + oid.Value + " in offer list"
		}
		seen[oid.Value] = true
	}
	for _, oid := range acc.OfferIDs {
		seq, ok := m.offerSeq(oid.Value)
		if o := m.offers[seq]; !ok || o == nil || !o.hasID(oid.Value) {
			return "Offer " + oid.Value + " is no longer valid"
		} else if o.fw != fw.id {
			return fmt.Sprintf("Offer %s has invalid framework %s while framework %s is expected", oid.Value, o.fw, fw.id)
		}
	}
	first := m.frameworkOfferLocked(fw, acc.OfferIDs[0].Value)
	for _, oid := range acc.OfferIDs {
		if o := m.frameworkOfferLocked(fw, oid.Value); o.agent != first.agent {
			return fmt.Sprintf("Aggregated offers must belong to one single agent. Offer %s uses agent %s and agent %s", oid.Value, o.agent, first.agent)
		}
		if o := m.frameworkOfferLocked(fw, oid.Value); fw.allocRole(o) != fw.allocRole(first) {
			return fmt.Sprintf("Aggregated offers must be allocated to the same role. Offer %s uses role %s and offer %s uses role %s",
				acc.OfferIDs[0].Value, fw.allocRole(first), oid.Value, fw.allocRole(o))
		}
	}
	if a := m.agents[first.agent]; a == nil || a.stream == nil {
		return "Offer " + acc.OfferIDs[0].Value + " is no longer valid"
	}
	return ""
}

// invalidOffersLocked answers an ACCEPT whose offers cannot be used as
// Mesos does, and reports whether it did: the offers of the call that are
// still fw's go back to the allocator (without the call's filter), and each
// task of its LAUNCH and LAUNCH_GROUP operations is reported TASK_DROPPED
// to a PARTITION_AWARE framework, TASK_LOST to the others, with
// REASON_INVALID_OFFERS. Other operations are dropped. Caller holds m.mu.
func (m *Master) invalidOffersLocked(fw *framework, acc *scheduler.Call_Accept) bool {
	why := m.offersErrorLocked(fw, acc)
	if why == "" {
		return false
	}
	for _, oid := range acc.OfferIDs {
		if o := m.frameworkOfferLocked(fw, oid.Value); o != nil {
			m.removeOfferLocked(o, true, nil)
		}
	}
	m.log.Warn().Str("framework_id", fw.id).Str("why", why).Msg("ACCEPT used invalid offers")
	state := mesos.TASK_LOST
	if partitionAware(&fw.info) {
		state = mesos.TASK_DROPPED
	}
	for i := range acc.Operations {
		op := &acc.Operations[i]
		tasks := op.GetLaunch().GetTaskInfos()
		if op.GetType() == mesos.Offer_Operation_LAUNCH_GROUP {
			tasks = op.GetLaunchGroup().GetTaskGroup().Tasks
		} else if op.GetType() != mesos.Offer_Operation_LAUNCH {
			continue
		}
		for j := range tasks {
			m.masterUpdateLocked(fw, tasks[j].TaskID, tasks[j].AgentID.Value, state, mesos.REASON_INVALID_OFFERS, "Task launched with invalid offers: "+why)
		}
	}
	m.triggerAllocation()
	return true
}

// partitionAware reports whether the framework declared PARTITION_AWARE.
func partitionAware(info *mesos.FrameworkInfo) bool {
	return slices.ContainsFunc(info.Capabilities, func(c mesos.FrameworkInfo_Capability) bool {
		return c.GetType() == mesos.FrameworkInfo_Capability_PARTITION_AWARE
	})
}
