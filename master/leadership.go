package master

import (
	"time"

	"github.com/hashicorp/raft"
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/resources"
)

// watchLeadership follows raft's leadership notifications. On gaining
// leadership it first waits on a barrier so the registry holds every entry
// the previous leader committed, then rebuilds live state from it; on losing
// it drops live state so that nothing is allocated or acknowledged by a
// master that can no longer commit.
func (m *Master) watchLeadership() {
	for {
		select {
		case <-m.stop:
			return
		case lead := <-m.notify:
			if !lead {
				m.becomeFollower()
				continue
			}
			if err := m.rep.raft.Barrier(30 * time.Second).Error(); err != nil {
				m.log.Warn().Err(err).Msg("elected, but the registry barrier failed; waiting for the next election")
				continue
			}
			if m.rep.raft.State() == raft.Leader {
				m.becomeLeader()
			}
		}
	}
}

// becomeLeader rebuilds the allocator and live state from the registry.
// Agents get --agent-reregister-timeout to come back; frameworks their
// failover timeout. Offers made by any earlier leader are void: this
// master's offer table starts empty. Takes m.mu.
func (m *Master) becomeLeader() {
	m.mu.Lock()
	if m.leader.Load() {
		m.mu.Unlock()
		return
	}
	if err := m.resetLiveLocked("leadership changed"); err != nil {
		m.mu.Unlock()
		m.log.Error().Err(err).Msg("rebuilding the allocator")
		return
	}
	m.applyRegistryPolicyLocked() // an operator's runtime switch (sorter.go)
	m.recoverLocked()
	m.restorePoliciesLocked() // after the frameworks are back (policy.go)
	// and the job sizes after the virtual cluster is back (jobsize.go)
	m.redeclareJobSizesLocked()
	m.elected = m.clock.Now()
	m.leader.Store(true)
	agents, fws := len(m.agents), len(m.frameworks)
	m.mu.Unlock()
	m.m.leaderChanges.Inc()
	m.log.Info().Int("agents", agents).Int("frameworks", fws).Msg("elected leading master; live state rebuilt from the registry")
	m.triggerAllocation()
}

// becomeFollower stops allocating and closes every stream, so schedulers,
// agents and operator subscribers reconnect and find the new leader.
// Takes m.mu.
func (m *Master) becomeFollower() {
	m.mu.Lock()
	was := m.leader.Swap(false)
	m.resetLiveLocked("this master is no longer the leader")
	m.mu.Unlock()
	if was {
		m.log.Warn().Msg("lost leadership; stopped allocating and closed all streams")
	}
}

// resetLiveLocked closes every stream, stops every timer and starts an
// empty allocator. Timers that already fired find different objects in the
// maps and do nothing. Caller holds m.mu.
func (m *Master) resetLiveLocked(why string) error {
	m.inverse = inverseTable{}
	m.maint = loadMaintState(nil)
	for _, fw := range m.frameworks {
		if fw.failoverTimer != nil {
			fw.failoverTimer.Stop()
		}
		if fw.stream != nil {
			fw.stream.Close(why)
		}
	}
	for _, a := range m.agents {
		if a.lostTimer != nil {
			a.lostTimer.Stop()
		}
		if a.stream != nil {
			a.stream.Close(why)
		}
	}
	for _, o := range m.offers {
		if o.timer != nil {
			o.timer.Stop()
		}
	}
	for s := range m.opSubs {
		s.Close(why)
	}
	alloc, err := newAllocator(m.allocCfg, m.cfg.Weights)
	if err != nil {
		return err
	}
	m.alloc = alloc
	m.agents = map[string]*agentState{}
	m.frameworks = map[string]*framework{}
	m.tasksOn = tasksByAgent{}
	m.removedFrameworks = map[string]bool{}
	m.removedAgents = map[string]bool{}
	m.unreachable = map[string]*unreachableAgent{}
	m.completed = newCompletedTasks(m.cfg.MaxCompletedTasksPerFramework, m.cfg.MaxCompletedFrameworks)
	m.offers = map[uint64]*offer{}
	m.opSubs = map[*api.Stream]auth.Subject{}
	m.usage = map[string]*api.Usage{}
	m.usageRates = nil
	m.weights = map[string]float64{}
	for k, v := range m.cfg.Weights {
		m.weights[k] = v
	}
	return nil
}

// recoverLocked rebuilds live state from the registry after an election:
// agents wait to re-register, frameworks to re-subscribe within their
// failover timeout, and tasks are known again with their latest status.
// Caller holds m.mu.
func (m *Master) recoverLocked() {
	if cfg := m.reg.Config(); len(cfg.Weights) > 0 {
		if m.allocOK("set_weights", m.alloc.SetWeights(cfg.Weights)) {
			for k, v := range cfg.Weights {
				m.weights[k] = v
			}
		}
	}
	held := m.heldByAgent()
	m.restoreQuotasLocked()
	for _, rec := range m.reg.Agents() {
		total, static, err := agentTotal(rec.Resources)
		if err != nil {
			m.log.Warn().Str("agent_id", rec.Id).Err(err).Msg("registry agent has bad resources; dropped")
			continue
		}
		a := &agentState{rec: rec, total: total, executors: map[string]resources.Resources{}}
		m.recoverExactLocked(a, static, held)
		m.agents[rec.Id] = a
		m.startAgentLostTimerLocked(a, m.cfg.AgentReregisterTimeout)
	}
	now := m.clock.Now()
	for _, rec := range m.reg.Frameworks() {
		var info mesos.FrameworkInfo
		if err := info.Unmarshal(rec.Info); err != nil {
			continue
		}
		fw := m.newFramework(rec.Id, info)
		fw.registered = time.Unix(0, rec.RegisteredUnixNano)
		fw.disconnectedAt = now
		m.frameworks[rec.Id] = fw
		if m.allocOK("add_framework", m.addFrameworkLocked(fw), "framework_id", fw.id, "role", fw.role) {
			m.allocOK("deactivate_framework", m.alloc.DeactivateFramework(fw.id), "framework_id", fw.id)
			m.restoreAppDemandLocked(fw, rec.AppDemand)
			fw.jobSize = rec.JobSize // declared after the policy state is restored
			m.jobTypeLocked(fw)
		}
		m.startFailoverTimerLocked(fw)
	}
	for _, rec := range m.reg.Tasks() {
		fw := m.frameworks[rec.FrameworkId]
		if fw == nil {
			continue
		}
		t := taskFromRecord(rec)
		fw.tasks[t.id] = t
		m.tasksOn.place(t)
	}
	m.recoverCompletedLocked()
	m.maint = loadMaintState(m.reg.Maintenance())
	m.recoverUnreachableLocked()
}

// taskFromRecord is the task a registry record describes.
func taskFromRecord(rec *api.TaskRecord) *task {
	t := &task{id: rec.TaskId, fw: rec.FrameworkId, agent: rec.AgentId, executor: rec.ExecutorId, state: mesos.TaskState(rec.State)}
	t.info.Unmarshal(rec.Info)
	t.res, _ = resources.Parse(rec.Resources)
	if len(rec.Status) > 0 {
		var st mesos.TaskStatus
		if st.Unmarshal(rec.Status) == nil {
			t.status = &st
		}
	}
	t.statuses = statusesFromRecord(rec.Statuses)
	// A terminal state in the registry was forwarded to the framework when
	// it was recorded (statusUpdateLocked).
	if taskstate.IsTerminal(t.state) && t.status != nil {
		t.final, t.finalUUID = true, t.status.UUID
	}
	return t
}
