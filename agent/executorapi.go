package agent

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	exec1 "github.com/mesos/mesos-go/api/v1/lib/executor"

	"github.com/allot-sched/allot/api"
)

// handleExecutor serves POST /api/v1/executor.
func (a *Agent) handleExecutor(w http.ResponseWriter, r *http.Request) {
	claims, ok := a.authenticateExecutor(w, r)
	if !ok {
		return
	}
	req, err := api.ReadRequest(w, r)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	var call exec1.Call
	if err := req.Decode(&call, "executor.Call"); err != nil {
		api.WriteError(w, err)
		return
	}
	if !a.authorizeExecutorCall(w, claims, &call) {
		return
	}
	key := exKey(call.FrameworkID.Value, call.ExecutorID.Value)
	switch call.Type {
	case exec1.Call_SUBSCRIBE:
		a.executorSubscribe(w, r, req, key, &call)
		return
	case exec1.Call_UPDATE:
		if !a.executorUpdate(w, key, &call) {
			return
		}
	case exec1.Call_MESSAGE:
		if call.Message == nil {
			api.WriteError(w, api.Errorf(http.StatusBadRequest, "MESSAGE call without message"))
			return
		}
		a.send(&api.AgentCall{Type: api.AgentCallType_EXECUTOR_MESSAGE, FrameworkId: call.FrameworkID.Value, ExecutorId: call.ExecutorID.Value, Data: call.Message.Data})
	default:
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "unknown executor call type %d", call.Type))
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// executorUpdate takes an UPDATE call of the executor under key: its
// status, marked as the executor's, joins the task's update stream unless
// that stream already holds its uuid (a retry). It answers a bad call
// itself and then returns false.
func (a *Agent) executorUpdate(w http.ResponseWriter, key string, call *exec1.Call) bool {
	if call.Update == nil || call.Update.Status.TaskID.Value == "" {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "UPDATE call without update.status.task_id"))
		return false
	}
	if len(call.Update.Status.UUID) == 0 {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "UPDATE call without update.status.uuid"))
		return false
	}
	a.mu.Lock()
	ex := a.executors[key]
	if ex == nil {
		a.mu.Unlock()
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "executor %s of framework %s is not running on this agent", call.ExecutorID.Value, call.FrameworkID.Value))
		return false
	}
	t := ex.tasks[call.Update.Status.TaskID.Value]
	if t == nil {
		a.mu.Unlock()
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "task %s is not known to executor %s", call.Update.Status.TaskID.Value, ex.id))
		return false
	}
	st := call.Update.Status
	st.Source = mesos.SOURCE_EXECUTOR.Enum()
	st.ExecutorID = &mesos.ExecutorID{Value: ex.id}
	if st.Timestamp == nil {
		now := float64(a.clock().Now().UnixNano()) / 1e9
		st.Timestamp = &now
	}
	dup := false
	for _, p := range t.pending {
		if string(p.UUID) == string(st.UUID) {
			dup = true
		}
	}
	if !dup && !a.droppedAfterTerminalLocked(ex, t, &st) {
		a.enqueueUpdateLocked(ex, t, a.checkLimitOnEndLocked(ex, &st))
	}
	a.mu.Unlock()
	return true
}

// executorSubscribe serves a SUBSCRIBE call: the executor's event stream,
// opened with SUBSCRIBED, the updates it sent that the agent lacks taken
// in, then the events queued while it was away.
func (a *Agent) executorSubscribe(w http.ResponseWriter, r *http.Request, req *api.Request, key string, call *exec1.Call) {
	a.mu.Lock()
	ex := a.executors[key]
	if ex == nil || ex.exited {
		a.mu.Unlock()
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "executor %s of framework %s is not running on this agent", call.ExecutorID.Value, call.FrameworkID.Value))
		return
	}
	if ex.stream != nil {
		ex.stream.Close("executor re-subscribed")
	}
	stream := api.NewStream(req.Out, 65536)
	ex.stream = stream
	ex.subscribed = true
	port := int32(0)
	if _, p, err := splitHostPort(a.addr); err == nil {
		port = int32(p)
	}
	ci := mesos.ContainerID{Value: ex.containerID}
	stream.Send(&exec1.Event{Type: exec1.Event_SUBSCRIBED, Subscribed: &exec1.Event_Subscribed{
		ExecutorInfo: ex.info, FrameworkInfo: ex.fwInfo, ContainerID: &ci,
		AgentInfo: mesos.AgentInfo{Hostname: a.cfg.Hostname, Port: &port, ID: &mesos.AgentID{Value: a.id}}}})
	known := map[string]bool{}
	if s := call.Subscribe; s != nil {
		for _, ti := range s.UnacknowledgedTasks {
			known[ti.TaskID.Value] = true
			if t := ex.tasks[ti.TaskID.Value]; t != nil {
				t.launched = true
			}
		}
		a.takeUnacknowledgedLocked(ex, stream, s.UnacknowledgedUpdates)
	}
	ex.queued = append(ex.queued, a.lostLaunchesLocked(ex, known)...)
	for _, ev := range ex.queued {
		if ev.Launch != nil && known[ev.Launch.Task.TaskID.Value] {
			continue
		}
		stream.Send(ev)
		if ev.Launch != nil {
			if t := ex.tasks[ev.Launch.Task.TaskID.Value]; t != nil {
				t.launched = true
			}
		}
		if ev.LaunchGroup != nil {
			for _, ti := range ev.LaunchGroup.TaskGroup.Tasks {
				if t := ex.tasks[ti.TaskID.Value]; t != nil {
					t.launched = true
				}
			}
		}
	}
	ex.queued = nil
	if ex.killing {
		stream.Send(&exec1.Event{Type: exec1.Event_SHUTDOWN})
	}
	a.mu.Unlock()
	a.log.Debug().Str("executor_id", ex.id).Str("framework_id", ex.fw).Msg("executor subscribed")
	stream.Serve(w, r, req.RecordIO, nil)
	a.mu.Lock()
	if ex.stream == stream {
		ex.stream = nil
	}
	a.mu.Unlock()
}

func splitHostPort(addr string) (string, int, error) {
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		return "", 0, fmt.Errorf("no port in %q", addr)
	}
	n, err := strconv.Atoi(addr[i+1:])
	return addr[:i], n, err
}

// takeUnacknowledgedLocked takes the updates a re-subscribing executor has
// not seen acknowledged: those the agent has not heard of go to the
// framework, and those of a task the agent has already forgotten are
// acknowledged to the executor at once. Caller holds a.mu.
func (a *Agent) takeUnacknowledgedLocked(ex *executor, stream *api.Stream, updates []exec1.Call_Update) {
	for _, u := range updates {
		t := ex.tasks[u.Status.TaskID.Value]
		if len(u.Status.UUID) == 0 {
			continue
		}
		if t == nil {
			// The task's terminal update was acknowledged and the task
			// forgotten, but the acknowledgement never reached the
			// executor (the agent was killed just then): it hears of it
			// now, or it would wait for it and never exit.
			stream.Send(&exec1.Event{Type: exec1.Event_ACKNOWLEDGED, Acknowledged: &exec1.Event_Acknowledged{TaskID: u.Status.TaskID, UUID: u.Status.UUID}})
			continue
		}
		seen := t.latest != nil && string(t.latest.UUID) == string(u.Status.UUID)
		for _, p := range t.pending {
			seen = seen || string(p.UUID) == string(u.Status.UUID)
		}
		if !seen && !a.droppedAfterTerminalLocked(ex, t, &u.Status) {
			st := u.Status
			st.Source = mesos.SOURCE_EXECUTOR.Enum()
			a.enqueueUpdateLocked(ex, t, &st)
		}
	}
}
