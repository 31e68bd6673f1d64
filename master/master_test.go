package master

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/recordio"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/rs/zerolog"
)

// startMaster runs a master on a loopback port with its registry in a temp
// dir, stopped at cleanup.
func startMaster(t *testing.T) *Master {
	t.Helper()
	return startMasterWith(t, Config{Listen: "127.0.0.1:0", WorkDir: t.TempDir(), AllocationInterval: 50 * time.Millisecond, Log: zerolog.Nop()})
}

// startMasterWith starts a master from cfg and stops it when the test ends.
func startMasterWith(t *testing.T, cfg Config) *Master {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Stop(ctx)
	})
	return m
}

func post(t *testing.T, m *Master, path string, body []byte, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+m.Addr()+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// Every call type with its body missing or half-filled answers 4xx with a
// message naming what is missing, and the master keeps serving.
func TestSchedulerCallsWithMissingFields(t *testing.T) {
	m := startMaster(t)
	// A live subscription, read in the background.
	body := `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n"}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+m.Addr()+"/api/v1/scheduler", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sid := resp.Header.Get("Mesos-Stream-Id")
	frame, err := recordio.NewReader(resp.Body).ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	var ev scheduler.Event
	if err := json.Unmarshal(frame, &ev); err != nil || ev.Type != scheduler.Event_SUBSCRIBED {
		t.Fatalf("first event %v, %v; want SUBSCRIBED", ev.Type, err)
	}
	fw := ev.Subscribed.FrameworkID.Value
	hdr := map[string]string{"Mesos-Stream-Id": sid}

	tests := []struct {
		call string
		code int
		want string
	}{
		{`{"type":"SUBSCRIBE"}`, 400, "framework_info"},
		{`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"name":"no user"}}}`, 400, "user is required"},
		{`{"type":"SUBSCRIBE","framework_id":{"value":"a"},"subscribe":{"framework_info":{"user":"u","name":"n","id":{"value":"b"}}}}`, 400, "does not match"},
		{`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n","role":"a//b","id":{"value":"FW"}}}}`, 400, `SUBSCRIBE: invalid role "a//b"`},
		{`{"type":"ACCEPT"}`, 400, "without framework_id"},
		{`{"type":"ACCEPT","framework_id":{"value":"FW"}}`, 400, "without accept"},
		{`{"type":"ACCEPT","framework_id":{"value":"FW"},"accept":{}}`, 202, ""}, // as Mesos: its tasks, none here, are answered "No offers specified"
		{`{"type":"DECLINE","framework_id":{"value":"FW"}}`, 400, "without decline"},
		{`{"type":"KILL","framework_id":{"value":"FW"},"kill":{"task_id":{"value":""}}}`, 400, "kill.task_id"},
		{`{"type":"SHUTDOWN","framework_id":{"value":"FW"}}`, 400, "shutdown.executor_id"},
		{`{"type":"SHUTDOWN","framework_id":{"value":"FW"},"shutdown":{"executor_id":{"value":"e"},"agent_id":{"value":"nope"}}}`, 202, ""}, // as Mesos: dropped
		{`{"type":"ACKNOWLEDGE","framework_id":{"value":"FW"},"acknowledge":{"agent_id":{"value":"a"},"task_id":{"value":"t"}}}`, 400, "uuid"},
		{`{"type":"ACKNOWLEDGE","framework_id":{"value":"FW"},"acknowledge":{"agent_id":{"value":"a"},"task_id":{"value":"t"},"uuid":"AAAA"}}`, 202, ""}, // as Mesos: dropped
		{`{"type":"MESSAGE","framework_id":{"value":"FW"}}`, 400, "message.agent_id"},
		{`{"type":"MESSAGE","framework_id":{"value":"FW"},"message":{"agent_id":{"value":"a"},"executor_id":{"value":"e"},"data":"AA=="}}`, 202, ""}, // as Mesos: dropped
		{`{"type":"REQUEST","framework_id":{"value":"FW"}}`, 400, "without request"},
		{`{"type":"REQUEST","framework_id":{"value":"FW"},"request":{"requests":[{"resources":[{"name":"ports","type":"SCALAR","scalar":{"value":1}}]}]}}`, 400, "RANGES"},
		{`{"type":"UPDATE_FRAMEWORK","framework_id":{"value":"FW"}}`, 400, "update_framework"},
		{`{"type":"UPDATE_FRAMEWORK","framework_id":{"value":"FW"},"update_framework":{"framework_info":{"user":"u","name":"n","id":{"value":"other"}}}}`, 400, "does not match"},
		{`{"type":"UPDATE_FRAMEWORK","framework_id":{"value":"FW"},"update_framework":{"framework_info":{"user":"u","name":"n","role":"a//b"}}}`, 400, `UPDATE_FRAMEWORK: invalid role "a//b"`},
		{`{"type":"NOT_A_TYPE"}`, 400, "failed to parse"},
		{`{"type":"REVIVE","framework_id":{"value":"FW"}}`, 202, ""},
		{`{"type":"RECONCILE","framework_id":{"value":"FW"}}`, 202, ""},
		{`{"type":"SUPPRESS","framework_id":{"value":"FW"},"suppress":{}}`, 202, ""},
	}
	for _, tc := range tests {
		code, msg := post(t, m, "/api/v1/scheduler", []byte(strings.ReplaceAll(tc.call, "FW", fw)), hdr)
		if code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: answered %d %q, want %d with %q", tc.call, code, msg, tc.code, tc.want)
		}
	}
	// Operator and agent endpoints refuse nonsense the same way.
	if code, msg := post(t, m, "/api/v1", []byte(`{"type":"UPDATE_WEIGHTS"}`), nil); code != 400 || !strings.Contains(msg, "update_weights") {
		t.Errorf("UPDATE_WEIGHTS without body: %d %q", code, msg)
	}
	if code, msg := post(t, m, "/api/v1", []byte(`{"type":"UPDATE_WEIGHTS","update_weights":{"weight_infos":[{"role":"r","weight":-1}]}}`), nil); code != 400 {
		t.Errorf("negative weight: %d %q", code, msg)
	}
	req, _ = http.NewRequest(http.MethodPost, "http://"+m.Addr()+AgentPath, strings.NewReader("\xff\xff"))
	req.Header.Set("Content-Type", "application/x-protobuf")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 400 {
		t.Errorf("agent protocol garbage: %v %v", r.StatusCode, err)
	} else {
		r.Body.Close()
	}
	// Still serving: the subscription's stream is alive.
	if code, _ := post(t, m, "/api/v1/scheduler", []byte(`{"type":"REVIVE","framework_id":{"value":"`+fw+`"}}`), hdr); code != 202 {
		t.Errorf("after bad input, REVIVE answered %d", code)
	}
}
