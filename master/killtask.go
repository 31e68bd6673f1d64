package master

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/auth"
)

// KillPath kills one task on an operator's behalf. Mesos's operator API
// has no such call (only TEARDOWN of a whole framework); allot's is a POST
// of KillRequest, authorized by the kill_tasks ACL on the framework's
// principal, and kills the task exactly as the framework's own KILL would:
// the agent kills it under its TaskInfo's kill policy and the framework
// receives TASK_KILLED.
const KillPath = "/api/v1/allot/kill"

// KillRequest is KillPath's body.
type KillRequest struct {
	FrameworkID string `json:"framework_id"`
	TaskID      string `json:"task_id"`
}

// maxKillBody bounds KillPath's body: two ids.
const maxKillBody = 1 << 16

// handleKillTask serves POST KillPath: 202 once the KILL went to the
// agent. Takes m.mu.
func (m *Master) handleKillTask(w http.ResponseWriter, r *http.Request) {
	var req KillRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxKillBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "kill: want JSON {\"framework_id\": ..., \"task_id\": ...}: %v", err))
		return
	}
	req.FrameworkID, req.TaskID = strings.TrimSpace(req.FrameworkID), strings.TrimSpace(req.TaskID)
	if req.FrameworkID == "" || req.TaskID == "" {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "kill: framework_id and task_id are required"))
		return
	}
	if err := m.killTaskAs(auth.SubjectFrom(r.Context()), req); err != nil {
		api.WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// killTaskAs kills req's task if who may kill the framework's tasks.
// Takes m.mu.
func (m *Master) killTaskAs(who auth.Subject, req KillRequest) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := m.frameworks[req.FrameworkID]
	if fw == nil {
		if t := m.completed.get(req.FrameworkID, req.TaskID); t != nil {
			return api.Errorf(http.StatusConflict, "kill: task %s of framework %s is already %s", req.TaskID, req.FrameworkID, t.state)
		}
		return api.Errorf(http.StatusNotFound, "kill: framework %s is not known to this master", req.FrameworkID)
	}
	if err := m.authorize(who, auth.KillTasks, fw.subjectPrincipal(), false); err != nil {
		return err
	}
	t := fw.tasks[req.TaskID]
	if t == nil {
		if done := m.completed.get(fw.id, req.TaskID); done != nil {
			return api.Errorf(http.StatusConflict, "kill: task %s of framework %s is already %s", req.TaskID, fw.id, done.state)
		}
		return api.Errorf(http.StatusNotFound, "kill: framework %s has no task %s", fw.id, req.TaskID)
	}
	if taskstate.IsTerminal(t.state) {
		return api.Errorf(http.StatusConflict, "kill: task %s of framework %s is already %s", t.id, fw.id, t.state)
	}
	m.log.Info().Str("framework_id", fw.id).Str("task_id", t.id).Str("principal", who.Principal).Msg("operator kill")
	return m.killLocked(fw, &scheduler.Call_Kill{TaskID: mesos.TaskID{Value: t.id}, AgentID: &mesos.AgentID{Value: t.agent}})
}
