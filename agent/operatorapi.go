package agent

import (
	"errors"
	"net/http"
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	magent "github.com/mesos/mesos-go/api/v1/lib/agent"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// The agent's operator API: POST /api/v1 with an agent.Call in protobuf or
// JSON, answered with an agent.Response in the codec the caller accepts,
// as Mesos's agent serves it. It is a read-write route (Mesos's agent puts
// /api/v1 in its read-write realm): with --authenticate-http-readwrite it
// needs a credential, and LIST_FILES and READ_FILE apply access_sandboxes
// like /files/*, SET_LOGGING_LEVEL set_log_level, PRUNE_IMAGES
// prune_images (operatorapi_prune.go).
//
// Calls Mesos's agent has and allot's cannot do (nested and standalone
// containers, resource providers) answer 400 naming the call, as the
// master answers the operator calls it does not serve.

// handleOperatorAPI serves POST /api/v1.
func (a *Agent) handleOperatorAPI(w http.ResponseWriter, r *http.Request) {
	req, err := api.ReadRequest(w, r)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	var call magent.Call
	if err := req.Decode(&call, "agent.Call"); err != nil {
		api.WriteError(w, err)
		return
	}
	resp, err := a.operatorCall(auth.SubjectFrom(r.Context()), &call)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	if resp == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	b, err := req.Out.Marshal(resp)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	w.Header().Set("Content-Type", req.Out.String())
	w.Write(b)
}

// operatorCall answers one call for who; a nil Response is 200 with no
// body (SET_LOGGING_LEVEL).
func (a *Agent) operatorCall(who auth.Subject, call *magent.Call) (*magent.Response, error) {
	switch call.Type {
	case magent.Call_GET_HEALTH:
		return &magent.Response{Type: magent.Response_GET_HEALTH, GetHealth: &magent.Response_GetHealth{Healthy: true}}, nil
	case magent.Call_GET_FLAGS:
		return &magent.Response{Type: magent.Response_GET_FLAGS, GetFlags: &magent.Response_GetFlags{Flags: a.flagList()}}, nil
	case magent.Call_GET_VERSION:
		return &magent.Response{Type: magent.Response_GET_VERSION, GetVersion: &magent.Response_GetVersion{
			VersionInfo: mesos.VersionInfo{Version: orDefault(a.cfg.Version, "unknown")}}}, nil
	case magent.Call_GET_METRICS:
		return &magent.Response{Type: magent.Response_GET_METRICS, GetMetrics: &magent.Response_GetMetrics{Metrics: a.mesosMetricList()}}, nil
	case magent.Call_GET_LOGGING_LEVEL:
		return &magent.Response{Type: magent.Response_GET_LOGGING_LEVEL,
			GetLoggingLevel: &magent.Response_GetLoggingLevel{Level: a.cfg.LogLevel.Level()}}, nil
	case magent.Call_SET_LOGGING_LEVEL:
		return nil, a.setLoggingLevel(who, call.SetLoggingLevel)
	case magent.Call_PRUNE_IMAGES:
		return nil, a.pruneImages(who, call.PruneImages)
	case magent.Call_LIST_FILES:
		return a.listFilesCall(who, call.ListFiles)
	case magent.Call_READ_FILE:
		return a.readFileCall(who, call.ReadFile)
	case magent.Call_GET_CONTAINERS:
		return &magent.Response{Type: magent.Response_GET_CONTAINERS, GetContainers: a.getContainers()}, nil
	case magent.Call_GET_OPERATIONS:
		// No offer operation changes an agent's resources in allot yet.
		return &magent.Response{Type: magent.Response_GET_OPERATIONS, GetOperations: &magent.Response_GetOperations{}}, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch call.Type {
	case magent.Call_GET_STATE:
		return &magent.Response{Type: magent.Response_GET_STATE, GetState: &magent.Response_GetState{
			GetTasks: a.getTasksLocked(), GetExecutors: a.getExecutorsLocked(), GetFrameworks: a.getFrameworksLocked()}}, nil
	case magent.Call_GET_FRAMEWORKS:
		return &magent.Response{Type: magent.Response_GET_FRAMEWORKS, GetFrameworks: a.getFrameworksLocked()}, nil
	case magent.Call_GET_EXECUTORS:
		return &magent.Response{Type: magent.Response_GET_EXECUTORS, GetExecutors: a.getExecutorsLocked()}, nil
	case magent.Call_GET_TASKS:
		return &magent.Response{Type: magent.Response_GET_TASKS, GetTasks: a.getTasksLocked()}, nil
	case magent.Call_GET_AGENT:
		info := a.agentInfoLocked()
		return &magent.Response{Type: magent.Response_GET_AGENT, GetAgent: &magent.Response_GetAgent{AgentInfo: &info}}, nil
	}
	return nil, api.Errorf(http.StatusBadRequest, "agent operator call %s is not supported", call.Type)
}

// flagList is Config.Flags as GET_FLAGS lists them, by name.
func (a *Agent) flagList() []mesos.Flag {
	names := make([]string, 0, len(a.cfg.Flags))
	for k := range a.cfg.Flags {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]mesos.Flag, 0, len(names))
	for _, k := range names {
		v := a.cfg.Flags[k]
		out = append(out, mesos.Flag{Name: k, Value: &v})
	}
	return out
}

// setLoggingLevel applies SET_LOGGING_LEVEL: the level for the duration,
// then back to the level the agent started with (internal/loglevel).
func (a *Agent) setLoggingLevel(who auth.Subject, c *magent.Call_SetLoggingLevel) error {
	if c == nil {
		return api.Errorf(http.StatusBadRequest, "SET_LOGGING_LEVEL call without set_logging_level")
	}
	d := time.Duration(c.Duration.Nanoseconds)
	if d <= 0 {
		return api.Errorf(http.StatusBadRequest, "SET_LOGGING_LEVEL: duration must be positive, got %v", d)
	}
	if a.cfg.Authorizer != nil {
		if err := a.cfg.Authorizer.Authorize(who, auth.SetLogLevel, ""); err != nil {
			a.log.Warn().Bool("authenticated", who.Authenticated).Str("principal", who.Principal).Msg("authorization denied: SET_LOGGING_LEVEL")
			return api.Errorf(http.StatusForbidden, "SET_LOGGING_LEVEL: %v", err)
		}
	}
	a.cfg.LogLevel.Set(c.Level, d)
	a.log.Info().Uint32("level", c.Level).Dur("duration", d).Str("principal", who.Principal).Msg("logging level set")
	return nil
}

// asAPIError turns a sandbox refusal (fileError) into the API's error
// with the same status.
func asAPIError(call string, err error) error {
	var fe *fileError
	if errors.As(err, &fe) {
		return api.Errorf(fe.code, "%s: %s", call, fe.msg)
	}
	return api.Errorf(http.StatusInternalServerError, "%s: %v", call, err)
}

func (a *Agent) listFilesCall(who auth.Subject, c *magent.Call_ListFiles) (*magent.Response, error) {
	if c == nil {
		return nil, api.Errorf(http.StatusBadRequest, "LIST_FILES call without list_files")
	}
	infos, err := a.listSandbox(who, c.Path)
	if err != nil {
		return nil, asAPIError("LIST_FILES", err)
	}
	return &magent.Response{Type: magent.Response_LIST_FILES, ListFiles: &magent.Response_ListFiles{FileInfos: infos}}, nil
}

func (a *Agent) readFileCall(who auth.Subject, c *magent.Call_ReadFile) (*magent.Response, error) {
	if c == nil {
		return nil, api.Errorf(http.StatusBadRequest, "READ_FILE call without read_file")
	}
	size, data, err := a.readSandbox(who, c.Path, c.Offset, c.Length)
	if err != nil {
		return nil, asAPIError("READ_FILE", err)
	}
	if data == nil {
		data = []byte{} // a required field: protobuf refuses nil
	}
	return &magent.Response{Type: magent.Response_READ_FILE, ReadFile: &magent.Response_ReadFile{Size_: size, Data: data}}, nil
}
