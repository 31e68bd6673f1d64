package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	magent "github.com/mesos/mesos-go/api/v1/lib/agent"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/loglevel"
)

// operatorAgent is newAuthAgent with one framework f whose executor e
// (container c1, the run on disk) holds a running task t1 and a task t2
// its executor has not taken yet.
func operatorAgent(t *testing.T, h HTTPAuthn, authz auth.Authorizer) *Agent {
	t.Helper()
	a := newAuthAgent(t, h, authz)
	a.cfg.Flags = map[string]string{"work_dir": a.cfg.WorkDir, "isolation": "posix/cpu,posix/mem"}
	a.cfg.Version = "1.11.0"
	a.id, a.addr, a.cfg.Hostname = "S1", "127.0.0.1:5051", "host1"
	name := "fw"
	a.frameworks["f"] = &mesos.FrameworkInfo{ID: &mesos.FrameworkID{Value: "f"}, Name: name, User: "alice"}
	res := []mesos.Resource{{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 0.5}}}
	ex := &executor{fw: "f", id: "e", containerID: "c1", subscribed: true, tasks: map[string]*agentTask{},
		info: mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "e"}, FrameworkID: &mesos.FrameworkID{Value: "f"}}}
	running := mesos.TASK_RUNNING
	ex.tasks["t1"] = &agentTask{info: mesos.TaskInfo{Name: "one", TaskID: mesos.TaskID{Value: "t1"}, Resources: res},
		state: running, launched: true, latest: &mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t1"}, State: &running}}
	ex.tasks["t2"] = &agentTask{info: mesos.TaskInfo{Name: "two", TaskID: mesos.TaskID{Value: "t2"}, Resources: res}, state: mesos.TASK_STAGING}
	a.executors[exKey("f", "e")] = ex
	return a
}

// callAgent posts call to the agent's /api/v1 in codec c as principal
// (none if ""), and decodes a 200 answer with mesos-go's own type.
func callAgent(t *testing.T, h http.Handler, c api.Codec, principal string, call *magent.Call) (int, string, *magent.Response) {
	t.Helper()
	body, err := c.Marshal(call)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1", bytes.NewReader(body))
	req.Header.Set("Content-Type", c.String())
	if principal != "" {
		req.SetBasicAuth(principal, map[string]string{"alice": "a-secret", "bob": "b-secret"}[principal])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusOK || len(out) == 0 {
		return rec.Code, string(out), nil
	}
	var resp magent.Response
	if err := c.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%s: answer does not decode as mesos-go's agent.Response: %v\n%s", call.Type, err, out)
	}
	if c == api.JSON {
		// Re-encoded by mesos-go, the answer says the same: every field
		// allot wrote is one of Mesos's, under Mesos's name.
		again, _ := json.Marshal(&resp)
		var x, y any
		json.Unmarshal(out, &x)
		json.Unmarshal(again, &y)
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s: re-encoded answer differs:\n got %s\nwant %s", call.Type, again, out)
		}
	}
	return rec.Code, string(out), &resp
}

func TestAgentOperatorCalls(t *testing.T) {
	a := operatorAgent(t, HTTPAuthn{}, nil)
	h := a.httpHandler()
	length := uint64(3)
	cases := []struct {
		call  magent.Call
		check func(r *magent.Response) bool
	}{
		{magent.Call{Type: magent.Call_GET_HEALTH}, func(r *magent.Response) bool { return r.GetGetHealth().Healthy }},
		{magent.Call{Type: magent.Call_GET_FLAGS}, func(r *magent.Response) bool {
			f := r.GetGetFlags().Flags
			return len(f) == 2 && f[0].Name == "isolation" && f[0].GetValue() == "posix/cpu,posix/mem"
		}},
		{magent.Call{Type: magent.Call_GET_VERSION}, func(r *magent.Response) bool { return r.GetGetVersion().VersionInfo.Version == "1.11.0" }},
		{magent.Call{Type: magent.Call_GET_METRICS}, func(r *magent.Response) bool {
			m := map[string]float64{}
			for _, x := range r.GetGetMetrics().Metrics {
				m[x.Name] = x.GetValue()
			}
			return m["slave/cpus_total"] == 1 && m["slave/tasks_running"] == 1 && m["slave/tasks_staging"] == 1 &&
				m["slave/executors_running"] == 1 && m["slave/frameworks_active"] == 1 && m["slave/cpus_used"] == 1
		}},
		{magent.Call{Type: magent.Call_GET_LOGGING_LEVEL}, func(r *magent.Response) bool { return r.GetGetLoggingLevel() != nil }},
		{magent.Call{Type: magent.Call_GET_STATE}, func(r *magent.Response) bool {
			s := r.GetGetState()
			return len(s.GetGetFrameworks().Frameworks) == 1 && len(s.GetGetExecutors().Executors) == 1 && len(s.GetGetTasks().LaunchedTasks) == 1
		}},
		{magent.Call{Type: magent.Call_GET_FRAMEWORKS}, func(r *magent.Response) bool {
			return r.GetGetFrameworks().Frameworks[0].FrameworkInfo.Name == "fw"
		}},
		{magent.Call{Type: magent.Call_GET_EXECUTORS}, func(r *magent.Response) bool {
			return r.GetGetExecutors().Executors[0].ExecutorInfo.ExecutorID.Value == "e"
		}},
		{magent.Call{Type: magent.Call_GET_TASKS}, func(r *magent.Response) bool {
			tk := r.GetGetTasks()
			return len(tk.LaunchedTasks) == 1 && tk.LaunchedTasks[0].TaskID.Value == "t1" && tk.LaunchedTasks[0].GetState() == mesos.TASK_RUNNING &&
				len(tk.QueuedTasks) == 1 && tk.QueuedTasks[0].TaskID.Value == "t2" && tk.LaunchedTasks[0].AgentID.Value == "S1"
		}},
		{magent.Call{Type: magent.Call_GET_AGENT}, func(r *magent.Response) bool {
			ai := r.GetGetAgent().AgentInfo
			return ai.Hostname == "host1" && ai.GetID().Value == "S1" && ai.GetPort() == 5051 && len(ai.Resources) > 0
		}},
		{magent.Call{Type: magent.Call_GET_CONTAINERS}, func(r *magent.Response) bool { return r.GetGetContainers() != nil }},
		{magent.Call{Type: magent.Call_GET_OPERATIONS}, func(r *magent.Response) bool { return len(r.GetGetOperations().Operations) == 0 }},
		{magent.Call{Type: magent.Call_LIST_FILES, ListFiles: &magent.Call_ListFiles{Path: "/frameworks/f/executors/e/runs/latest"}},
			func(r *magent.Response) bool {
				fi := r.GetListFiles().FileInfos
				return len(fi) == 1 && fi[0].Path == "/frameworks/f/executors/e/runs/latest/stdout" && fi[0].GetSize_() == 6 &&
					fi[0].GetMode()&syscall.S_IFMT == syscall.S_IFREG && fi[0].GetUID() != "" && fi[0].GetMtime() != nil
			}},
		{magent.Call{Type: magent.Call_READ_FILE, ReadFile: &magent.Call_ReadFile{Path: "/frameworks/f/executors/e/runs/latest/stdout", Offset: 1, Length: &length}},
			func(r *magent.Response) bool {
				return r.GetReadFile().Size_ == 6 && string(r.GetReadFile().Data) == "ell"
			}},
		{magent.Call{Type: magent.Call_READ_FILE, ReadFile: &magent.Call_ReadFile{Path: "/frameworks/f/executors/e/runs/latest/stdout", Offset: 9}},
			func(r *magent.Response) bool { return r.GetReadFile().Size_ == 6 && len(r.GetReadFile().Data) == 0 }},
	}
	for _, c := range cases {
		for _, codec := range []api.Codec{api.JSON, api.Protobuf} {
			code, body, resp := callAgent(t, h, codec, "", &c.call)
			if code != http.StatusOK || resp == nil {
				t.Errorf("%s (%s): %d %s", c.call.Type, codec, code, body)
				continue
			}
			if resp.Type.String() != c.call.Type.String() || !c.check(resp) {
				t.Errorf("%s (%s): unexpected answer %s", c.call.Type, codec, body)
			}
		}
	}
}

// Calls that are malformed, name what is not in a sandbox, or that allot's
// agent cannot do answer 4xx saying so.
func TestAgentOperatorCallErrors(t *testing.T) {
	a := operatorAgent(t, HTTPAuthn{}, nil)
	h := a.httpHandler()
	cases := []struct {
		call magent.Call
		code int
		says string
	}{
		{magent.Call{Type: magent.Call_LAUNCH_NESTED_CONTAINER}, http.StatusBadRequest, "LAUNCH_NESTED_CONTAINER is not supported"},
		{magent.Call{Type: magent.Call_GET_RESOURCE_PROVIDERS}, http.StatusBadRequest, "GET_RESOURCE_PROVIDERS is not supported"},
		{magent.Call{Type: magent.Call_LIST_FILES}, http.StatusBadRequest, "without list_files"},
		{magent.Call{Type: magent.Call_READ_FILE}, http.StatusBadRequest, "without read_file"},
		{magent.Call{Type: magent.Call_SET_LOGGING_LEVEL}, http.StatusBadRequest, "without set_logging_level"},
		{magent.Call{Type: magent.Call_SET_LOGGING_LEVEL, SetLoggingLevel: &magent.Call_SetLoggingLevel{Level: 1}}, http.StatusBadRequest, "duration must be positive"},
		{magent.Call{Type: magent.Call_LIST_FILES, ListFiles: &magent.Call_ListFiles{Path: "/etc"}}, http.StatusForbidden, "not inside an executor's sandbox"},
		{magent.Call{Type: magent.Call_READ_FILE, ReadFile: &magent.Call_ReadFile{Path: "/frameworks/f/executors/e/runs/latest/../../../../x"}}, http.StatusForbidden, "leaves the sandbox"},
		{magent.Call{Type: magent.Call_READ_FILE, ReadFile: &magent.Call_ReadFile{Path: "/frameworks/f/executors/e/runs/latest/nope"}}, http.StatusNotFound, "no such file"},
		{magent.Call{Type: magent.Call_READ_FILE, ReadFile: &magent.Call_ReadFile{Path: "/frameworks/f/executors/e/runs/latest"}}, http.StatusBadRequest, "is a directory"},
	}
	for _, c := range cases {
		code, body, _ := callAgent(t, h, api.JSON, "", &c.call)
		if code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.call.Type, code, body, c.code, c.says)
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1", strings.NewReader(`{"type": 1`))
	req.Header.Set("Content-Type", api.MediaJSON)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "agent.Call") {
		t.Errorf("a truncated body: %d %q, want 400 naming agent.Call", rec.Code, rec.Body.String())
	}
}

// SET_LOGGING_LEVEL changes the level for its duration and is authorized
// by set_log_level; LIST_FILES and READ_FILE by access_sandboxes, and the
// API needs a credential with --authenticate-http-readwrite.
func TestAgentOperatorAuthz(t *testing.T) {
	acls, err := auth.ParseACLs([]byte(`{"permissive": false,
		"set_log_level": [{"principals": {"values": ["alice"]}, "level": {"type": "ANY"}}],
		"access_sandboxes": [{"principals": {"values": ["alice"]}, "users": {"type": "ANY"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a := operatorAgent(t, HTTPAuthn{Credentials: testCredentials(t), ReadWrite: true}, acls)
	var reverts []func()
	a.cfg.LogLevel = loglevel.New(zerolog.InfoLevel, nil).WithTimer(func(d time.Duration, f func()) func() {
		reverts = append(reverts, f)
		return func() {}
	})
	h := a.httpHandler()
	set := &magent.Call{Type: magent.Call_SET_LOGGING_LEVEL, SetLoggingLevel: &magent.Call_SetLoggingLevel{Level: 2, Duration: mesos.DurationInfo{Nanoseconds: int64(time.Minute)}}}
	list := &magent.Call{Type: magent.Call_LIST_FILES, ListFiles: &magent.Call_ListFiles{Path: "/frameworks/f/executors/e/runs/latest"}}
	get := &magent.Call{Type: magent.Call_GET_LOGGING_LEVEL}
	for _, c := range []struct {
		who  string
		call *magent.Call
		code int
	}{
		{"", get, http.StatusUnauthorized},
		{"bob", set, http.StatusForbidden},
		{"bob", list, http.StatusForbidden},
		{"alice", list, http.StatusOK},
		{"alice", set, http.StatusOK},
	} {
		if code, body, _ := callAgent(t, h, api.JSON, c.who, c.call); code != c.code {
			t.Errorf("%s as %q: %d %s, want %d", c.call.Type, c.who, code, body, c.code)
		}
	}
	if _, _, r := callAgent(t, h, api.JSON, "alice", get); r == nil || r.GetGetLoggingLevel().Level != 2 {
		t.Fatalf("GET_LOGGING_LEVEL after SET to 2: %v", r)
	}
	if len(reverts) != 1 {
		t.Fatalf("%d reverts scheduled, want 1", len(reverts))
	}
	reverts[0]()
	if _, _, r := callAgent(t, h, api.JSON, "alice", get); r == nil || r.GetGetLoggingLevel().Level != 0 {
		t.Fatalf("GET_LOGGING_LEVEL after the duration: %v, want 0", r)
	}
}

// /metrics/snapshot has Mesos's slave/... names; /metrics the same values
// for Prometheus.
func TestAgentMetricsEndpoints(t *testing.T) {
	a := operatorAgent(t, HTTPAuthn{}, nil)
	h := a.httpHandler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics/snapshot", nil))
	var snap map[string]float64
	if err := json.Unmarshal(rec.Body.Bytes(), &snap); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("/metrics/snapshot: %d %v %s", rec.Code, err, rec.Body)
	}
	for _, k := range []string{"slave/uptime_secs", "slave/registered", "slave/mem_total", "slave/disk_used", "slave/tasks_running", "slave/executors_running"} {
		if _, ok := snap[k]; !ok {
			t.Errorf("/metrics/snapshot lacks %s: %v", k, snap)
		}
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), "allot_agent_tasks_running 1") {
		t.Errorf("/metrics lacks allot_agent_tasks_running 1:\n%s", rec.Body)
	}
}
