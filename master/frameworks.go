package master

import (
	"time"

	"github.com/allot-sched/allot/api"
)

func (m *Master) startFailoverTimer(fw *framework) {
	if fw.failoverTimer != nil {
		fw.failoverTimer.Stop()
	}
	d := time.Duration(fw.info.GetFailoverTimeout() * float64(time.Second))
	id := fw.id
	fw.failoverTimer = time.AfterFunc(d, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		f := m.frameworks[id]
		if f == nil || f != fw || f.stream != nil {
			return
		}
		m.log.Info().Str("framework_id", id).Dur("failover_timeout", d).Msg("framework did not re-subscribe in time; removing it")
		m.removeFramework(f, "failover timeout expired")
	})
}

// removeFramework kills the framework's tasks, returns its resources and
// forgets it. Caller holds m.mu.
func (m *Master) removeFramework(fw *framework, why string) {
	if fw.failoverTimer != nil {
		fw.failoverTimer.Stop()
	}
	for _, o := range fw.offers {
		m.removeOffer(o, true, nil)
	}
	hosts := map[string]bool{}
	for _, t := range fw.tasks {
		hosts[t.agent] = true
	}
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
	m.alloc.RemoveFramework(fw.id)
	delete(m.frameworks, fw.id)
	m.removedFrameworks[fw.id] = true
	if fw.stream != nil {
		fw.stream.Close("framework removed: " + why)
	}
	m.rep.propose(&api.Command{Type: api.CommandType_FRAMEWORK_REMOVE, Id: fw.id})
	m.publishFramework(evFrameworkRemoved, fw)
	m.log.Info().Str("framework_id", fw.id).Str("why", why).Msg("framework removed")
	m.triggerAllocation()
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
