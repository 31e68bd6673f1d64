package master

import (
	"errors"
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/auth"
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
	charged, allowed := m.chargeSchedulerEarly(w, r)
	if !allowed {
		return
	}
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
	// Charged early, the call needs no m.mu to find whom to charge: taking
	// it here would queue every call on the lock twice.
	if !charged {
		if p, claimed := m.schedulerPrincipal(r, &call); !m.allow(w, r, p, claimed) {
			return
		}
	}
	m.m.calls.WithLabelValues(call.Type.String()).Inc()
	if call.Type == scheduler.Call_SUBSCRIBE {
		m.subscribe(w, r, req, &call)
		return
	}
	err = m.schedulerCallAs(r, r.Header.Get(headerStreamID), &call)
	var principalErr wrongPrincipal
	if errors.As(err, &principalErr) {
		api.WriteError(w, principalErr.error)
		return
	}
	if err != nil {
		m.m.badRequests.WithLabelValues("scheduler").Inc()
		m.log.Debug().Err(err).Str("call", call.Type.String()).Msg("scheduler call rejected")
		api.WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// subscribe serves SUBSCRIBE: it admits the framework and then streams its
// events, with heartbeats, until the connection ends.
func (m *Master) subscribe(w http.ResponseWriter, r *http.Request, req *api.Request, call *scheduler.Call) {
	id, info, err := subscribeInfo(call)
	if err == nil {
		err = m.subscribePrincipal(r, id, &info)
	}
	if err != nil {
		api.WriteError(w, err)
		return
	}
	who := auth.SubjectFrom(r.Context())
	if err := m.authorizeSubscribe(who, &info); err != nil {
		api.WriteError(w, err)
		return
	}
	p, _ := m.schedulerPrincipal(r, call)
	release, ok := m.admitStream(w, r, p)
	if !ok {
		return
	}
	defer release()
	stream := api.NewStream(req.Out, 16384)
	id, streamID, err := m.admitFramework(id, info, call.Subscribe.SuppressedRoles, stream)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	m.mu.Lock()
	m.setSubjectLocked(id, who) // before the client has the stream id to call with
	m.mu.Unlock()
	defer m.lim.streamPrincipal(streamID, p)()

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

// subscribeInfo validates a SUBSCRIBE call and returns the framework id it
// names ("" for a new framework) and its FrameworkInfo.
func subscribeInfo(call *scheduler.Call) (string, mesos.FrameworkInfo, error) {
	sub := call.Subscribe
	if sub == nil || sub.FrameworkInfo == nil {
		return "", mesos.FrameworkInfo{}, api.Errorf(http.StatusBadRequest, "SUBSCRIBE call without subscribe.framework_info")
	}
	info := *sub.FrameworkInfo
	id := info.GetID().GetValue()
	if cid := call.GetFrameworkID().GetValue(); cid != "" {
		if id != "" && id != cid {
			return "", info, api.Errorf(http.StatusBadRequest, "framework_id %q does not match subscribe.framework_info.id %q", cid, id)
		}
		id = cid
	}
	if info.User == "" {
		return "", info, api.Errorf(http.StatusBadRequest, "subscribe.framework_info.user is required")
	}
	if ft := info.GetFailoverTimeout(); ft < 0 || ft != ft {
		return "", info, api.Errorf(http.StatusBadRequest, "subscribe.framework_info.failover_timeout must be a non-negative number of seconds")
	}
	if err := validateFrameworkRoles("SUBSCRIBE", &info, sub.SuppressedRoles); err != nil {
		return "", info, err
	}
	return id, info, nil
}

// schedulerCall validates and applies every call but SUBSCRIBE; sid is
// the call's Mesos-Stream-Id. Takes m.mu (batched).
func (m *Master) schedulerCall(sid string, call *scheduler.Call) error {
	return m.schedulerCallAs(nil, sid, call)
}

// wrongPrincipal is callPrincipal's refusal, told apart from the call's
// own errors because it is not counted as a bad request.
type wrongPrincipal struct{ error }

// schedulerCallAs is schedulerCall for the request r (nil: no caller to
// check): it first checks r's authenticated principal (callPrincipal), all
// under one turn of m.mu, which it shares with the other calls queued at
// the same moment (underLock). The checks run in the order they did when
// each took the lock on its own, so every call gets the same answer.
func (m *Master) schedulerCallAs(r *http.Request, sid string, call *scheduler.Call) error {
	p, authed := "", false
	if r != nil {
		p, authed = auth.PrincipalFrom(r.Context())
	}
	return m.underLock(func() error {
		if authed {
			if err := m.callPrincipalLocked(p, call); err != nil {
				return wrongPrincipal{err}
			}
		}
		return m.schedulerCallLocked(sid, call)
	})
}

// schedulerCallLocked validates a call against the live state and applies
// it. Caller holds m.mu.
func (m *Master) schedulerCallLocked(sid string, call *scheduler.Call) error {
	fwID := call.GetFrameworkID().GetValue()
	if fwID == "" {
		return api.Errorf(http.StatusBadRequest, "%s call without framework_id", call.Type)
	}
	if err := validateCallBody(call); err != nil {
		return err
	}
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
	return m.applyCallLocked(fw, call)
}

// applyCallLocked applies a validated call of a subscribed framework.
// Caller holds m.mu.
func (m *Master) applyCallLocked(fw *framework, call *scheduler.Call) error {
	if err := m.authorizeCallLocked(fw, call); err != nil {
		return err
	}
	switch call.Type {
	case scheduler.Call_TEARDOWN:
		m.removeFrameworkLocked(fw, "TEARDOWN")
	case scheduler.Call_ACCEPT:
		return m.acceptLocked(fw, call.Accept) // authz.go: run_tasks, then plan and launch
	case scheduler.Call_DECLINE:
		m.declineLocked(fw, call.Decline)
	case scheduler.Call_REVIVE:
		m.reviveRolesLocked(fw, call.GetRevive().GetRoles())
		m.triggerAllocation()
	case scheduler.Call_SUPPRESS:
		m.suppressRolesLocked(fw, call.GetSuppress().GetRoles())
	case scheduler.Call_KILL:
		return m.killLocked(fw, call.Kill)
	case scheduler.Call_SHUTDOWN:
		return m.shutdownExecutorLocked(fw, call.Shutdown)
	case scheduler.Call_ACKNOWLEDGE:
		return m.acknowledgeLocked(fw, call.Acknowledge)
	case scheduler.Call_RECONCILE:
		m.reconcileLocked(fw, call.Reconcile)
	case scheduler.Call_MESSAGE:
		return m.messageLocked(fw, call.Message)
	case scheduler.Call_REQUEST:
		return m.requestLocked(fw, call.Request)
	case scheduler.Call_UPDATE_FRAMEWORK:
		return m.updateFrameworkLocked(fw, call.UpdateFramework)
	case scheduler.Call_ACCEPT_INVERSE_OFFERS, scheduler.Call_DECLINE_INVERSE_OFFERS:
		return m.inverseAnswerLocked(fw, call)
	case scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS:
		return m.acknowledgeOperationLocked(fw, call.AcknowledgeOperationStatus) // opfeedback.go
	case scheduler.Call_RECONCILE_OPERATIONS:
		m.reconcileOperationsLocked(fw, call.ReconcileOperations)
	default:
		return api.Errorf(http.StatusBadRequest, "call type %s is not supported", call.Type)
	}
	return nil
}

// shutdownExecutorLocked asks the agent to stop one of fw's executors.
// Caller holds m.mu.
func (m *Master) shutdownExecutorLocked(fw *framework, sh *scheduler.Call_Shutdown) error {
	a := m.agents[sh.AgentID.Value]
	if a == nil {
		// As Mesos: the agent may have gone meanwhile; dropped, 202.
		m.log.Warn().Str("framework_id", fw.id).Str("agent_id", sh.AgentID.Value).Msg("SHUTDOWN for an agent that is not registered: dropped")
		return nil
	}
	if a.stream != nil {
		a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_SHUTDOWN_EXECUTOR, FrameworkId: fw.id, ExecutorId: sh.ExecutorID.Value})
	}
	return nil
}

// messageLocked forwards a framework message to an executor. Caller holds
// m.mu.
func (m *Master) messageLocked(fw *framework, msg *scheduler.Call_Message) error {
	a := m.agents[msg.AgentID.Value]
	if a == nil || a.stream == nil {
		// As Mesos: framework messages are best effort; dropped, 202.
		m.log.Warn().Str("framework_id", fw.id).Str("agent_id", msg.AgentID.Value).Msg("MESSAGE for an agent that is not registered or not connected: dropped")
		return nil
	}
	a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_FRAMEWORK_MESSAGE, FrameworkId: fw.id,
		ExecutorId: msg.ExecutorID.Value, Data: msg.Data})
	return nil
}

// validateCallBody checks that the call carries the message its type needs.
func validateCallBody(call *scheduler.Call) error {
	missing := func(field string) error {
		return api.Errorf(http.StatusBadRequest, "%s call without %s", call.Type, field)
	}
	switch call.Type {
	case scheduler.Call_ACCEPT:
		// No offer_ids is not malformed to Mesos: its tasks are
		// answered "No offers specified" (acceptdrop.go).
		if call.Accept == nil {
			return missing("accept")
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

// acknowledgeLocked forwards a status acknowledgement to the agent; a
// terminal task's is forwarded only once the registry completed the task.
// Caller holds m.mu.
func (m *Master) acknowledgeLocked(fw *framework, ack *scheduler.Call_Acknowledge) error {
	a := m.agents[ack.AgentID.Value]
	if a == nil {
		// As Mesos: the agent may have gone since the update; dropped, 202.
		m.log.Warn().Str("framework_id", fw.id).Str("agent_id", ack.AgentID.Value).Msg("ACKNOWLEDGE for an agent that is not registered: dropped")
		return nil
	}
	t := fw.tasks[ack.TaskID.Value]
	ev := &api.AgentEvent{Type: api.AgentEventType_ACKNOWLEDGE, FrameworkId: fw.id, TaskId: ack.TaskID.Value, Uuid: ack.UUID}
	if t != nil && taskstate.IsTerminal(t.state) && t.status != nil && string(t.status.UUID) == string(ack.UUID) {
		done := m.completeLocked(fw, t)
		// The agent forgets a task once its terminal update is
		// acknowledged, so tell it only when the registry has moved the
		// task to its completed history too. A leader cut off from its peers cannot commit: the agent
		// then keeps the update and gives it to the next leader, instead of
		// that leader finding the task gone and calling it lost.
		stream := a.stream
		m.rep.proposeThen(done, func(err error) {
			if err != nil {
				m.log.Warn().Err(err).Str("task_id", ev.TaskId).Msg("terminal task not completed in the registry; the agent keeps its update")
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

// reconcileLocked answers RECONCILE with the state of the named tasks (all,
// if none are named). Caller holds m.mu.
func (m *Master) reconcileLocked(fw *framework, rc *scheduler.Call_Reconcile) {
	send := func(t *task) {
		st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: t.id}, State: t.state.Enum(), AgentID: &mesos.AgentID{Value: t.agent},
			Source: mesos.SOURCE_MASTER.Enum(), Reason: mesos.REASON_RECONCILIATION.Enum()}
		if t.status != nil {
			st.Message, st.Timestamp, st.UnreachableTime = t.status.Message, t.status.Timestamp, t.status.UnreachableTime
		}
		if t.executor != "" {
			st.ExecutorID = &mesos.ExecutorID{Value: t.executor}
		}
		m.sendFrameworkLocked(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
	}
	// A live task on an agent that has not re-registered with this leader
	// is known only from the registry, whose state may be older than what
	// the framework already heard (an update delivered by the old leader
	// but not yet committed): answering it could move the framework's
	// task backwards (RUNNING -> STAGING), and the agent's report on
	// re-registering does not tell the framework again. Say nothing until
	// the agent is back, as Mesos says nothing for tasks on agents still
	// recovering; reconciliation retries. A terminal state was committed
	// and is final, so it is answered.
	stale := func(t *task) bool {
		return !taskstate.IsTerminal(t.state) && m.awaitingAgentLocked(&mesos.AgentID{Value: t.agent})
	}
	if len(rc.Tasks) == 0 {
		for _, t := range fw.tasks {
			if !stale(t) {
				send(t)
			}
		}
		return
	}
	for _, rt := range rc.Tasks {
		if t := fw.tasks[rt.TaskID.Value]; t != nil {
			if !stale(t) {
				send(t)
			}
			continue
		}
		// An agent that has not re-registered with a newly elected leader
		// may still run the task (the old leader could have launched it
		// without the registry knowing): say nothing until it is back, as
		// Mesos does, rather than report lost a task that is running.
		if m.awaitingAgentLocked(rt.AgentID) {
			continue
		}
		st := m.unknownTaskStatusLocked(fw, rt.TaskID, rt.AgentID)
		m.sendFrameworkLocked(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
	}
}

// awaitingAgentLocked reports whether the named agent (any agent, if none is
// named) is in the registry but has not re-registered since this master
// took over. Caller holds m.mu.
func (m *Master) awaitingAgentLocked(id *mesos.AgentID) bool {
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
