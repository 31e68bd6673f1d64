package master

import (
	"fmt"
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// startFailoverTimerLocked removes fw if it has not re-subscribed within its
// failover timeout. Caller holds m.mu.
func (m *Master) startFailoverTimerLocked(fw *framework) {
	if fw.failoverTimer != nil {
		fw.failoverTimer.Stop()
	}
	d := time.Duration(fw.info.GetFailoverTimeout() * float64(time.Second))
	id := fw.id
	fw.failoverTimer = m.clock.AfterFunc(d, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		f := m.frameworks[id]
		if f == nil || f != fw || f.stream != nil {
			return
		}
		m.log.Info().Str("framework_id", id).Dur("failover_timeout", d).Msg("framework did not re-subscribe in time; removing it")
		m.removeFrameworkLocked(f, "failover timeout expired")
	})
}

// removeFrameworkLocked kills the framework's tasks, returns its resources and
// forgets it. Caller holds m.mu.
func (m *Master) removeFrameworkLocked(fw *framework, why string) {
	if fw.failoverTimer != nil {
		fw.failoverTimer.Stop()
	}
	m.forgetOperationsLocked(fw.id) // opfeedback.go
	for _, o := range fw.offers {
		m.removeOfferLocked(o, true, nil)
	}
	hosts := map[string]bool{}
	m.completeRemovedTasksLocked(fw, hosts) // history.go
	for id := range hosts {
		if a := m.agents[id]; a != nil && a.stream != nil {
			a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_SHUTDOWN_FRAMEWORK, FrameworkId: fw.id})
		}
	}
	for _, a := range m.agents {
		for k := range a.executors {
			if len(k) > len(fw.id) && k[:len(fw.id)+1] == fw.id+"/" {
				delete(a.executors, k)
			}
		}
	}
	m.allocOK("remove_framework", m.alloc.RemoveFramework(fw.id), "framework_id", fw.id)
	delete(m.frameworks, fw.id)
	m.removedFrameworks[fw.id] = true
	m.completed.frameworkRemoved(fw.id, &fw.info)
	if fw.stream != nil {
		fw.stream.Close("framework removed: " + why)
	}
	m.rep.propose(&api.Command{Type: api.CommandType_FRAMEWORK_REMOVE, Id: fw.id, Limit: int32(m.completed.maxFws)})
	m.publishFrameworkLocked(evFrameworkRemoved, fw)
	m.log.Info().Str("framework_id", fw.id).Str("why", why).Msg("framework removed")
	m.triggerAllocation()
}

// disconnected handles the end of a framework's subscription: its offers go
// back, it gets no more, and its failover timeout starts. Takes m.mu.
func (m *Master) disconnected(id string, stream *api.Stream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := m.frameworks[id]
	if fw == nil || fw.stream != stream {
		return
	}
	fw.stream = nil
	fw.subscribing, fw.held = false, nil
	fw.disconnectedAt = m.clock.Now()
	for _, o := range fw.offers {
		m.removeOfferLocked(o, true, nil)
	}
	m.allocOK("deactivate_framework", m.alloc.DeactivateFramework(id), "framework_id", id)
	m.log.Info().Str("framework_id", id).Float64("failover_timeout_s", fw.info.GetFailoverTimeout()).Msg("framework disconnected")
	if fw.info.GetFailoverTimeout() <= 0 {
		m.removeFrameworkLocked(fw, "disconnected with no failover timeout")
		return
	}
	m.rep.propose(&api.Command{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: m.frameworkRecordLocked(fw)})
	m.startFailoverTimerLocked(fw)
}

// updateFrameworkLocked applies UPDATE_FRAMEWORK: new info, maybe new
// roles, and exactly the suppressed roles it names. Caller holds m.mu.
func (m *Master) updateFrameworkLocked(fw *framework, up *scheduler.Call_UpdateFramework) error {
	info := up.FrameworkInfo
	if id := info.GetID().GetValue(); id != "" && id != fw.id {
		return api.Errorf(http.StatusBadRequest, "UPDATE_FRAMEWORK: framework_info.id %q does not match framework_id %q", id, fw.id)
	}
	if err := validateFrameworkRoles("UPDATE_FRAMEWORK", &info, up.SuppressedRoles); err != nil {
		return err
	}
	js, err := labelJobSize("UPDATE_FRAMEWORK", &info)
	if err != nil {
		return err
	}
	allow := func(role string) error { return m.authorize(fw.subject, auth.RegisterFrameworks, role, false) }
	if err := m.changeRolesLocked(fw, info, allow); err != nil {
		return err
	}
	old := oldLabelJobSize(fw)
	fw.setInfo(info)
	m.jobTypeLocked(fw)
	m.allocOK("set_job_size", m.labelsDeclareLocked(fw, old, js), "framework_id", fw.id)
	m.setSuppressedLocked(fw, up.SuppressedRoles)
	m.triggerAllocation()
	m.rep.propose(&api.Command{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: m.frameworkRecordLocked(fw)})
	m.publishFrameworkLocked(evFrameworkUpdated, fw)
	return nil
}

// admitFramework subscribes a framework (id "" for a new one) on stream:
// it attaches the framework's live state, makes its id durable and only
// then answers SUBSCRIBED on the stream. It returns the framework's id and
// the stream id calls must carry. Takes m.mu.
func (m *Master) admitFramework(id string, info mesos.FrameworkInfo, suppressedRoles []string, stream *api.Stream) (string, string, error) {
	stream.OmitEmpty = true // as Mesos: JSON events without unset fields
	streamID := newID()
	js, err := labelJobSize("SUBSCRIBE", &info)
	if err != nil {
		return "", "", err
	}
	m.mu.Lock()
	old := oldLabelJobSize(m.frameworks[id])
	fw, failover, err := m.attachFrameworkLocked(id, info)
	if err != nil {
		m.mu.Unlock()
		return "", "", err
	}
	id = fw.id
	m.jobTypeLocked(fw)
	m.allocOK("set_job_size", m.labelsDeclareLocked(fw, old, js), "framework_id", id)
	fw.stream, fw.streamID = stream, streamID
	fw.subscribing, fw.held = true, nil
	fw.disconnectedAt = time.Time{}
	m.setSuppressedLocked(fw, suppressedRoles)
	rec := m.frameworkRecordLocked(fw)
	if failover {
		m.publishFrameworkLocked(evFrameworkUpdated, fw)
	} else {
		m.publishFrameworkLocked(evFrameworkAdded, fw)
	}
	m.mu.Unlock()

	// The framework id must be durable before the framework learns it.
	if err := m.rep.proposeWait(&api.Command{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: rec}); err != nil {
		m.log.Error().Err(err).Str("framework_id", id).Msg("registry write failed")
		m.disconnected(id, stream)
		return "", "", api.Errorf(http.StatusServiceUnavailable, "registry unavailable: %v", err)
	}
	if m.hookBeforeSubscribed != nil {
		m.hookBeforeSubscribed()
	}
	m.mu.Lock()
	m.sendSubscribedLocked(fw, stream)
	m.mu.Unlock()
	m.log.Info().Str("framework_id", id).Str("name", info.Name).Str("role", fw.role).Bool("failover", failover).Msg("framework subscribed")
	m.triggerAllocation()
	return id, streamID, nil
}

// sendSubscribedLocked answers SUBSCRIBED on stream, then the events held
// for the framework while its id was being committed, unless a newer
// subscription replaced stream meanwhile (it was closed then). Caller holds
// m.mu.
func (m *Master) sendSubscribedLocked(fw *framework, stream *api.Stream) {
	if fw.stream != stream {
		return
	}
	hb := m.cfg.HeartbeatInterval.Seconds()
	stream.Send(&scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{
		FrameworkID: &mesos.FrameworkID{Value: fw.id}, HeartbeatIntervalSeconds: &hb, MasterInfo: &m.info}})
	held := fw.held
	fw.subscribing, fw.held = false, nil
	for _, ev := range held {
		stream.Send(ev)
	}
}

// attachFrameworkLocked finds the subscribing framework (failover: it was
// known, and its old subscription and offers end) or adds a new one.
// Caller holds m.mu.
func (m *Master) attachFrameworkLocked(id string, info mesos.FrameworkInfo) (fw *framework, failover bool, err error) {
	if id != "" && m.removedFrameworks[id] {
		return nil, false, api.Errorf(http.StatusForbidden, "framework %s has been removed (torn down or failover timeout expired); subscribe without an id", id)
	}
	now := m.clock.Now()
	fw = m.frameworks[id]
	if id == "" {
		m.seq++
		id = fmt.Sprintf("%s-%04d", m.id, m.seq)
	}
	if fw == nil {
		fw = m.newFramework(id, info)
		fw.registered = now
		m.frameworks[id] = fw
		if err := m.addFrameworkLocked(fw); err != nil {
			delete(m.frameworks, id)
			return nil, false, api.Errorf(http.StatusBadRequest, "adding framework: %v", err)
		}
		return fw, false, nil
	}
	// SUBSCRIBE authorized every role of info before it came here.
	if err := m.changeRolesLocked(fw, info, nil); err != nil {
		return nil, false, err
	}
	if fw.stream != nil {
		m.deliverPendingLocked(fw) // the old stream's last OFFERS before its ERROR
		fw.stream.Send(&scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: "framework failed over: a new subscription replaced this one"}})
		fw.stream.Close("framework failed over")
	}
	if fw.failoverTimer != nil {
		fw.failoverTimer.Stop()
		fw.failoverTimer = nil
	}
	fw.setInfo(info)
	for _, o := range fw.offers {
		m.removeOfferLocked(o, true, nil)
	}
	m.allocOK("activate_framework", m.alloc.ActivateFramework(id), "framework_id", id)
	return fw, true, nil
}
