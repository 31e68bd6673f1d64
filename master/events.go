package master

import (
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// Takes m.mu.
func (m *Master) operatorSubscribe(w http.ResponseWriter, r *http.Request, req *api.Request) {
	stream := api.NewStream(req.Out, 16384)
	stream.OmitEmpty = true // as Mesos: no unset fields
	who := auth.SubjectFrom(r.Context())
	m.mu.Lock()
	hb := m.cfg.HeartbeatInterval.Seconds()
	state := &mmaster.Response{GetState: m.getStateLocked()}
	m.filterResponseLocked(who, state)
	stream.Send(&mmaster.Event{Type: mmaster.Event_SUBSCRIBED, Subscribed: &mmaster.Event_Subscribed{GetState: state.GetState, HeartbeatIntervalSeconds: &hb}})
	m.opSubs[stream] = who
	m.mu.Unlock()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(m.cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				stream.Send(&mmaster.Event{Type: mmaster.Event_HEARTBEAT})
			}
		}
	}()
	stream.Serve(w, r, req.RecordIO, nil)
	close(done)
	m.mu.Lock()
	delete(m.opSubs, stream)
	m.mu.Unlock()
}

// publishLocked sends an operator event to every operator subscriber. Caller
// holds m.mu.
func (m *Master) publishLocked(ev *mmaster.Event) {
	for s, who := range m.opSubs {
		if m.mayViewEventLocked(who, ev) {
			s.Send(ev)
		}
	}
}

// publishTaskLocked tells operator subscribers a task was added or updated.
// Caller holds m.mu.
func (m *Master) publishTaskLocked(typ mmaster.Event_Type, t *task) {
	if len(m.opSubs) == 0 {
		return
	}
	if typ == evTaskAdded {
		m.publishLocked(&mmaster.Event{Type: typ, TaskAdded: &mmaster.Event_TaskAdded{Task: m.mesosTask(t)}})
		return
	}
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: t.id}, State: t.state.Enum()}
	if t.status != nil {
		st = *t.status
	}
	m.publishLocked(&mmaster.Event{Type: typ, TaskUpdated: &mmaster.Event_TaskUpdated{FrameworkID: mesos.FrameworkID{Value: t.fw}, Status: st, State: t.state.Enum()}})
}

// publishAgentLocked tells operator subscribers an agent was added or
// removed. Caller holds m.mu.
func (m *Master) publishAgentLocked(typ mmaster.Event_Type, a *agentState) {
	if len(m.opSubs) == 0 {
		return
	}
	if typ == evAgentAdded {
		m.publishLocked(&mmaster.Event{Type: typ, AgentAdded: &mmaster.Event_AgentAdded{Agent: m.agentEntryLocked(a)}})
		return
	}
	m.publishLocked(&mmaster.Event{Type: typ, AgentRemoved: &mmaster.Event_AgentRemoved{AgentID: mesos.AgentID{Value: a.rec.Id}}})
}

// publishFrameworkLocked tells operator subscribers a framework was added,
// updated or removed. Caller holds m.mu.
func (m *Master) publishFrameworkLocked(typ mmaster.Event_Type, fw *framework) {
	if len(m.opSubs) == 0 {
		return
	}
	switch typ {
	case evFrameworkAdded:
		m.publishLocked(&mmaster.Event{Type: typ, FrameworkAdded: &mmaster.Event_FrameworkAdded{Framework: m.frameworkEntryLocked(fw)}})
	case evFrameworkUpdated:
		m.publishLocked(&mmaster.Event{Type: typ, FrameworkUpdated: &mmaster.Event_FrameworkUpdated{Framework: m.frameworkEntryLocked(fw)}})
	default:
		m.publishLocked(&mmaster.Event{Type: typ, FrameworkRemoved: &mmaster.Event_FrameworkRemoved{FrameworkInfo: fw.info}})
	}
}

const (
	evTaskAdded        = mmaster.Event_TASK_ADDED
	evTaskUpdated      = mmaster.Event_TASK_UPDATED
	evAgentAdded       = mmaster.Event_AGENT_ADDED
	evAgentRemoved     = mmaster.Event_AGENT_REMOVED
	evFrameworkAdded   = mmaster.Event_FRAMEWORK_ADDED
	evFrameworkUpdated = mmaster.Event_FRAMEWORK_UPDATED
	evFrameworkRemoved = mmaster.Event_FRAMEWORK_REMOVED
)
