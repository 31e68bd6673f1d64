package master

import (
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/master/registry"
)

// Agent drain and deactivation, as Mesos 1.11 has them:
//
//   - DEACTIVATE_AGENT: no offers of the agent (outstanding ones are
//     rescinded); its tasks keep running.
//   - DRAIN_AGENT: deactivates the agent and kills its tasks with their
//     kill policy, the grace period capped at max_grace_period; the agent
//     is DRAINING until every task on it ended and its end was
//     acknowledged, then DRAINED, or removed for good with mark_gone.
//   - REACTIVATE_AGENT: offers again (not while DRAINING).
//
// The allocator has no notion of an inactive agent, so the master fences a
// deactivated one before each cycle: it tells the allocator the agent's
// total is what frameworks hold there, leaving nothing to offer, and gives
// the real total back on reactivation. The fence and the drain's progress
// (kills on every new connection of the agent, DRAINED once empty) run in
// maintenanceTickLocked, before each allocation cycle, so a re-registered
// agent or a new leader resumes a drain from the replicated record.

// agentMaintenanceLocked answers DRAIN_AGENT, DEACTIVATE_AGENT and
// REACTIVATE_AGENT. Caller holds m.mu.
func (m *Master) agentMaintenanceLocked(who auth.Subject, call *mmaster.Call) error {
	var id string
	var act auth.Action
	switch {
	case call.Type == mmaster.Call_DRAIN_AGENT && call.DrainAgent != nil:
		id, act = call.DrainAgent.AgentID.Value, auth.DrainAgents
	case call.Type == mmaster.Call_DEACTIVATE_AGENT && call.DeactivateAgent != nil:
		id, act = call.DeactivateAgent.AgentID.Value, auth.DeactivateAgents
	case call.Type == mmaster.Call_REACTIVATE_AGENT && call.ReactivateAgent != nil:
		id, act = call.ReactivateAgent.AgentID.Value, auth.ReactivateAgents
	default:
		return api.Errorf(http.StatusBadRequest, "Expecting '%s' to be present", fieldOfCall(call.Type))
	}
	if err := m.authorize(who, act, id, false); err != nil {
		return err
	}
	a := m.agents[id]
	switch call.Type {
	case mmaster.Call_DRAIN_AGENT:
		return m.drainAgentLocked(who, a, id, call.DrainAgent)
	case mmaster.Call_DEACTIVATE_AGENT:
		if a == nil {
			return api.Errorf(http.StatusBadRequest, "Unknown agent")
		}
		m.agentMaintOf(id).deactivated = true
		m.removeAgentOffersLocked(id, true)
		m.log.Info().Str("agent_id", id).Msg("agent deactivated")
		return nil
	}
	return m.reactivateAgentLocked(a, id)
}

// fieldOfCall is the name of the call's own field, as Mesos's error names it.
func fieldOfCall(t mmaster.Call_Type) string {
	return map[mmaster.Call_Type]string{mmaster.Call_DRAIN_AGENT: "drain_agent", mmaster.Call_DEACTIVATE_AGENT: "deactivate_agent",
		mmaster.Call_REACTIVATE_AGENT: "reactivate_agent"}[t]
}

// agentMaintOf returns the agent's maintenance entry, made if absent.
// Caller holds m.mu.
func (m *Master) agentMaintOf(id string) *agentMaint {
	am := m.maint.agents[id]
	if am == nil {
		am = &agentMaint{}
		m.maint.agents[id] = am
	}
	return am
}

// drainAgentLocked is DRAIN_AGENT. Caller holds m.mu.
func (m *Master) drainAgentLocked(who auth.Subject, a *agentState, id string, d *mmaster.Call_DrainAgent) error {
	if d.GetMarkGone() {
		if err := m.authorize(who, auth.MarkAgentsGone, id, false); err != nil {
			return err
		}
	}
	if a == nil {
		return api.Errorf(http.StatusBadRequest, "Unknown agent")
	}
	machine := agentMachine(a.rec)
	if m.maint.windowOf(machineKey(machine)) != nil {
		return api.Errorf(http.StatusBadRequest, "Agent %s is part of a maintenance schedule under Machine %s", id, machineString(machine))
	}
	cfg := mesos.DrainConfig{}
	if d.GetMarkGone() {
		cfg.MarkGone = boolPtr(true)
	}
	if g := d.GetMaxGracePeriod(); g != nil {
		ns := g.Seconds*int64(time.Second) + int64(g.Nanos)
		if ns < 0 {
			return api.Errorf(http.StatusBadRequest, "DRAIN_AGENT: max_grace_period must not be negative")
		}
		cfg.MaxGracePeriod = &mesos.DurationInfo{Nanoseconds: ns}
	}
	am := m.agentMaintOf(id)
	am.deactivated = true
	am.drain = &mesos.DrainInfo{State: mesos.DrainState_DRAINING, Config: cfg}
	am.killed = nil
	m.removeAgentOffersLocked(id, true)
	m.log.Info().Str("agent_id", id).Int("tasks", len(m.tasksOnLocked(id))).Bool("mark_gone", d.GetMarkGone()).Msg("agent DRAINING")
	m.drainStepLocked(a, am)
	return nil
}

// reactivateAgentLocked is REACTIVATE_AGENT: the agent is offered again
// and its drain state forgotten. Caller holds m.mu.
func (m *Master) reactivateAgentLocked(a *agentState, id string) error {
	am := m.maint.agents[id]
	if am == nil || !am.deactivated {
		return api.Errorf(http.StatusBadRequest, "Agent is not deactivated")
	}
	if am.draining() {
		return api.Errorf(http.StatusBadRequest, "Agent is still in the DRAINING state")
	}
	delete(m.maint.agents, id)
	if a != nil && a.inAlloc {
		m.allocOK("update_agent", m.alloc.UpdateAgent(id, a.total), "agent_id", id)
	}
	m.log.Info().Str("agent_id", id).Msg("agent reactivated")
	return nil
}

// maintenanceTickLocked runs before each allocation cycle: agents take
// their machine's unavailability, deactivated agents are fenced and
// drains progress. Caller holds m.mu.
func (m *Master) maintenanceTickLocked() {
	m.refreshUnavailabilityLocked()
	if len(m.maint.agents) == 0 {
		return
	}
	changed := false
	for _, id := range sortedKeys(m.maint.agents) {
		a, am := m.agents[id], m.maint.agents[id]
		if a == nil {
			// Removed (gone, or lost past --agent-ping-timeout): its id is
			// refused from now on, so its state has no one to apply to.
			delete(m.maint.agents, id)
			changed = true
			continue
		}
		if am.draining() && m.drainStepLocked(a, am) {
			changed = true
		}
		if am.deactivated && m.agents[id] != nil {
			m.fenceAgentLocked(a)
		}
	}
	if changed {
		m.rep.propose(&api.Command{Type: api.CommandType_MAINTENANCE_SET, Maintenance: m.maint.record()})
	}
}

// fenceAgentLocked leaves the allocator nothing to offer on a: its total
// there becomes what frameworks hold. Caller holds m.mu.
func (m *Master) fenceAgentLocked(a *agentState) {
	if !a.inAlloc {
		return
	}
	st, err := m.alloc.Agent(a.rec.Id)
	if err != nil || st.Available.IsEmpty() {
		return
	}
	m.allocOK("update_agent", m.alloc.UpdateAgent(a.rec.Id, st.Total.Sub(st.Available)), "agent_id", a.rec.Id)
}

// drainStepLocked kills the tasks of a draining agent not yet killed on
// its current connection and, once no task is left on it (every end
// acknowledged), makes it DRAINED or, with mark_gone, removes it for good.
// It reports whether the drain state changed. Caller holds m.mu.
func (m *Master) drainStepLocked(a *agentState, am *agentMaint) bool {
	if a.stream == nil {
		return false
	}
	tasks := m.tasksOnLocked(a.rec.Id)
	if len(tasks) > 0 {
		if am.killed == nil {
			am.killed = map[string]*api.Stream{}
		}
		for _, p := range tasks {
			key := registry.TaskKey(p.fw.id, p.t.id)
			if taskstate.IsTerminal(p.t.state) || am.killed[key] == a.stream {
				continue
			}
			am.killed[key] = a.stream
			a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_KILL, FrameworkId: p.fw.id, ExecutorId: p.t.executor, TaskId: p.t.id,
				GraceNanos: drainGrace(p.t.info.KillPolicy, am.drain.Config.MaxGracePeriod)})
		}
		return false
	}
	if am.drain.Config.GetMarkGone() {
		m.log.Info().Str("agent_id", a.rec.Id).Msg("agent DRAINED; marking it gone")
		a.stream.Close("agent drained and marked gone")
		delete(m.maint.agents, a.rec.Id)
		m.removeAgentLocked(a, "drained and marked gone")
		return true
	}
	am.drain.State, am.killed = mesos.DrainState_DRAINED, nil
	m.log.Info().Str("agent_id", a.rec.Id).Msg("agent DRAINED")
	return true
}

// drainGrace is the KILL's grace period for a task with policy kp under a
// drain capped at max, as Mesos's agent computes it: the task's own policy
// (0: the executor reads it) unless max is set and the task has none or a
// longer one. A cap of 0 kills at once (1 ns: 0 means "the task's own").
func drainGrace(kp *mesos.KillPolicy, max *mesos.DurationInfo) int64 {
	if max == nil {
		return 0
	}
	if kp != nil && kp.GracePeriod != nil && kp.GracePeriod.Nanoseconds <= max.Nanoseconds {
		return 0
	}
	if max.Nanoseconds <= 0 {
		return 1
	}
	return max.Nanoseconds
}

// frameworkCapable reports whether fw declared capability c.
func frameworkCapable(fw *framework, c mesos.FrameworkInfo_Capability_Type) bool {
	for _, x := range fw.info.Capabilities {
		if x.Type == c {
			return true
		}
	}
	return false
}

// Agent states as the CLI and the web UI show them (allot's summary
// beside Mesos's deactivated and drain_info).
const (
	agentActive      = "active"
	agentDraining    = "draining"
	agentDrained     = "drained"
	agentDeactivated = "deactivated"
	agentDown        = "down"
	agentUnreachable = "unreachable"
)

// agentStateLocked is a's state: its machine DOWN, else its drain state,
// else deactivated, else unreachable while disconnected, else active.
// Caller holds m.mu.
func (m *Master) agentStateLocked(a *agentState) string {
	am := m.maint.agents[a.rec.Id]
	switch {
	case m.maint.mode(machineKey(agentMachine(a.rec))) == mesos.DOWN:
		return agentDown
	case am != nil && am.drain != nil && am.drain.State == mesos.DrainState_DRAINED:
		return agentDrained
	case am.draining():
		return agentDraining
	case am != nil && am.deactivated:
		return agentDeactivated
	case a.stream == nil:
		return agentUnreachable
	}
	return agentActive
}

// agentMaintFieldsLocked fills Mesos's deactivated and drain_info of a
// GET_AGENTS entry, and active (false while deactivated, as Mesos).
// Caller holds m.mu.
func (m *Master) agentMaintFieldsLocked(e *mmaster.Response_GetAgents_Agent, a *agentState) {
	am := m.maint.agents[a.rec.Id]
	deact := am != nil && am.deactivated
	e.Deactivated = boolPtr(deact)
	e.Active = e.Active && !deact
	if am != nil && am.drain != nil {
		di := *am.drain
		e.DrainInfo = &di
	}
}

func boolPtr(b bool) *bool { return &b }

// stateAgentMaintLocked fills an agent's deactivated, drain_info and state
// in /state, and active (false while deactivated, as Mesos). Caller holds
// m.mu.
func (m *Master) stateAgentMaintLocked(ja *operator.Agent, a *agentState) {
	ja.State = m.agentStateLocked(a)
	am := m.maint.agents[a.rec.Id]
	if am == nil {
		return
	}
	ja.Deactivated = am.deactivated
	ja.Active = ja.Active && !am.deactivated
	if di := am.drain; di != nil {
		ja.DrainInfo = &operator.DrainInfo{State: di.State.String(), Config: operator.DrainConfig{MarkGone: di.Config.GetMarkGone()}}
		if g := di.Config.MaxGracePeriod; g != nil {
			ja.DrainInfo.Config.MaxGracePeriod = &operator.Duration{Nanoseconds: g.Nanoseconds}
		}
	}
}
