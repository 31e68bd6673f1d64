package master

import (
	"fmt"
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

type (
	schedEvent   = scheduler.Event
	schedOffers  = scheduler.Event_Offers
	schedRescind = scheduler.Event_Rescind
)

const (
	evOffers  = scheduler.Event_OFFERS
	evRescind = scheduler.Event_RESCIND
	evUpdate  = scheduler.Event_UPDATE
)

const headerStreamID = "Mesos-Stream-Id"

// handleScheduler serves POST /api/v1/scheduler.
func (m *Master) handleScheduler(w http.ResponseWriter, r *http.Request) {
	req, err := api.ReadRequest(w, r)
	if err != nil {
		m.m.badRequests.WithLabelValues("scheduler").Inc()
		api.WriteError(w, err)
		return
	}
	var call scheduler.Call
	if err := req.Decode(&call, "scheduler.Call"); err != nil {
		m.m.badRequests.WithLabelValues("scheduler").Inc()
		api.WriteError(w, err)
		return
	}
	if _, known := scheduler.Call_Type_name[int32(call.Type)]; !known || call.Type == scheduler.Call_UNKNOWN {
		m.m.badRequests.WithLabelValues("scheduler").Inc()
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "unknown call type %d: expected one of SUBSCRIBE, ACCEPT, DECLINE, ...", call.Type))
		return
	}
	m.m.calls.WithLabelValues(call.Type.String()).Inc()
	if call.Type == scheduler.Call_SUBSCRIBE {
		m.subscribe(w, r, req, &call)
		return
	}
	if err := m.schedulerCall(r, &call); err != nil {
		m.m.badRequests.WithLabelValues("scheduler").Inc()
		m.log.Debug().Err(err).Str("call", call.Type.String()).Msg("scheduler call rejected")
		api.WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (m *Master) subscribe(w http.ResponseWriter, r *http.Request, req *api.Request, call *scheduler.Call) {
	sub := call.Subscribe
	if sub == nil || sub.FrameworkInfo == nil {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "SUBSCRIBE call without subscribe.framework_info"))
		return
	}
	info := *sub.FrameworkInfo
	id := info.GetID().GetValue()
	if cid := call.GetFrameworkID().GetValue(); cid != "" {
		if id != "" && id != cid {
			api.WriteError(w, api.Errorf(http.StatusBadRequest, "framework_id %q does not match subscribe.framework_info.id %q", cid, id))
			return
		}
		id = cid
	}
	if info.User == "" {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "subscribe.framework_info.user is required"))
		return
	}
	if ft := info.GetFailoverTimeout(); ft < 0 || ft != ft {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "subscribe.framework_info.failover_timeout must be a non-negative number of seconds"))
		return
	}
	stream := api.NewStream(req.Out, 16384)
	streamID := newID()

	m.mu.Lock()
	if id != "" && m.removedFrameworks[id] {
		m.mu.Unlock()
		api.WriteError(w, api.Errorf(http.StatusForbidden, "framework %s has been removed (torn down or failover timeout expired); subscribe without an id", id))
		return
	}
	now := time.Now()
	fw := m.frameworks[id]
	if id == "" {
		m.seq++
		id = fmt.Sprintf("%s-%04d", m.id, m.seq)
	}
	failover := fw != nil
	if fw != nil {
		probe := &framework{id: id}
		probe.setInfo(info)
		if probe.role != fw.role {
			m.mu.Unlock()
			api.WriteError(w, api.Errorf(http.StatusBadRequest, "framework %s is in role %q; changing roles (to %q) on re-subscription is not supported yet", id, fw.role, probe.role))
			return
		}
		if fw.stream != nil {
			fw.stream.Send(&scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: "framework failed over: a new subscription replaced this one"}})
			fw.stream.Close("framework failed over")
		}
		if fw.failoverTimer != nil {
			fw.failoverTimer.Stop()
			fw.failoverTimer = nil
		}
		fw.setInfo(info)
		for _, o := range fw.offers {
			m.removeOffer(o, true, nil)
		}
		m.alloc.ActivateFramework(id)
	} else {
		fw = m.newFramework(id, info)
		fw.registered = now
		m.frameworks[id] = fw
		if err := m.alloc.AddFramework(id, fw.role); err != nil {
			delete(m.frameworks, id)
			m.mu.Unlock()
			api.WriteError(w, api.Errorf(http.StatusBadRequest, "adding framework: %v", err))
			return
		}
	}
	fw.stream, fw.streamID = stream, streamID
	fw.disconnectedAt = time.Time{}
	fw.suppressed = false
	if len(sub.SuppressedRoles) > 0 {
		m.alloc.Suppress(id)
		fw.suppressed = true
	} else {
		m.alloc.Revive(id)
	}
	rec := m.frameworkRecord(fw)
	if failover {
		m.publishFramework(evFrameworkUpdated, fw)
	} else {
		m.publishFramework(evFrameworkAdded, fw)
	}
	m.mu.Unlock()

	// The framework id must be durable before the framework learns it.
	if err := m.rep.proposeWait(&api.Command{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: rec}); err != nil {
		m.log.Error().Err(err).Str("framework_id", id).Msg("registry write failed")
		m.disconnected(id, stream)
		api.WriteError(w, api.Errorf(http.StatusServiceUnavailable, "registry unavailable: %v", err))
		return
	}
	hb := m.cfg.HeartbeatInterval.Seconds()
	stream.Send(&scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{
		FrameworkID: &mesos.FrameworkID{Value: id}, HeartbeatIntervalSeconds: &hb, MasterInfo: &m.info}})
	m.log.Info().Str("framework_id", id).Str("name", info.Name).Str("role", fw.role).Bool("failover", failover).Msg("framework subscribed")
	m.triggerAllocation()

	done := make(chan struct{})
	go func() {
		t := time.NewTicker(m.cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-stream.Done():
				return
			case <-t.C:
				stream.Send(&scheduler.Event{Type: scheduler.Event_HEARTBEAT})
			}
		}
	}()
	stream.Serve(w, r, req.RecordIO, map[string]string{headerStreamID: streamID})
	close(done)
	m.disconnected(id, stream)
}

// schedulerCall validates and applies every call but SUBSCRIBE.
func (m *Master) schedulerCall(r *http.Request, call *scheduler.Call) error {
	fwID := call.GetFrameworkID().GetValue()
	if fwID == "" {
		return api.Errorf(http.StatusBadRequest, "%s call without framework_id", call.Type)
	}
	if err := validateCallBody(call); err != nil {
		return err
	}
	sid := r.Header.Get(headerStreamID)
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := m.frameworks[fwID]
	if fw == nil || fw.stream == nil {
		return api.Errorf(http.StatusForbidden, "framework %s is not subscribed: SUBSCRIBE first", fwID)
	}
	if sid == "" {
		return api.Errorf(http.StatusBadRequest, "missing %s header: send the one SUBSCRIBE answered with", headerStreamID)
	}
	if sid != fw.streamID {
		return api.Errorf(http.StatusBadRequest, "%s %q does not match the framework's current subscription", headerStreamID, sid)
	}
	switch call.Type {
	case scheduler.Call_TEARDOWN:
		m.removeFramework(fw, "TEARDOWN")
	case scheduler.Call_ACCEPT:
		return m.accept(fw, call.Accept)
	case scheduler.Call_DECLINE:
		fl := filterOf(call.Decline.Filters)
		for _, id := range call.Decline.OfferIDs {
			if o := fw.offers[id.Value]; o != nil {
				m.removeOffer(o, true, fl)
			}
		}
		m.triggerAllocation()
	case scheduler.Call_REVIVE:
		fw.suppressed = false
		m.alloc.Revive(fw.id)
		m.triggerAllocation()
	case scheduler.Call_SUPPRESS:
		fw.suppressed = true
		m.alloc.Suppress(fw.id)
	case scheduler.Call_KILL:
		return m.kill(fw, call.Kill)
	case scheduler.Call_SHUTDOWN:
		a := m.agents[call.Shutdown.AgentID.Value]
		if a == nil {
			return api.Errorf(http.StatusBadRequest, "SHUTDOWN: agent %s is not registered", call.Shutdown.AgentID.Value)
		}
		if a.stream != nil {
			a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_SHUTDOWN_EXECUTOR, FrameworkId: fw.id, ExecutorId: call.Shutdown.ExecutorID.Value})
		}
	case scheduler.Call_ACKNOWLEDGE:
		return m.acknowledge(fw, call.Acknowledge)
	case scheduler.Call_RECONCILE:
		m.reconcile(fw, call.Reconcile)
	case scheduler.Call_MESSAGE:
		a := m.agents[call.Message.AgentID.Value]
		if a == nil || a.stream == nil {
			return api.Errorf(http.StatusBadRequest, "MESSAGE: agent %s is not registered or not connected", call.Message.AgentID.Value)
		}
		a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_FRAMEWORK_MESSAGE, FrameworkId: fw.id,
			ExecutorId: call.Message.ExecutorID.Value, Data: call.Message.Data})
	case scheduler.Call_REQUEST:
		return m.request(fw, call.Request)
	case scheduler.Call_UPDATE_FRAMEWORK:
		info := call.UpdateFramework.FrameworkInfo
		if id := info.GetID().GetValue(); id != "" && id != fw.id {
			return api.Errorf(http.StatusBadRequest, "UPDATE_FRAMEWORK: framework_info.id %q does not match framework_id %q", id, fw.id)
		}
		probe := &framework{id: fw.id}
		probe.setInfo(info)
		if probe.role != fw.role {
			return api.Errorf(http.StatusBadRequest, "UPDATE_FRAMEWORK: changing roles (%q to %q) is not supported yet", fw.role, probe.role)
		}
		fw.setInfo(info)
		if len(call.UpdateFramework.SuppressedRoles) > 0 {
			fw.suppressed = true
			m.alloc.Suppress(fw.id)
		}
		m.rep.propose(&api.Command{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: m.frameworkRecord(fw)})
		m.publishFramework(evFrameworkUpdated, fw)
	case scheduler.Call_ACCEPT_INVERSE_OFFERS, scheduler.Call_DECLINE_INVERSE_OFFERS,
		scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS, scheduler.Call_RECONCILE_OPERATIONS:
		// No inverse offers or operation feedback yet: nothing to do.
	default:
		return api.Errorf(http.StatusBadRequest, "call type %s is not supported", call.Type)
	}
	return nil
}

// validateCallBody checks that the call carries the message its type needs.
func validateCallBody(call *scheduler.Call) error {
	missing := func(field string) error {
		return api.Errorf(http.StatusBadRequest, "%s call without %s", call.Type, field)
	}
	switch call.Type {
	case scheduler.Call_ACCEPT:
		if call.Accept == nil {
			return missing("accept")
		}
		if len(call.Accept.OfferIDs) == 0 {
			return missing("accept.offer_ids")
		}
	case scheduler.Call_DECLINE:
		if call.Decline == nil {
			return missing("decline")
		}
	case scheduler.Call_KILL:
		if call.Kill == nil || call.Kill.TaskID.Value == "" {
			return missing("kill.task_id")
		}
	case scheduler.Call_SHUTDOWN:
		if call.Shutdown == nil || call.Shutdown.ExecutorID.Value == "" || call.Shutdown.AgentID.Value == "" {
			return missing("shutdown.executor_id and shutdown.agent_id")
		}
	case scheduler.Call_ACKNOWLEDGE:
		if call.Acknowledge == nil || call.Acknowledge.TaskID.Value == "" || call.Acknowledge.AgentID.Value == "" || len(call.Acknowledge.UUID) == 0 {
			return missing("acknowledge.agent_id, task_id and uuid")
		}
	case scheduler.Call_RECONCILE:
		if call.Reconcile == nil {
			call.Reconcile = &scheduler.Call_Reconcile{}
		}
	case scheduler.Call_MESSAGE:
		if call.Message == nil || call.Message.AgentID.Value == "" || call.Message.ExecutorID.Value == "" {
			return missing("message.agent_id and message.executor_id")
		}
	case scheduler.Call_REQUEST:
		if call.Request == nil {
			return missing("request")
		}
	case scheduler.Call_UPDATE_FRAMEWORK:
		if call.UpdateFramework == nil {
			return missing("update_framework")
		}
	}
	return nil
}

func (m *Master) kill(fw *framework, k *scheduler.Call_Kill) error {
	t := fw.tasks[k.TaskID.Value]
	if t == nil || isTerminal(t.state) {
		// Mesos answers an unknown task with TASK_LOST so the framework can
		// clean up.
		agentID := k.GetAgentID()
		st := mesos.TaskStatus{TaskID: k.TaskID, State: mesos.TASK_LOST.Enum(), AgentID: agentID,
			Source: mesos.SOURCE_MASTER.Enum(), Reason: mesos.REASON_RECONCILIATION.Enum(), Message: strPtr("kill: task unknown to the master")}
		if t != nil {
			st.State = t.state.Enum()
		}
		m.sendFramework(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
		return nil
	}
	a := m.agents[t.agent]
	if a == nil || a.stream == nil {
		return api.Errorf(http.StatusServiceUnavailable, "KILL: agent %s of task %s is disconnected; retry", t.agent, t.id)
	}
	ev := &api.AgentEvent{Type: api.AgentEventType_KILL, FrameworkId: fw.id, ExecutorId: t.executor, TaskId: t.id}
	if kp := k.GetKillPolicy(); kp != nil && kp.GracePeriod != nil {
		ev.GraceNanos = kp.GracePeriod.Nanoseconds
	}
	a.stream.SendProto(ev)
	return nil
}

func (m *Master) acknowledge(fw *framework, ack *scheduler.Call_Acknowledge) error {
	a := m.agents[ack.AgentID.Value]
	if a == nil {
		return api.Errorf(http.StatusBadRequest, "ACKNOWLEDGE: agent %s is not registered", ack.AgentID.Value)
	}
	t := fw.tasks[ack.TaskID.Value]
	ev := &api.AgentEvent{Type: api.AgentEventType_ACKNOWLEDGE, FrameworkId: fw.id, TaskId: ack.TaskID.Value, Uuid: ack.UUID}
	if t != nil && isTerminal(t.state) && t.status != nil && string(t.status.UUID) == string(ack.UUID) {
		delete(fw.tasks, t.id)
		m.addCompleted(t)
		// The agent forgets a task once its terminal update is
		// acknowledged, so tell it only when the registry has forgotten the
		// task too. A leader cut off from its peers cannot commit: the agent
		// then keeps the update and gives it to the next leader, instead of
		// that leader finding the task gone and calling it lost.
		stream := a.stream
		m.rep.proposeThen(&api.Command{Type: api.CommandType_TASK_REMOVE, Id: taskKey(fw.id, t.id)}, func(err error) {
			if err != nil {
				m.log.Warn().Err(err).Str("task_id", ev.TaskId).Msg("terminal update not forgotten in the registry; the agent keeps it")
				return
			}
			if stream != nil {
				stream.SendProto(ev)
			}
		})
		return nil
	}
	if a.stream != nil {
		a.stream.SendProto(ev)
	}
	return nil
}

func (m *Master) reconcile(fw *framework, rc *scheduler.Call_Reconcile) {
	send := func(t *task) {
		st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: t.id}, State: t.state.Enum(), AgentID: &mesos.AgentID{Value: t.agent},
			Source: mesos.SOURCE_MASTER.Enum(), Reason: mesos.REASON_RECONCILIATION.Enum()}
		if t.status != nil {
			st.Message, st.Timestamp = t.status.Message, t.status.Timestamp
		}
		if t.executor != "" {
			st.ExecutorID = &mesos.ExecutorID{Value: t.executor}
		}
		m.sendFramework(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
	}
	if len(rc.Tasks) == 0 {
		for _, t := range fw.tasks {
			send(t)
		}
		return
	}
	for _, rt := range rc.Tasks {
		if t := fw.tasks[rt.TaskID.Value]; t != nil {
			send(t)
			continue
		}
		// An agent that has not re-registered with a newly elected leader
		// may still run the task (the old leader could have launched it
		// without the registry knowing): say nothing until it is back, as
		// Mesos does, rather than report lost a task that is running.
		if m.awaitingAgent(rt.AgentID) {
			continue
		}
		st := mesos.TaskStatus{TaskID: rt.TaskID, State: mesos.TASK_LOST.Enum(), AgentID: rt.AgentID,
			Source: mesos.SOURCE_MASTER.Enum(), Reason: mesos.REASON_RECONCILIATION.Enum(), Message: strPtr("task is unknown to the master")}
		m.sendFramework(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
	}
}

// awaitingAgent reports whether the named agent (any agent, if none is
// named) is in the registry but has not re-registered since this master
// took over. Caller holds m.mu.
func (m *Master) awaitingAgent(id *mesos.AgentID) bool {
	if id != nil && id.Value != "" {
		a := m.agents[id.Value]
		return a != nil && a.stream == nil && !a.inAlloc
	}
	for _, a := range m.agents {
		if a.stream == nil && !a.inAlloc {
			return true
		}
	}
	return false
}
