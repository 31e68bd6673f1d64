package master

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/resources"
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

// disconnected handles the end of a framework's subscription: its offers go
// back, it gets no more, and its failover timeout starts.
func (m *Master) disconnected(id string, stream *api.Stream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := m.frameworks[id]
	if fw == nil || fw.stream != stream {
		return
	}
	fw.stream = nil
	fw.disconnectedAt = time.Now()
	for _, o := range fw.offers {
		m.removeOffer(o, true, nil)
	}
	m.alloc.DeactivateFramework(id)
	m.log.Info().Str("framework_id", id).Float64("failover_timeout_s", fw.info.GetFailoverTimeout()).Msg("framework disconnected")
	if fw.info.GetFailoverTimeout() <= 0 {
		m.removeFramework(fw, "disconnected with no failover timeout")
		return
	}
	m.rep.propose(&api.Command{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: m.frameworkRecord(fw)})
	m.startFailoverTimer(fw)
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

func filterOf(f *mesos.Filters) *allocator.Filter {
	rs := allocator.DefaultRefuseSeconds
	if f != nil && f.RefuseSeconds != nil {
		rs = *f.RefuseSeconds
	}
	return &allocator.Filter{RefuseSeconds: rs}
}

// taskResources sums a mesos resource list over all roles.
func taskResources(list []mesos.Resource) (resources.Resources, error) {
	byRole, err := resources.FromMesos(list)
	if err != nil {
		return resources.Resources{}, err
	}
	var sum resources.Resources
	for _, r := range byRole {
		sum = sum.Add(r)
	}
	return sum, nil
}

func validTaskID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("task_id is empty")
	case id == "." || id == "..":
		return fmt.Errorf("task_id %q is not allowed", id)
	case strings.ContainsAny(id, "/\x00"):
		return fmt.Errorf("task_id %q contains '/' or NUL", id)
	}
	return nil
}

type plannedLaunch struct {
	tasks    []mesos.TaskInfo
	group    bool
	executor *mesos.ExecutorInfo
}

// accept validates an ACCEPT completely before changing anything, so a
// rejected call leaves the offers outstanding and the framework can retry.
func (m *Master) accept(fw *framework, acc *scheduler.Call_Accept) error {
	var offered resources.Resources
	var agentID string
	seen := map[string]bool{}
	for _, oid := range acc.OfferIDs {
		o := fw.offers[oid.Value]
		if o == nil {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: offer %q does not exist or was rescinded", oid.Value)
		}
		if seen[oid.Value] {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: offer %q is listed twice", oid.Value)
		}
		seen[oid.Value] = true
		if agentID != "" && o.agent != agentID {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: offers %v are on different agents", acc.OfferIDs)
		}
		agentID = o.agent
		offered = offered.Add(o.res)
	}
	a := m.agents[agentID]
	if a == nil || a.stream == nil {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: agent %s of the offer is gone", agentID)
	}
	remaining := offered
	newIDs := map[string]bool{}
	newExecutors := map[string]bool{}
	var plans []plannedLaunch
	checkTask := func(t *mesos.TaskInfo, ex *mesos.ExecutorInfo) error {
		if err := validTaskID(t.TaskID.Value); err != nil {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: %v", err)
		}
		if _, used := fw.tasks[t.TaskID.Value]; used || newIDs[t.TaskID.Value] {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task id %q is already in use by framework %s", t.TaskID.Value, fw.id)
		}
		newIDs[t.TaskID.Value] = true
		if t.AgentID.Value != agentID {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q names agent %q but the offer is on agent %q", t.TaskID.Value, t.AgentID.Value, agentID)
		}
		if ex == nil && t.Command == nil && t.Executor == nil {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q has neither command nor executor", t.TaskID.Value)
		}
		if ex == nil && t.Command != nil && t.Executor != nil {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q has both command and executor; give one", t.TaskID.Value)
		}
		need, err := taskResources(t.Resources)
		if err != nil {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q: %v", t.TaskID.Value, err)
		}
		if need.IsEmpty() {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q uses no resources", t.TaskID.Value)
		}
		if ex == nil {
			ex = t.Executor
		}
		if ex != nil {
			if ex.ExecutorID.Value == "" {
				return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q: executor has no executor_id", t.TaskID.Value)
			}
			key := fw.id + "/" + ex.ExecutorID.Value
			if _, running := a.executors[key]; !running && !newExecutors[key] {
				exRes, err := taskResources(ex.Resources)
				if err != nil {
					return api.Errorf(http.StatusBadRequest, "ACCEPT: executor %q: %v", ex.ExecutorID.Value, err)
				}
				need = need.Add(exRes)
				newExecutors[key] = true
			}
		}
		if !remaining.Contains(need) {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q needs %s (with any new executor) but only %s remains of the offered resources",
				t.TaskID.Value, need, remaining)
		}
		remaining = remaining.Sub(need)
		return nil
	}
	for i := range acc.Operations {
		op := &acc.Operations[i]
		switch op.GetType() {
		case mesos.Offer_Operation_LAUNCH:
			if op.Launch == nil {
				return api.Errorf(http.StatusBadRequest, "ACCEPT: LAUNCH operation without launch")
			}
			for j := range op.Launch.TaskInfos {
				if err := checkTask(&op.Launch.TaskInfos[j], nil); err != nil {
					return err
				}
			}
			plans = append(plans, plannedLaunch{tasks: op.Launch.TaskInfos})
		case mesos.Offer_Operation_LAUNCH_GROUP:
			lg := op.LaunchGroup
			if lg == nil || len(lg.TaskGroup.Tasks) == 0 {
				return api.Errorf(http.StatusBadRequest, "ACCEPT: LAUNCH_GROUP operation without tasks")
			}
			for j := range lg.TaskGroup.Tasks {
				t := &lg.TaskGroup.Tasks[j]
				if t.Executor != nil {
					return api.Errorf(http.StatusBadRequest, "ACCEPT: LAUNCH_GROUP task %q must not carry its own executor", t.TaskID.Value)
				}
				if err := checkTask(t, &lg.Executor); err != nil {
					return err
				}
			}
			ex := lg.Executor
			plans = append(plans, plannedLaunch{tasks: lg.TaskGroup.Tasks, group: true, executor: &ex})
		default:
			return api.Errorf(http.StatusBadRequest, "ACCEPT: operation %s is not supported yet (only LAUNCH and LAUNCH_GROUP)", op.GetType())
		}
	}

	// Valid: consume the offers, launch, and return what is left.
	for _, oid := range acc.OfferIDs {
		m.removeOffer(fw.offers[oid.Value], false, nil)
	}
	fwInfo, _ := fw.info.Marshal()
	for _, p := range plans {
		if p.group {
			tg := mesos.TaskGroupInfo{Tasks: p.tasks}
			exB, _ := p.executor.Marshal()
			tgB, _ := tg.Marshal()
			m.addExecutor(a, fw.id, p.executor)
			for i := range p.tasks {
				m.addTask(fw, a, &p.tasks[i], p.executor.ExecutorID.Value)
			}
			a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_RUN, FrameworkId: fw.id, ExecutorId: p.executor.ExecutorID.Value,
				FrameworkInfo: fwInfo, ExecutorInfo: exB, TaskGroup: tgB})
			continue
		}
		for i := range p.tasks {
			t := &p.tasks[i]
			ev := &api.AgentEvent{Type: api.AgentEventType_RUN, FrameworkId: fw.id, FrameworkInfo: fwInfo}
			exID := ""
			if t.Executor != nil {
				t.Executor.FrameworkID = &mesos.FrameworkID{Value: fw.id}
				m.addExecutor(a, fw.id, t.Executor)
				exID = t.Executor.ExecutorID.Value
				ev.ExecutorId = exID
				ev.ExecutorInfo, _ = t.Executor.Marshal()
			}
			ev.Task, _ = t.Marshal()
			m.addTask(fw, a, t, exID)
			a.stream.SendProto(ev)
		}
	}
	if !remaining.IsEmpty() {
		if err := m.alloc.Recover(fw.id, agentID, remaining, filterOf(acc.Filters)); err != nil {
			m.log.Warn().Err(err).Msg("recovering unused offer resources")
		}
	}
	m.triggerAllocation()
	return nil
}

func (m *Master) addExecutor(a *agentState, fwID string, ex *mesos.ExecutorInfo) {
	key := fwID + "/" + ex.ExecutorID.Value
	if _, ok := a.executors[key]; ok {
		return
	}
	res, _ := taskResources(ex.Resources)
	a.executors[key] = res
}

func (m *Master) addTask(fw *framework, a *agentState, ti *mesos.TaskInfo, exID string) {
	res, _ := taskResources(ti.Resources)
	t := &task{id: ti.TaskID.Value, fw: fw.id, agent: a.rec.Id, executor: exID, info: *ti, res: res, state: mesos.TASK_STAGING}
	fw.tasks[t.id] = t
	m.m.tasksLaunched.Inc()
	m.rep.propose(&api.Command{Type: api.CommandType_TASK_UPSERT, Task: taskRecord(t)})
	m.publishTask(evTaskAdded, t)
}

func (m *Master) kill(fw *framework, k *scheduler.Call_Kill) error {
	t := fw.tasks[k.TaskID.Value]
	if t == nil || taskstate.IsTerminal(t.state) {
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
	if t != nil && taskstate.IsTerminal(t.state) && t.status != nil && string(t.status.UUID) == string(ack.UUID) {
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

// request declares the framework's per-task demand (characterized mode):
// the first request's resources are the task vector; its quantity may be
// given as a scalar resource named "tasks" (unlimited when absent).
func (m *Master) request(fw *framework, rq *scheduler.Call_Request) error {
	if len(rq.Requests) == 0 {
		return m.alloc.SetDemand(fw.id, allocator.Demand{})
	}
	var d allocator.Demand
	d.Tasks = -1
	var list []mesos.Resource
	for _, res := range rq.Requests[0].Resources {
		if res.Name == "tasks" && res.GetType() == mesos.SCALAR {
			d.Tasks = int(res.GetScalar().GetValue())
			continue
		}
		list = append(list, res)
	}
	r, err := taskResources(list)
	if err != nil {
		return api.Errorf(http.StatusBadRequest, "REQUEST: %v", err)
	}
	d.Task = r
	if err := m.alloc.SetDemand(fw.id, d); err != nil {
		return api.Errorf(http.StatusBadRequest, "REQUEST: %v", err)
	}
	m.triggerAllocation()
	return nil
}
