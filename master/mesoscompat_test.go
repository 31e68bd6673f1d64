package master

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	magent "github.com/mesos/mesos-go/api/v1/lib/agent"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/loglevel"
)

// operatorHTTP posts call to h's /api/v1 as user (none if "") and, on 200
// with a body, decodes it with mesos-go's master.Response; a JSON answer
// must say the same re-encoded by mesos-go, less the unset fields Mesos
// leaves out (mesos-go's encoding/json writes them as null).
func operatorHTTP(t *testing.T, m *Master, c api.Codec, user string, call *mmaster.Call) (int, string, *mmaster.Response) {
	t.Helper()
	body, err := c.Marshal(call)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1", bytes.NewReader(body))
	req.Header.Set("Content-Type", c.String())
	if user != "" {
		req.SetBasicAuth(user, map[string]string{"alice": "s3cret", "agent": "a-secret"}[user])
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, req)
	out, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusOK || len(out) == 0 {
		return rec.Code, string(out), nil
	}
	var resp mmaster.Response
	if err := c.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%s: answer does not decode as mesos-go's master.Response: %v\n%s", call.Type, err, out)
	}
	if c == api.JSON {
		again, _ := json.Marshal(&resp)
		if again, err = api.OmitEmpty(again); err != nil {
			t.Fatal(err)
		}
		var x, y any
		json.Unmarshal(out, &x)
		json.Unmarshal(again, &y)
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s: re-encoded answer differs:\n got %s\nwant %s", call.Type, again, out)
		}
	}
	return rec.Code, string(out), &resp
}

// SET_LOGGING_LEVEL sets the level for its duration (then it reverts),
// GET_LOGGING_LEVEL reads it, set_log_level authorizes it, and a bad call
// is a 400 saying what is wrong.
func TestMasterLoggingLevel(t *testing.T) {
	var reverts []func()
	ctl := loglevel.New(zerolog.InfoLevel, nil).WithTimer(func(d time.Duration, f func()) func() {
		reverts = append(reverts, f)
		return func() {}
	})
	acls, err := auth.ParseACLs([]byte(`{"permissive": true,
		"set_log_level": [{"principals": {"values": ["alice"]}, "level": {"type": "ANY"}}, {"principals": {"type": "ANY"}, "level": {"type": "NONE"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) {
		c.LogLevel, c.Authorizer = ctl, acls
		c.Authn = Authn{Credentials: testCredentials(t), HTTPReadWrite: true}
	})
	get := &mmaster.Call{Type: mmaster.Call_GET_LOGGING_LEVEL}
	set := func(level uint32, d time.Duration) *mmaster.Call {
		return &mmaster.Call{Type: mmaster.Call_SET_LOGGING_LEVEL, SetLoggingLevel: &mmaster.Call_SetLoggingLevel{
			Level: level, Duration: mesos.DurationInfo{Nanoseconds: int64(d)}}}
	}
	for _, c := range []struct {
		user string
		call *mmaster.Call
		code int
		says string
	}{
		{"", get, http.StatusUnauthorized, ""},
		{"agent", set(1, time.Minute), http.StatusForbidden, "set_log_level"},
		{"alice", &mmaster.Call{Type: mmaster.Call_SET_LOGGING_LEVEL}, http.StatusBadRequest, "without set_logging_level"},
		{"alice", set(1, 0), http.StatusBadRequest, "duration must be positive"},
		{"alice", set(2, time.Minute), http.StatusOK, ""},
	} {
		code, body, _ := operatorHTTP(t, h.m, api.JSON, c.user, c.call)
		if code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("%s as %q: %d %q, want %d saying %q", c.call.Type, c.user, code, body, c.code, c.says)
		}
	}
	for _, codec := range []api.Codec{api.JSON, api.Protobuf} {
		if _, _, r := operatorHTTP(t, h.m, codec, "alice", get); r == nil || r.GetGetLoggingLevel().Level != 2 {
			t.Fatalf("GET_LOGGING_LEVEL (%s) after SET 2: %v", codec, r)
		}
	}
	if len(reverts) != 1 {
		t.Fatalf("%d reverts scheduled, want 1", len(reverts))
	}
	reverts[0]()
	if _, _, r := operatorHTTP(t, h.m, api.JSON, "alice", get); r == nil || r.GetGetLoggingLevel().Level != 0 {
		t.Fatalf("GET_LOGGING_LEVEL after the duration: %v, want 0", r)
	}
}

// GET_OPERATIONS answers an empty list in both codecs.
func TestMasterGetOperations(t *testing.T) {
	h := newHarness(t, nil)
	for _, codec := range []api.Codec{api.JSON, api.Protobuf} {
		code, body, r := operatorHTTP(t, h.m, codec, "", &mmaster.Call{Type: mmaster.Call_GET_OPERATIONS})
		if code != http.StatusOK || r == nil || r.Type != mmaster.Response_GET_OPERATIONS || r.GetOperations == nil || len(r.GetOperations.Operations) != 0 {
			t.Errorf("GET_OPERATIONS (%s): %d %s", codec, code, body)
		}
	}
}

// fakeAgentAPI is an agent's /api/v1 that answers LIST_FILES and
// READ_FILE of one sandbox, and records the Authorization it was sent.
func fakeAgentAPI(t *testing.T, gotAuth *string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*gotAuth = r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		var call magent.Call
		if err := call.Unmarshal(b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var resp magent.Response
		switch {
		case call.Type == magent.Call_LIST_FILES && call.ListFiles.Path == "/frameworks/f/executors/e/runs/latest":
			size := uint64(6)
			resp = magent.Response{Type: magent.Response_LIST_FILES, ListFiles: &magent.Response_ListFiles{
				FileInfos: []mesos.FileInfo{{Path: "/frameworks/f/executors/e/runs/latest/stdout", Size_: &size}}}}
		case call.Type == magent.Call_READ_FILE && call.ReadFile.Path == "/frameworks/f/executors/e/runs/latest/stdout":
			resp = magent.Response{Type: magent.Response_READ_FILE, ReadFile: &magent.Response_ReadFile{Size_: 6, Data: []byte("hello\n")[call.ReadFile.Offset:]}}
		default:
			http.Error(w, "READ_FILE: no such file in the sandbox", http.StatusNotFound)
			return
		}
		out, _ := resp.Marshal()
		w.Header().Set("Content-Type", api.MediaProtobuf)
		w.Write(out)
	}))
}

// LIST_FILES and READ_FILE on the master read a sandbox on the agent its
// path names, with the caller's credential; listed paths keep the
// /slaves/A form; a refusal keeps the agent's status.
func TestMasterOperatorFiles(t *testing.T) {
	var gotAuth string
	srv := fakeAgentAPI(t, &gotAuth)
	defer srv.Close()
	h := newHarness(t, nil)
	id, err := h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER,
		Agent: &api.AgentRecord{Hostname: "agent", Address: strings.TrimPrefix(srv.URL, "http://"), Resources: "cpus:1;mem:64"}}, newFakeStream(t, api.Protobuf).Stream)
	if err != nil {
		t.Fatal(err)
	}
	sandbox := "/slaves/" + id + "/frameworks/f/executors/e/runs/latest"
	list := &mmaster.Call{Type: mmaster.Call_LIST_FILES, ListFiles: &mmaster.Call_ListFiles{Path: sandbox}}
	read := &mmaster.Call{Type: mmaster.Call_READ_FILE, ReadFile: &mmaster.Call_ReadFile{Path: sandbox + "/stdout", Offset: 1}}
	for _, codec := range []api.Codec{api.JSON, api.Protobuf} {
		code, body, r := operatorHTTP(t, h.m, codec, "alice", list)
		if code != http.StatusOK || r == nil || len(r.GetListFiles().FileInfos) != 1 || r.GetListFiles().FileInfos[0].Path != sandbox+"/stdout" {
			t.Errorf("LIST_FILES (%s): %d %s", codec, code, body)
		}
		if !strings.HasPrefix(gotAuth, "Basic ") {
			t.Errorf("LIST_FILES (%s): the agent got Authorization %q, want the caller's", codec, gotAuth)
		}
		code, body, r = operatorHTTP(t, h.m, codec, "", read)
		if code != http.StatusOK || r == nil || r.GetReadFile().Size_ != 6 || string(r.GetReadFile().Data) != "ello\n" || gotAuth != "" {
			t.Errorf("READ_FILE (%s): %d %s (agent saw Authorization %q)", codec, code, body, gotAuth)
		}
	}
	for _, c := range []struct {
		call *mmaster.Call
		code int
		says string
	}{
		{&mmaster.Call{Type: mmaster.Call_LIST_FILES}, http.StatusBadRequest, "without list_files"},
		{&mmaster.Call{Type: mmaster.Call_LIST_FILES, ListFiles: &mmaster.Call_ListFiles{Path: "/master/log"}}, http.StatusBadRequest, "want /slaves/AGENT_ID/frameworks"},
		{&mmaster.Call{Type: mmaster.Call_LIST_FILES, ListFiles: &mmaster.Call_ListFiles{Path: "/slaves/nope/frameworks/f"}}, http.StatusNotFound, "agent nope is not registered"},
		{&mmaster.Call{Type: mmaster.Call_READ_FILE, ReadFile: &mmaster.Call_ReadFile{Path: sandbox + "/gone"}}, http.StatusNotFound, "no such file"},
	} {
		if code, body, _ := operatorHTTP(t, h.m, api.JSON, "", c.call); code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.call.Type, code, body, c.code, c.says)
		}
	}
}

// getJSON GETs path from m's handler and decodes the JSON answer into v.
func getJSON(t *testing.T, m *Master, path string, v any) {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, rec.Body)
	}
}

// /metrics/snapshot, GET_METRICS, /master/state-summary, /master/slaves
// and /master/frameworks report a running task under Mesos's names and in
// Mesos's shapes.
func TestMesosMonitoringEndpoints(t *testing.T) {
	h := newHarness(t, nil)
	agentID, _ := h.agent("cpus:4;mem:4096")
	fw := h.framework("mon")
	o := h.offer(fw)
	if err := h.call(fw, launchCall(o, refuse(5), commandTask("t1", agentID, 1, 1024))); err != nil {
		t.Fatal(err)
	}
	if err := h.agentUpdate(agentID, fw.id, "t1", mesos.TASK_RUNNING, "u1"); err != nil {
		t.Fatal(err)
	}
	var snap map[string]float64
	getJSON(t, h.m, "/metrics/snapshot", &snap)
	want := map[string]float64{"master/elected": 1, "master/cpus_total": 4, "master/cpus_used": 1, "master/cpus_percent": 0.25,
		"master/mem_total": 4096, "master/mem_used": 1024, "master/tasks_running": 1, "master/tasks_staging": 0,
		"master/frameworks_active": 1, "master/slaves_active": 1, "master/slaves_disconnected": 0, "master/messages_launch_tasks": 1,
		"master/valid_status_updates": 1}
	for k, v := range want {
		if got, ok := snap[k]; !ok || got != v {
			t.Errorf("/metrics/snapshot %s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if _, ok := snap["master/uptime_secs"]; !ok {
		t.Errorf("/metrics/snapshot lacks master/uptime_secs")
	}
	_, _, r := operatorHTTP(t, h.m, api.JSON, "", &mmaster.Call{Type: mmaster.Call_GET_METRICS})
	found := false
	for _, mt := range r.GetGetMetrics().Metrics {
		found = found || mt.Name == "master/tasks_running" && mt.GetValue() == 1
	}
	if !found {
		t.Errorf("GET_METRICS lacks master/tasks_running = 1")
	}
	var sum struct {
		Slaves     []map[string]any `json:"slaves"`
		Frameworks []map[string]any `json:"frameworks"`
	}
	getJSON(t, h.m, "/master/state-summary", &sum)
	if len(sum.Slaves) != 1 || sum.Slaves[0]["id"] != agentID || sum.Slaves[0]["TASK_RUNNING"] != 1.0 ||
		!reflect.DeepEqual(sum.Slaves[0]["framework_ids"], []any{fw.id}) || sum.Slaves[0]["used_resources"].(map[string]any)["cpus"] != 1.0 {
		t.Errorf("state-summary slaves: %v", sum.Slaves)
	}
	if len(sum.Frameworks) != 1 || sum.Frameworks[0]["name"] != "mon" || sum.Frameworks[0]["TASK_RUNNING"] != 1.0 ||
		!reflect.DeepEqual(sum.Frameworks[0]["slave_ids"], []any{agentID}) {
		t.Errorf("state-summary frameworks: %v", sum.Frameworks)
	}
	var slaves struct {
		Slaves    []map[string]any `json:"slaves"`
		Recovered []any            `json:"recovered_slaves"`
	}
	getJSON(t, h.m, "/master/slaves", &slaves)
	if len(slaves.Slaves) != 1 || slaves.Slaves[0]["id"] != agentID || slaves.Recovered == nil {
		t.Errorf("/master/slaves: %+v", slaves)
	}
	var fws struct {
		Frameworks []map[string]any `json:"frameworks"`
		Completed  []any            `json:"completed_frameworks"`
	}
	getJSON(t, h.m, "/master/frameworks", &fws)
	if len(fws.Frameworks) != 1 || fws.Frameworks[0]["id"] != fw.id || len(fws.Frameworks[0]["tasks"].([]any)) != 1 || fws.Completed == nil {
		t.Errorf("/master/frameworks: %+v", fws)
	}
}
