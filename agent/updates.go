package agent

import (
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	exec1 "github.com/mesos/mesos-go/api/v1/lib/executor"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
)

// agentStatus is a status the agent itself reports for t (SOURCE_AGENT),
// stamped with the agent's clock.
func (a *Agent) agentStatus(ex *executor, t *agentTask, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) *mesos.TaskStatus {
	now := float64(a.clock().Now().UnixNano()) / 1e9
	return &mesos.TaskStatus{TaskID: t.info.TaskID, State: state.Enum(), Source: mesos.SOURCE_AGENT.Enum(), Reason: reason.Enum(),
		Message: &msg, Timestamp: &now, ExecutorID: &mesos.ExecutorID{Value: ex.id}, UUID: newUUID()}
}

// newTaskFailed records ti on ex only to end it in state at once. Caller
// holds a.mu.
func (a *Agent) newTaskFailed(ex *executor, ti mesos.TaskInfo, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) {
	t := &agentTask{info: ti, state: mesos.TASK_STAGING}
	ex.tasks[ti.TaskID.Value] = t
	a.enqueueUpdateLocked(ex, t, a.agentStatus(ex, t, state, reason, msg))
}

// enqueueUpdateLocked appends st to the task's update stream and sends it
// if it is the head.
func (a *Agent) enqueueUpdateLocked(ex *executor, t *agentTask, st *mesos.TaskStatus) {
	a.stampContainerStatusLocked(ex, st) // container_network.go
	if len(st.UUID) == 0 {
		st.UUID = newUUID()
	}
	if a.id != "" {
		st.AgentID = &mesos.AgentID{Value: a.id}
	}
	if st.ExecutorID == nil {
		st.ExecutorID = &mesos.ExecutorID{Value: ex.id}
	}
	if !taskstate.IsTerminal(t.state) && taskstate.IsTerminal(st.GetState()) {
		a.ended.count(st.GetState())
	}
	t.state, t.latest = st.GetState(), st
	t.pending = append(t.pending, st)
	if len(t.pending) == 1 {
		a.forwardLocked(ex, t, true)
	}
	a.checkpointLocked(ex)
}

// The status update retry intervals' defaults, Mesos's agent's own
// (STATUS_UPDATE_RETRY_INTERVAL_MIN and _MAX): a framework that reads its
// stream a little late does not receive every update twice.
const (
	defaultStatusUpdateRetry    = 10 * time.Second
	defaultStatusUpdateRetryMax = 10 * time.Minute
)

// updateRetry is the first and the longest wait before an unacknowledged
// update is resent: Config's, or the defaults where unset (an Agent built
// without New, as tests do).
func (a *Agent) updateRetry() (first, longest time.Duration) {
	first, longest = a.cfg.StatusUpdateRetry, a.cfg.StatusUpdateRetryMax
	if first <= 0 {
		first = defaultStatusUpdateRetry
	}
	if longest <= 0 {
		longest = defaultStatusUpdateRetryMax
	}
	return first, max(first, longest)
}

// forwardLocked sends the head of t's update stream to the master (when
// connected) and sets its next retry: the first retry interval after a
// fresh head, doubling up to the longest while the same head goes
// unacknowledged.
func (a *Agent) forwardLocked(ex *executor, t *agentTask, fresh bool) {
	first, longest := a.updateRetry()
	if fresh || t.backoff == 0 {
		t.backoff = first
	} else {
		t.backoff = min(2*t.backoff, longest)
	}
	t.nextRetry = a.clock().Now().Add(t.backoff)
	if !a.connected {
		return
	}
	b, _ := t.pending[0].Marshal()
	a.send(&api.AgentCall{Type: api.AgentCallType_STATUS_UPDATE, FrameworkId: ex.fw, ExecutorId: ex.id, Status: b})
}

// retryLoop resends the head update of every task whose acknowledgement is
// overdue, with exponential backoff.
func (a *Agent) retryLoop() {
	clock := a.clock()
	for {
		select {
		case <-a.stop:
			return
		case <-clock.After(200 * time.Millisecond):
		}
		a.mu.Lock()
		a.retryDueLocked(clock.Now())
		a.mu.Unlock()
	}
}

// retryDueLocked resends, when connected, every head update whose retry
// is due at now. Caller holds a.mu.
func (a *Agent) retryDueLocked(now time.Time) {
	if !a.connected {
		return
	}
	for _, ex := range a.executors {
		for _, tk := range ex.tasks {
			if len(tk.pending) > 0 && !now.Before(tk.nextRetry) {
				a.forwardLocked(ex, tk, false)
			}
		}
	}
}

// acknowledged takes a framework's acknowledgement of a task's head
// update: the executor hears of it if the update was its own, the next
// update goes out, and a task that ended is forgotten.
func (a *Agent) acknowledged(fwID, taskID string, uuid []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ex := range a.executors {
		if ex.fw != fwID {
			continue
		}
		t := ex.tasks[taskID]
		if t == nil || len(t.pending) == 0 || string(t.pending[0].UUID) != string(uuid) {
			continue
		}
		head := t.pending[0]
		t.pending = t.pending[1:]
		if head.GetSource() == mesos.SOURCE_EXECUTOR && ex.stream != nil {
			ex.stream.Send(&exec1.Event{Type: exec1.Event_ACKNOWLEDGED, Acknowledged: &exec1.Event_Acknowledged{TaskID: t.info.TaskID, UUID: uuid}})
		}
		if len(t.pending) > 0 {
			a.forwardLocked(ex, t, true)
		} else if taskstate.IsTerminal(t.state) {
			delete(ex.tasks, taskID)
			if ex.commandTask && len(ex.tasks) == 0 {
				// The command executor of a plain command task has nothing
				// left to do and exits by itself now; if it does not (it is
				// stuck, or an older one that missed this ack), it is shut
				// down, so that its container goes with it.
				a.shutdownExecutor(ex)
			}
		}
		a.cleanupLocked(ex)
		return
	}
}
