package master

import (
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/master/registry"
	"github.com/allot-sched/allot/resources"
)

// AgentPath is where agents talk to the master. Agents POST an
// api.AgentCall in protobuf; REGISTER answers with a RecordIO stream of
// api.AgentEvent (commands down), every other call answers 202 (updates up).
const AgentPath = "/api/v1/allot/agent"

// PingInterval is how often the master pings each agent's stream; an agent
// that hears nothing for three intervals reconnects.
const PingInterval = 5 * time.Second

func (m *Master) handleAgent(w http.ResponseWriter, r *http.Request) {
	req, err := api.ReadRequest(w, r)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	var call api.AgentCall
	if err := proto.Unmarshal(req.Body, &call); err != nil {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "failed to parse body into allot.v1.AgentCall: %v", err))
		return
	}
	if call.Type == api.AgentCallType_REGISTER {
		m.registerAgent(w, r, &call)
		return
	}
	if err := m.agentCall(&call); err != nil {
		api.WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// registerAgent serves REGISTER: it admits the agent and then streams its
// commands until the connection ends.
func (m *Master) registerAgent(w http.ResponseWriter, r *http.Request, call *api.AgentCall) {
	stream := api.NewStream(api.Protobuf, 65536)
	id, err := m.admitAgent(call, stream)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	stream.Serve(w, r, false, nil)
	m.agentDisconnected(id, stream)
}

// admitAgent registers (or re-registers) the agent of a REGISTER call on
// stream, takes the tasks it reports as the truth, adds it to the
// allocator and answers REGISTERED on the stream. Takes m.mu.
func (m *Master) admitAgent(call *api.AgentCall, stream *api.Stream) (string, error) {
	rec := call.GetAgent()
	if rec == nil || rec.Address == "" {
		return "", api.Errorf(http.StatusBadRequest, "REGISTER without agent.address")
	}
	total, static, err := agentTotal(rec.Resources)
	if err != nil {
		return "", api.Errorf(http.StatusBadRequest, "REGISTER: agent.resources: %v", err)
	}
	m.mu.Lock()
	if m.agentRemovedLocked(rec.Id) {
		m.mu.Unlock()
		m.m.refusedAgents.Inc()
		m.log.Warn().Str("agent_id", rec.Id).Str("address", rec.Address).Msg("gone agent attempted to re-register; refused, it must shut down its executors and register afresh")
		return "", api.Errorf(http.StatusGone, "agent %s was marked gone (its tasks were declared gone or lost) and may not re-register under this id: "+
			"shut its executors down and register afresh without an agent id", rec.Id)
	}
	if err := m.admitMachineLocked(rec); err != nil {
		m.mu.Unlock()
		return "", err
	}
	a, readd := m.resetAgentLocked(rec, total, stream)
	id := a.rec.Id
	if err := m.admitExactLocked(a, static, call.CheckpointedResources); err != nil {
		a.stream = nil
		m.mu.Unlock()
		return "", err
	}
	back := m.unreachableTasksLocked(id)
	used, unknownFw := m.adoptReportedTasksLocked(a, call.Tasks)
	m.reachableAgainLocked(a, back)
	if m.allocOK("add_agent", m.alloc.AddAgent(id, allocator.AgentInfo{Total: total, Attributes: rec.Attributes, Used: used}), "agent_id", id) {
		a.inAlloc = true
	}
	for fwID := range unknownFw {
		stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_SHUTDOWN_FRAMEWORK, FrameworkId: fwID})
	}
	m.reservationsChangedLocked(a)
	// Sent before the lock is let go, so that no RUN from an offer made
	// meanwhile overtakes what the agent must keep.
	stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_REGISTERED, AgentId: id, GraceNanos: int64(PingInterval)})
	stream.SendProto(checkpointEvent(a))
	for _, k := range m.pendingKillsLocked(a) {
		stream.SendProto(k)
	}
	m.publishAgentLocked(evAgentAdded, a)
	m.mu.Unlock()

	m.rep.propose(&api.Command{Type: api.CommandType_AGENT_UPSERT, Agent: rec})
	m.log.Info().Str("agent_id", id).Str("address", rec.Address).Str("resources", total.String()).
		Int("tasks", len(call.Tasks)).Bool("reregistered", readd).Msg("agent registered")
	m.triggerAllocation()
	return id, nil
}

// resetAgentLocked gives rec an id if it has none and starts the agent's
// live state afresh on stream: an earlier connection is closed, its offers
// return (without RESCIND: the agent's own frameworks learn of the agent
// anew) and it leaves the allocator until re-added. readd is true if the
// master knew the agent. Caller holds m.mu.
func (m *Master) resetAgentLocked(rec *api.AgentRecord, total resources.Resources, stream *api.Stream) (a *agentState, readd bool) {
	id := rec.Id
	if id == "" {
		m.seq++
		id = m.id + "-S" + itoa(m.seq)
		rec.Id = id
	}
	rec.RegisteredUnixNano = m.clock.Now().UnixNano()
	a = m.agents[id]
	readd = a != nil
	if a == nil {
		a = &agentState{executors: map[string]resources.Resources{}}
		m.agents[id] = a
	}
	if a.stream != nil {
		a.stream.Close("agent re-registered on a new connection")
	}
	if a.lostTimer != nil {
		a.lostTimer.Stop()
		a.lostTimer = nil
	}
	m.removeAgentOffersLocked(id, false)
	if a.inAlloc {
		m.allocOK("remove_agent", m.alloc.RemoveAgent(id), "agent_id", id)
		a.inAlloc = false
	}
	a.rec, a.total, a.stream, a.lastHeard = rec, total, stream, m.clock.Now()
	a.executors = map[string]resources.Resources{}
	// RUNs held for the old connection are not sent on the new one: the
	// agent's report of what it runs decides what became of their tasks.
	a.resv.held = nil
	return a, readd
}

// adoptReportedTasksLocked takes the agent's report as the truth about
// what runs there: reported tasks are (re)recorded, tasks the master placed
// there that the agent no longer has are lost. It returns what each
// framework uses on the agent and the reported frameworks the master does
// not know. Caller holds m.mu.
func (m *Master) adoptReportedTasksLocked(a *agentState, reports []*api.TaskRecord) (map[string]resources.Resources, map[string]bool) {
	id, total := a.rec.Id, a.total
	used := map[string]resources.Resources{}
	reported := map[string]bool{}
	unknownFw := map[string]bool{}
	for _, tr := range reports {
		fw := m.frameworks[tr.FrameworkId]
		if fw == nil {
			unknownFw[tr.FrameworkId] = true
			continue
		}
		t := fw.tasks[tr.TaskId]
		if t == nil && m.completed.get(fw.id, tr.TaskId) != nil || t != nil && t.final && !taskstate.IsTerminal(mesos.TaskState(tr.State)) {
			// The framework heard this task end (lost, say, while the
			// agent was away): it must not run on or be heard of again.
			m.killOverTaskLocked(a, fw.id, tr)
			continue
		}
		if t == nil {
			t = &task{id: tr.TaskId, fw: fw.id, agent: id, executor: tr.ExecutorId}
			t.info.Unmarshal(tr.Info)
			t.res, _ = taskResources(t.info.Resources)
			fw.tasks[t.id] = t
			m.tasksOn.place(t)
		}
		m.moveTaskLocked(t, id)
		if tr.State != 0 || len(tr.Status) > 0 {
			t.state = mesos.TaskState(tr.State)
		}
		if len(tr.Status) > 0 {
			var st mesos.TaskStatus
			if st.Unmarshal(tr.Status) == nil {
				t.setStatus(&st)
			}
		}
		reported[registry.TaskKey(fw.id, t.id)] = true
		if !taskstate.IsTerminal(t.state) {
			used[fw.id] = used[fw.id].Add(t.res)
			if t.executor != "" {
				key := fw.id + "/" + t.executor
				if _, ok := a.executors[key]; !ok {
					var exRes resources.Resources
					if t.info.Executor != nil {
						exRes, _ = taskResources(t.info.Executor.Resources)
					}
					a.executors[key] = exRes
					used[fw.id] = used[fw.id].Add(exRes)
				}
			}
		}
	}
	// Tasks the master placed there that the agent no longer has are lost.
	for _, p := range m.tasksOnLocked(id) {
		if reported[registry.TaskKey(p.fw.id, p.t.id)] || taskstate.IsTerminal(p.t.state) {
			continue
		}
		m.taskLostLocked(p.fw, p.t, mesos.REASON_AGENT_RESTARTED, "the agent re-registered without this task")
	}
	for u := range used {
		if !total.Contains(used[u]) {
			// Should not happen; keep the agent usable rather than refusing it.
			m.log.Warn().Str("agent_id", id).Str("framework_id", u).Msg("agent reports more in use than its total")
			delete(used, u)
		}
	}
	return used, unknownFw
}

func itoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}

// agentDisconnected starts the clock on an agent whose stream ended: its
// offers are rescinded at once; if it does not come back within
// --agent-ping-timeout it is marked unreachable (partition.go). Takes m.mu.
func (m *Master) agentDisconnected(id string, stream *api.Stream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agents[id]
	if a == nil || a.stream != stream {
		return
	}
	a.stream = nil
	m.removeAgentOffersLocked(id, true)
	m.log.Warn().Str("agent_id", id).Dur("agent_ping_timeout", m.cfg.AgentPingTimeout).Msg("agent disconnected")
	m.startAgentLostTimerLocked(a, m.cfg.AgentPingTimeout)
}

// startAgentLostTimerLocked marks a unreachable if it has not reconnected
// after d.
func (m *Master) startAgentLostTimerLocked(a *agentState, d time.Duration) {
	id := a.rec.Id
	mine := a
	a.lostTimer = m.clock.AfterFunc(d, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		a := m.agents[id]
		if a == nil || a != mine || a.stream != nil {
			return
		}
		m.markUnreachableLocked(a, "did not reconnect within --agent-ping-timeout")
	})
}

// removeAgentLocked declares an agent gone for good (MARK_AGENT_GONE): its
// tasks are TASK_GONE_BY_OPERATOR to partition-aware frameworks and
// TASK_LOST to the others, every connected framework hears FAILURE, and
// its id is refused if it comes back. Caller holds m.mu.
func (m *Master) removeAgentLocked(a *agentState, why string) {
	id := a.rec.Id
	for _, p := range m.tasksOnLocked(id) {
		if taskstate.IsTerminal(p.t.state) {
			continue
		}
		if partitionAware(&p.fw.info) {
			m.taskEndedLocked(p.fw, p.t, mesos.TASK_GONE_BY_OPERATOR, mesos.REASON_AGENT_REMOVED_BY_OPERATOR, "agent removed: "+why)
		} else {
			m.taskLostLocked(p.fw, p.t, mesos.REASON_AGENT_REMOVED, "agent removed: "+why)
		}
	}
	if a.inAlloc {
		m.allocOK("remove_agent", m.alloc.RemoveAgent(id), "agent_id", id)
	}
	m.removeAgentOffersLocked(id, true)
	if a.stream != nil {
		a.stream.Close("agent removed: " + why)
	}
	delete(m.agents, id)
	m.removedAgents[id] = true
	m.rep.propose(&api.Command{Type: api.CommandType_AGENT_REMOVE, Id: id})
	m.publishAgentLocked(evAgentRemoved, a)
	m.agentLostToFrameworksLocked(id)
	m.log.Warn().Str("agent_id", id).Str("why", why).Msg("agent removed")
}

// taskLostLocked marks a task lost and tells its framework. The update carries no
// uuid (nothing on an agent waits for its acknowledgement).
func (m *Master) taskLostLocked(fw *framework, t *task, reason mesos.TaskStatus_Reason, msg string) {
	m.taskEndedLocked(fw, t, mesos.TASK_LOST, reason, msg)
}

// taskEndedLocked ends a task in the terminal state the master decided on
// (TASK_LOST, TASK_GONE_BY_OPERATOR) and tells its framework, as
// taskLostLocked.
func (m *Master) taskEndedLocked(fw *framework, t *task, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) {
	now := float64(m.clock.Now().UnixNano()) / 1e9
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: t.id}, State: state.Enum(), AgentID: &mesos.AgentID{Value: t.agent},
		Source: mesos.SOURCE_MASTER.Enum(), Reason: reason.Enum(), Message: &msg, Timestamp: &now}
	wasTerminal := taskstate.IsTerminal(t.state)
	t.state = state
	t.setStatus(&st)
	if !wasTerminal {
		m.taskEndCountLocked(state)
		if a := m.agents[t.agent]; a != nil && a.inAlloc {
			m.recoverTaskLocked(fw.id, t.agent, t)
		}
	}
	m.rep.propose(m.completeLocked(fw, t))
	m.publishTaskLocked(evTaskUpdated, t)
	m.sendFrameworkLocked(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
}

// agentCall applies an update from a registered agent. Takes m.mu,
// batched with the other calls queued at the same moment (underLock):
// agents post status updates while frameworks answer offers.
func (m *Master) agentCall(call *api.AgentCall) error {
	return m.underLock(func() error {
		a := m.agents[call.AgentId]
		if a == nil || a.stream == nil {
			return api.Errorf(http.StatusForbidden, "agent %q is not registered: REGISTER first", call.AgentId)
		}
		a.lastHeard = m.clock.Now()
		return m.agentCallLocked(a, call, 0)
	})
}

// agentCallLocked applies one agent call (a batch nests once). Caller holds
// m.mu.
func (m *Master) agentCallLocked(a *agentState, call *api.AgentCall, depth int) error {
	switch call.Type {
	case api.AgentCallType_AGENT_BATCH:
		if depth > 0 {
			return api.Errorf(http.StatusBadRequest, "nested AGENT_BATCH")
		}
		for _, c := range call.Batch {
			if err := m.agentCallLocked(a, c, depth+1); err != nil {
				return err
			}
		}
	case api.AgentCallType_STATUS_UPDATE:
		var st mesos.TaskStatus
		if err := st.Unmarshal(call.Status); err != nil {
			return api.Errorf(http.StatusBadRequest, "STATUS_UPDATE: status is not a mesos.TaskStatus: %v", err)
		}
		m.statusUpdateLocked(a, call.FrameworkId, &st)
	case api.AgentCallType_EXECUTOR_MESSAGE:
		fw := m.frameworks[call.FrameworkId]
		m.sendFrameworkLocked(fw, &schedEvent{Type: scheduler.Event_MESSAGE, Message: &scheduler.Event_Message{
			AgentID: mesos.AgentID{Value: a.rec.Id}, ExecutorID: mesos.ExecutorID{Value: call.ExecutorId}, Data: call.Data}})
	case api.AgentCallType_EXECUTOR_EXITED:
		key := call.FrameworkId + "/" + call.ExecutorId
		if res, ok := a.executors[key]; ok {
			delete(a.executors, key)
			if !res.IsEmpty() && a.inAlloc && m.frameworks[call.FrameworkId] != nil {
				m.allocOK("recover", m.alloc.Recover(call.FrameworkId, a.rec.Id, res, nil),
					"framework_id", call.FrameworkId, "agent_id", a.rec.Id, "executor_id", call.ExecutorId)
				m.triggerAllocation()
			}
		}
		status := call.ExitStatus
		m.sendFrameworkLocked(m.frameworks[call.FrameworkId], &schedEvent{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{
			AgentID: &mesos.AgentID{Value: a.rec.Id}, ExecutorID: &mesos.ExecutorID{Value: call.ExecutorId}, Status: &status}})
	case api.AgentCallType_USAGE:
		m.usageLocked(a, call.Usage)
	default:
		return api.Errorf(http.StatusBadRequest, "unknown agent call type %d", call.Type)
	}
	return nil
}

// statusUpdateLocked records a task's status from its agent, returns the
// resources of a task that ended, and forwards the update. Caller holds
// m.mu.
func (m *Master) statusUpdateLocked(a *agentState, fwID string, st *mesos.TaskStatus) {
	st.AgentID = &mesos.AgentID{Value: a.rec.Id}
	fw := m.frameworks[fwID]
	if fw == nil {
		// The framework is gone: acknowledge for it so the agent stops
		// retrying, and make sure its executors go.
		a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_ACKNOWLEDGE, FrameworkId: fwID, TaskId: st.TaskID.Value, Uuid: st.UUID})
		a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_SHUTDOWN_FRAMEWORK, FrameworkId: fwID})
		return
	}
	m.m.statusUpdates.WithLabelValues(st.GetState().String()).Inc()
	if m.updateOfTaskOverLocked(a, fw, st) {
		return
	}
	if t := fw.tasks[st.TaskID.Value]; t != nil {
		was := taskstate.IsTerminal(t.state)
		t.state = st.GetState()
		t.setStatus(st)
		if taskstate.IsTerminal(t.state) {
			t.final, t.finalUUID = true, st.UUID
		}
		if !was && taskstate.IsTerminal(t.state) {
			m.taskEndCountLocked(t.state)
		}
		if !was && taskstate.IsTerminal(t.state) && a.inAlloc {
			m.recoverTaskLocked(fw.id, a.rec.Id, t)
			m.triggerAllocation()
		}
		m.rep.propose(&api.Command{Type: api.CommandType_TASK_UPSERT, Task: taskRecord(t)})
		m.publishTaskLocked(evTaskUpdated, t)
	}
	m.sendFrameworkLocked(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: *st}})
}

// pingLoop pings every connected agent each PingInterval. Takes m.mu, only
// to list the streams: the pings go out after it is released. Sending
// 10,000 pings wakes 10,000 stream writers, and on a host short of CPU the
// sender, holding m.mu throughout, was preempted among them while every
// call and the allocation loop waited (a goroutine dump at 10,000 agents x
// 500 frameworks caught it). A stream closed meanwhile drops its ping.
func (m *Master) pingLoop() {
	t := time.NewTicker(PingInterval)
	defer t.Stop()
	var streams []*api.Stream
	var checked time.Time
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		streams = streams[:0]
		m.mu.Lock()
		checked = m.markSilentAgentsLocked(m.clock.Now(), checked)
		for _, a := range m.agents {
			if a.stream != nil {
				streams = append(streams, a.stream)
			}
		}
		m.mu.Unlock()
		for _, s := range streams {
			s.SendProto(&api.AgentEvent{Type: api.AgentEventType_PING})
		}
		clear(streams) // hold no closed stream until the next tick
	}
}
