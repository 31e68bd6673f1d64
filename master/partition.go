package master

import (
	"net/http"
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/master/registry"
)

// Partition awareness, as Mesos 1.11 has it. An agent that stays away
// past --agent-ping-timeout (or, after an election, --agent-reregister-
// timeout) is marked unreachable, not removed: it moves to the registry's
// unreachable list and may come back under its id. Its tasks are reported
// TASK_UNREACHABLE (REASON_AGENT_REMOVED, with unreachable_time) to
// frameworks with the PARTITION_AWARE capability, which keep them, and
// TASK_LOST to the others, whose tasks are over (and killed on the agent if
// it comes back: finality.go). Every connected framework hears FAILURE with
// the agent's id. When the agent re-registers, the tasks it reports that
// were unreachable are reported again in their state (REASON_AGENT_
// REREGISTERED). MARK_AGENT_GONE ends an agent for good: its tasks are
// TASK_GONE_BY_OPERATOR (TASK_LOST to frameworks not partition-aware) and
// its id is refused from then on (history.go).

// Defaults of the unreachable list's bounds: Mesos's --registry_max_agent_age,
// --registry_max_agent_count and --registry_gc_interval.
const (
	DefaultRegistryMaxAgentAge   = 14 * 24 * time.Hour
	DefaultRegistryMaxAgentCount = registry.DefaultMaxAgentCount
	DefaultRegistryGCInterval    = 15 * time.Minute
)

// unreachableAgent is an agent the leader marked unreachable.
type unreachableAgent struct {
	rec *api.AgentRecord
	at  time.Time
}

// markUnreachableLocked moves a from the admitted agents to the unreachable
// ones and tells frameworks. Caller holds m.mu.
func (m *Master) markUnreachableLocked(a *agentState, why string) {
	id := a.rec.Id
	now := m.clock.Now()
	// Out of the allocator first, so that what its tasks held is not
	// offered again.
	if a.inAlloc {
		m.allocOK("remove_agent", m.alloc.RemoveAgent(id), "agent_id", id)
		a.inAlloc = false
	}
	msg := "agent unreachable: " + why
	at := &mesos.TimeInfo{Nanoseconds: now.UnixNano()}
	for _, p := range m.tasksOnLocked(id) {
		switch {
		case taskstate.IsTerminal(p.t.state):
		case partitionAware(&p.fw.info):
			m.taskUnreachableLocked(p.fw, p.t, msg, at)
		default:
			m.taskLostLocked(p.fw, p.t, mesos.REASON_AGENT_REMOVED, msg)
		}
	}
	m.removeAgentOffersLocked(id, true)
	if a.stream != nil {
		a.stream.Close(msg)
	}
	delete(m.agents, id)
	m.unreachable[id] = &unreachableAgent{rec: a.rec, at: now}
	m.rep.propose(&api.Command{Type: api.CommandType_AGENT_UNREACHABLE, Agent: a.rec, UnixNano: now.UnixNano()})
	m.publishAgentLocked(evAgentRemoved, a)
	m.agentLostToFrameworksLocked(id)
	m.log.Warn().Str("agent_id", id).Str("why", why).Msg("agent marked unreachable")
}

// taskUnreachableLocked reports t TASK_UNREACHABLE to its partition-aware
// framework. The task stays the framework's: it is not terminal, and the
// agent may bring it back. Caller holds m.mu.
func (m *Master) taskUnreachableLocked(fw *framework, t *task, msg string, at *mesos.TimeInfo) {
	now := float64(m.clock.Now().UnixNano()) / 1e9
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: t.id}, State: mesos.TASK_UNREACHABLE.Enum(), AgentID: &mesos.AgentID{Value: t.agent},
		Source: mesos.SOURCE_MASTER.Enum(), Reason: mesos.REASON_AGENT_REMOVED.Enum(), Message: &msg, Timestamp: &now, UnreachableTime: at}
	if t.executor != "" {
		st.ExecutorID = &mesos.ExecutorID{Value: t.executor}
	}
	t.state = mesos.TASK_UNREACHABLE
	t.setStatus(&st)
	m.rep.propose(&api.Command{Type: api.CommandType_TASK_UPSERT, Task: taskRecord(t)})
	m.publishTaskLocked(evTaskUpdated, t)
	m.sendFrameworkLocked(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
}

// agentLostToFrameworksLocked sends FAILURE naming the agent to every
// connected framework, as Mesos's master tells every framework of a lost
// agent. Caller holds m.mu.
func (m *Master) agentLostToFrameworksLocked(id string) {
	for _, fid := range sortedKeys(m.frameworks) {
		m.sendFrameworkLocked(m.frameworks[fid], &schedEvent{Type: scheduler.Event_FAILURE,
			Failure: &scheduler.Event_Failure{AgentID: &mesos.AgentID{Value: id}}})
	}
}

// unreachableTasksLocked lists the tasks on agent id that are
// TASK_UNREACHABLE. Caller holds m.mu.
func (m *Master) unreachableTasksLocked(id string) []*task {
	var out []*task
	for _, p := range m.tasksOnLocked(id) {
		if p.t.state == mesos.TASK_UNREACHABLE {
			out = append(out, p.t)
		}
	}
	return out
}

// reachableAgainLocked finishes the re-registration of an agent that may
// have been unreachable: it leaves the unreachable list, and each task in
// back (unreachable before the agent's report) that the agent reported is
// told to its framework in its reported state, as Mesos's master does
// (SOURCE_MASTER, REASON_AGENT_REREGISTERED). Caller holds m.mu.
func (m *Master) reachableAgainLocked(a *agentState, back []*task) {
	if _, ok := m.unreachable[a.rec.Id]; ok {
		delete(m.unreachable, a.rec.Id)
		m.log.Info().Str("agent_id", a.rec.Id).Int("unreachable_tasks", len(back)).Msg("unreachable agent re-registered")
	}
	for _, t := range back {
		fw := m.frameworks[t.fw]
		// A task that ended meanwhile is told by the agent's own
		// update (acknowledged, so the framework hears its end once).
		if fw == nil || fw.tasks[t.id] != t || t.state == mesos.TASK_UNREACHABLE || taskstate.IsTerminal(t.state) {
			continue
		}
		msg := "Unreachable agent re-reregistered"
		now := float64(m.clock.Now().UnixNano()) / 1e9
		st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: t.id}, State: t.state.Enum(), AgentID: &mesos.AgentID{Value: t.agent},
			Source: mesos.SOURCE_MASTER.Enum(), Reason: mesos.REASON_AGENT_REREGISTERED.Enum(), Message: &msg, Timestamp: &now}
		if t.executor != "" {
			st.ExecutorID = &mesos.ExecutorID{Value: t.executor}
		}
		if t.status != nil && t.status.State != nil && *t.status.State == t.state {
			st.Healthy, st.CheckStatus, st.ContainerStatus = t.status.Healthy, t.status.CheckStatus, t.status.ContainerStatus
		} else {
			t.setStatus(&st)
		}
		m.rep.propose(&api.Command{Type: api.CommandType_TASK_UPSERT, Task: taskRecord(t)})
		m.publishTaskLocked(evTaskUpdated, t)
		m.sendFrameworkLocked(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
	}
}

// markAgentGone serves MARK_AGENT_GONE: 200 once the agent is gone (again
// 200 if it already was), 404 for an agent neither admitted, awaited after
// an election, nor unreachable. Takes m.mu.
func (m *Master) markAgentGone(call *mmaster.Call_MarkAgentGone) (*mmaster.Response, error) {
	if call == nil || call.AgentID.Value == "" {
		return nil, api.Errorf(http.StatusBadRequest, "MARK_AGENT_GONE call without mark_agent_gone.agent_id")
	}
	id := call.AgentID.Value
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.agentRemovedLocked(id):
	case m.agents[id] != nil:
		m.removeAgentLocked(m.agents[id], "marked gone by the operator")
	case m.unreachable[id] != nil:
		m.unreachableGoneLocked(id)
	default:
		return nil, api.Errorf(http.StatusNotFound, "Agent '%s' not found", id)
	}
	return nil, nil
}

// unreachableGoneLocked marks an unreachable agent gone: its tasks still
// unreachable are TASK_GONE_BY_OPERATOR (the others' tasks were already
// lost), and its id is refused from now on. No FAILURE: frameworks heard
// it when the agent became unreachable. Caller holds m.mu.
func (m *Master) unreachableGoneLocked(id string) {
	for _, t := range m.unreachableTasksLocked(id) {
		m.taskEndedLocked(m.frameworks[t.fw], t, mesos.TASK_GONE_BY_OPERATOR, mesos.REASON_AGENT_REMOVED_BY_OPERATOR, "Agent has been marked gone")
	}
	delete(m.unreachable, id)
	m.removedAgents[id] = true
	m.rep.propose(&api.Command{Type: api.CommandType_AGENT_REMOVE, Id: id})
	m.log.Warn().Str("agent_id", id).Msg("unreachable agent marked gone by the operator")
}

// unknownTaskStatusLocked is what explicit reconciliation answers for a task
// fw does not have, on the agent named (or none), as Mesos's master: on an
// admitted agent TASK_GONE, on an unreachable one TASK_UNREACHABLE (with
// unreachable_time), on a gone one TASK_GONE_BY_OPERATOR, otherwise
// TASK_UNKNOWN; TASK_LOST in each case to a framework not partition-aware.
// Caller holds m.mu.
func (m *Master) unknownTaskStatusLocked(fw *framework, taskID mesos.TaskID, agentID *mesos.AgentID) mesos.TaskStatus {
	st := mesos.TaskStatus{TaskID: taskID, AgentID: agentID, Source: mesos.SOURCE_MASTER.Enum(), Reason: mesos.REASON_RECONCILIATION.Enum()}
	id := agentID.GetValue()
	state, msg := mesos.TASK_UNKNOWN, "Reconciliation: Task is unknown"
	switch {
	case id == "":
	case m.agents[id] != nil:
		state, msg = mesos.TASK_GONE, "Reconciliation: Task is unknown to the agent"
	case m.unreachable[id] != nil:
		state, msg = mesos.TASK_UNREACHABLE, "Reconciliation: Task is unreachable"
		st.UnreachableTime = &mesos.TimeInfo{Nanoseconds: m.unreachable[id].at.UnixNano()}
	case m.agentRemovedLocked(id):
		state, msg = mesos.TASK_GONE_BY_OPERATOR, "Reconciliation: Task is gone"
	}
	if !partitionAware(&fw.info) {
		state = mesos.TASK_LOST
	}
	st.State, st.Message = state.Enum(), &msg
	return st
}

// recoverUnreachableLocked takes the registry's unreachable list after an
// election. Caller holds m.mu.
func (m *Master) recoverUnreachableLocked() {
	for _, u := range m.reg.Unreachable() {
		m.unreachable[u.Agent.GetId()] = &unreachableAgent{rec: u.Agent, at: time.Unix(0, u.UnreachableUnixNano)}
	}
}

// registryGCLocked forgets the unreachable agents marked more than
// --registry-max-agent-age before now, then the oldest beyond
// --registry-max-agent-count, here and (by one command, so that every
// replica forgets the same) in the registry. The tasks partition-aware
// frameworks had on them are forgotten too, without an update: reconciling
// one answers TASK_UNKNOWN, as in Mesos. Caller holds m.mu.
func (m *Master) registryGCLocked(now time.Time) {
	age, limit := m.registryBounds()
	cutoff := now.Add(-age)
	ids := make([]string, 0, len(m.unreachable))
	for id := range m.unreachable {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return m.unreachable[ids[i]].at.Before(m.unreachable[ids[j]].at) })
	var gone []string
	for i, id := range ids {
		if m.unreachable[id].at.Before(cutoff) || len(ids)-i > limit {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return
	}
	for _, id := range gone {
		for _, t := range m.unreachableTasksLocked(id) {
			fw := m.frameworks[t.fw]
			delete(fw.tasks, t.id)
			m.tasksOn.forget(t)
			m.rep.propose(&api.Command{Type: api.CommandType_TASK_REMOVE, Id: registry.TaskKey(t.fw, t.id)})
		}
		delete(m.unreachable, id)
	}
	m.rep.propose(&api.Command{Type: api.CommandType_AGENT_UNREACHABLE_GC, UnixNano: cutoff.UnixNano(), Limit: int32(limit)})
	m.log.Info().Strs("agent_ids", gone).Msg("forgot unreachable agents past --registry-max-agent-age or --registry-max-agent-count")
}

// registryBounds are the unreachable list's bounds in force.
func (m *Master) registryBounds() (time.Duration, int) {
	age, limit := m.cfg.RegistryMaxAgentAge, m.cfg.RegistryMaxAgentCount
	if age <= 0 {
		age = DefaultRegistryMaxAgentAge
	}
	if limit <= 0 {
		limit = DefaultRegistryMaxAgentCount
	}
	return age, limit
}

// registryGCLoop runs registryGCLocked every --registry-gc-interval while
// this master leads.
func (m *Master) registryGCLoop() {
	every := m.cfg.RegistryGCInterval
	if every <= 0 {
		every = DefaultRegistryGCInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		m.mu.Lock()
		if m.leader.Load() {
			m.registryGCLocked(m.clock.Now())
		}
		m.mu.Unlock()
	}
}

// stateUnreachableLocked lists the unreachable agents for /state, oldest
// mark first. Caller holds m.mu.
func (m *Master) stateUnreachableLocked() []operator.UnreachableAgent {
	ids := sortedKeys(m.unreachable)
	sort.SliceStable(ids, func(i, j int) bool { return m.unreachable[ids[i]].at.Before(m.unreachable[ids[j]].at) })
	out := make([]operator.UnreachableAgent, 0, len(ids))
	for _, id := range ids {
		u := m.unreachable[id]
		out = append(out, operator.UnreachableAgent{ID: id, Hostname: u.rec.Hostname, PID: "slave(1)@" + u.rec.Address,
			State: "unreachable", UnreachableTime: float64(u.at.UnixNano()) / 1e9})
	}
	return out
}

// unreachableAgentsGauge is allot_master_agents_unreachable: the agents the
// leader holds unreachable (Mesos's master/slave_unreachable_* tell the
// same story). Like the state gauges (stateCollector), a scrape never
// waits for m.mu: it reads the count if the lock is free, else reports the
// last reading, which the state gauges' reading also refreshes.
func unreachableAgentsGauge(m *Master) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "allot_master_agents_unreachable",
		Help: "Agents marked unreachable and not yet back, gone or forgotten (--registry-max-agent-age, --registry-max-agent-count)."},
		func() float64 {
			if m.mu.TryLock() {
				m.unreachableSeen.Store(int64(len(m.unreachable)))
				m.mu.Unlock()
			}
			return float64(m.unreachableSeen.Load())
		})
}

// markSilentAgentsLocked marks unreachable every connected agent the
// leader has heard nothing from (no call, no REGISTER) for
// --agent-ping-timeout: stopped, hung, or cut off without its connection
// breaking, as Mesos's master marks an agent that misses its pings. Agents
// send usage reports, and answer pings when they have nothing else to
// say. A check long after the previous one (last, zero for none) finds the
// master itself stalled (paused, starved of CPU), which it cannot tell from
// its agents' silence: it counts their silence afresh instead. It returns
// now, the next call's last. Caller holds m.mu.
func (m *Master) markSilentAgentsLocked(now, last time.Time) time.Time {
	if !last.IsZero() && now.Sub(last) > 3*PingInterval {
		for _, a := range m.agents {
			a.lastHeard = now
		}
		m.log.Warn().Dur("since_last_check", now.Sub(last)).Msg("the master stalled; agents' silence counted afresh")
		return now
	}
	var silent []*agentState
	for _, a := range m.agents {
		if a.stream != nil && now.Sub(a.lastHeard) > m.cfg.AgentPingTimeout {
			silent = append(silent, a)
		}
	}
	for _, a := range silent {
		m.markUnreachableLocked(a, "no word from the agent within --agent-ping-timeout")
	}
	return now
}

// stateTasksLocked lists fw's tasks for /state as Mesos does: those on
// unreachable agents (TASK_UNREACHABLE, a partition-aware framework's)
// apart, in unreachable_tasks; each list [] when empty. Caller holds m.mu.
func stateTasksLocked(fw *framework) (tasks, unreachable []operator.Task) {
	tasks, unreachable = []operator.Task{}, []operator.Task{}
	for _, tid := range sortedKeys(fw.tasks) {
		t := fw.tasks[tid]
		if t.state == mesos.TASK_UNREACHABLE {
			unreachable = append(unreachable, stateTaskOf(t))
		} else {
			tasks = append(tasks, stateTaskOf(t))
		}
	}
	return tasks, unreachable
}
