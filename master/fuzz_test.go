package master

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// Fuzz targets for every decoder the master runs on bytes from the network
// or a file. Each decodes exactly as the HTTP handler does (api.Codec or
// proto.Unmarshal), checks that a decoded message re-encodes stably, and then
// hands it to the same function the handler calls, on one elected in-process
// master shared by the whole run (building one per input would spend the
// fuzzing budget on raft start-up). The property is the one a network peer
// relies on: any body yields an answer (nil or an error), never a panic.

// newFuzzMaster is newHarness for a testing.TB: an elected master with a
// manual clock, stopped at cleanup.
func newFuzzMaster(tb testing.TB) *Master {
	tb.Helper()
	c := Config{WorkDir: tb.TempDir(), Clock: newManualClock(), Log: zerolog.Nop(), AllocationInterval: time.Second}
	m, err := New(c)
	if err != nil {
		tb.Fatal(err)
	}
	m.info = masterInfo(m.id, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5050})
	if err := m.openReplication(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		m.mu.Lock()
		m.resetLiveLocked("fuzzing over")
		m.mu.Unlock()
		m.rep.close()
	})
	if err := m.leadAlone(); err != nil {
		tb.Fatal(err)
	}
	return m
}

// fuzzFramework subscribes a framework whose stream nobody reads; the queue
// is large enough for a fuzzing run's events.
func fuzzFramework(tb testing.TB, m *Master) (id, sid string) {
	tb.Helper()
	ft := 60.0
	info := mesos.FrameworkInfo{User: "fuzz", Name: "fuzz", FailoverTimeout: &ft}
	id, sid, err := m.admitFramework("", info, nil, api.NewStream(api.JSON, 1<<16))
	if err != nil {
		tb.Fatal(err)
	}
	return id, sid
}

// checkReencode asserts encode(decode(encode(x))) == encode(x): a message
// the master accepted can be written back (to the registry, to a log, to a
// peer) and read again without change.
func checkReencode(t *testing.T, c api.Codec, m api.GogoMessage, fresh func() api.GogoMessage) {
	t.Helper()
	b, err := c.Marshal(m)
	if err != nil {
		if c == api.JSON {
			return // e.g. a NaN cannot be written as JSON; decoding it was still safe
		}
		t.Fatalf("decoded message does not re-encode as %s: %v", c, err)
	}
	back := fresh()
	if err := c.Unmarshal(b, back); err != nil {
		t.Fatalf("re-encoded message does not decode as %s: %v\n%q", c, err, b)
	}
	b2, err := c.Marshal(back)
	if err != nil {
		t.Fatalf("second encoding failed: %v", err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("encoding not stable under decode as %s:\n%q\n%q", c, b, b2)
	}
}

func codecOf(proto bool) api.Codec {
	if proto {
		return api.Protobuf
	}
	return api.JSON
}

// schedulerSeeds are the bodies of the handler tests (TestSchedulerCalls...).
var schedulerSeeds = []string{
	`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n"}}}`,
	`{"type":"SUBSCRIBE"}`,
	`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"name":"no user"}}}`,
	`{"type":"SUBSCRIBE","framework_id":{"value":"a"},"subscribe":{"framework_info":{"user":"u","name":"n","id":{"value":"b"}}}}`,
	`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n","failover_timeout":-1}}}`,
	`{"type":"ACCEPT"}`,
	`{"type":"ACCEPT","framework_id":{"value":"FW"}}`,
	`{"type":"ACCEPT","framework_id":{"value":"FW"},"accept":{}}`,
	`{"type":"ACCEPT","framework_id":{"value":"FW"},"accept":{"offer_ids":[{"value":"o"}],"operations":[{"type":"LAUNCH","launch":{"task_infos":[{"name":"t","task_id":{"value":"t"},"agent_id":{"value":"a"},"resources":[{"name":"cpus","type":"SCALAR","scalar":{"value":1}}],"command":{"value":"true"}}]}}]}}`,
	`{"type":"DECLINE","framework_id":{"value":"FW"}}`,
	`{"type":"DECLINE","framework_id":{"value":"FW"},"decline":{"offer_ids":[{"value":"o"}],"filters":{"refuse_seconds":5}}}`,
	`{"type":"KILL","framework_id":{"value":"FW"},"kill":{"task_id":{"value":""}}}`,
	`{"type":"SHUTDOWN","framework_id":{"value":"FW"}}`,
	`{"type":"SHUTDOWN","framework_id":{"value":"FW"},"shutdown":{"executor_id":{"value":"e"},"agent_id":{"value":"nope"}}}`,
	`{"type":"ACKNOWLEDGE","framework_id":{"value":"FW"},"acknowledge":{"agent_id":{"value":"a"},"task_id":{"value":"t"}}}`,
	`{"type":"ACKNOWLEDGE","framework_id":{"value":"FW"},"acknowledge":{"agent_id":{"value":"a"},"task_id":{"value":"t"},"uuid":"AAAA"}}`,
	`{"type":"MESSAGE","framework_id":{"value":"FW"}}`,
	`{"type":"MESSAGE","framework_id":{"value":"FW"},"message":{"agent_id":{"value":"a"},"executor_id":{"value":"e"},"data":"AA=="}}`,
	`{"type":"REQUEST","framework_id":{"value":"FW"}}`,
	`{"type":"REQUEST","framework_id":{"value":"FW"},"request":{"requests":[{"resources":[{"name":"ports","type":"SCALAR","scalar":{"value":1}}]}]}}`,
	`{"type":"UPDATE_FRAMEWORK","framework_id":{"value":"FW"}}`,
	`{"type":"UPDATE_FRAMEWORK","framework_id":{"value":"FW"},"update_framework":{"framework_info":{"user":"u","name":"n","role":"other"}}}`,
	`{"type":"NOT_A_TYPE"}`,
	`{"type":"REVIVE","framework_id":{"value":"FW"}}`,
	`{"type":"RECONCILE","framework_id":{"value":"FW"},"reconcile":{"tasks":[{"task_id":{"value":"t"}}]}}`,
	`{"type":"SUPPRESS","framework_id":{"value":"FW"},"suppress":{}}`,
	`{"type":"TEARDOWN","framework_id":{"value":"FW"}}`,
}

// addBoth seeds each JSON body as JSON and, re-encoded, as protobuf.
func addBoth(f *testing.F, seeds []string, fresh func() api.GogoMessage) {
	for _, s := range seeds {
		f.Add([]byte(s), false)
		m := fresh()
		if api.JSON.Unmarshal([]byte(s), m) == nil {
			if b, err := m.Marshal(); err == nil {
				f.Add(b, true)
			}
		}
	}
}

// FuzzSchedulerCall decodes a scheduler.Call body as handleScheduler does and
// applies it as a subscribed framework.
func FuzzSchedulerCall(f *testing.F) {
	fresh := func() api.GogoMessage { return new(scheduler.Call) }
	addBoth(f, schedulerSeeds, fresh)
	m := newFuzzMaster(f)
	fw, sid := fuzzFramework(f, m)
	f.Fuzz(func(t *testing.T, body []byte, asProto bool) {
		c := codecOf(asProto)
		var call scheduler.Call
		if err := c.Unmarshal(body, &call); err != nil {
			return
		}
		checkReencode(t, c, &call, fresh)
		if _, known := scheduler.Call_Type_name[int32(call.Type)]; !known || call.Type == scheduler.Call_UNKNOWN {
			return // the handler answers 400 before dispatching
		}
		if call.Type == scheduler.Call_SUBSCRIBE {
			subscribeInfo(&call) // admitting would start a stream per input
			return
		}
		if call.FrameworkID != nil {
			// Speak as the subscribed framework so the call reaches its
			// handler rather than stopping at "unknown framework".
			call.FrameworkID = &mesos.FrameworkID{Value: fw}
		}
		if err := m.schedulerCall(sid, &call); err == nil && call.Type == scheduler.Call_TEARDOWN {
			fw, sid = fuzzFramework(t, m)
		}
	})
}

var operatorSeeds = []string{
	`{"type":"GET_HEALTH"}`, `{"type":"GET_VERSION"}`, `{"type":"GET_FLAGS"}`, `{"type":"GET_METRICS"}`,
	`{"type":"GET_MASTER"}`, `{"type":"GET_STATE"}`, `{"type":"GET_AGENTS"}`, `{"type":"GET_FRAMEWORKS"}`,
	`{"type":"GET_EXECUTORS"}`, `{"type":"GET_TASKS"}`, `{"type":"GET_ROLES"}`, `{"type":"GET_WEIGHTS"}`,
	`{"type":"GET_OPERATIONS"}`, `{"type":"GET_MAINTENANCE_STATUS"}`, `{"type":"GET_MAINTENANCE_SCHEDULE"}`,
	`{"type":"GET_QUOTA"}`,
	`{"type":"UPDATE_WEIGHTS"}`,
	`{"type":"UPDATE_WEIGHTS","update_weights":{"weight_infos":[{"role":"r","weight":-1}]}}`,
	`{"type":"UPDATE_WEIGHTS","update_weights":{"weight_infos":[{"role":"r","weight":2}]}}`,
	`{"type":"TEARDOWN","teardown":{"framework_id":{"value":"nope"}}}`,
	`{"type":"MARK_AGENT_GONE","mark_agent_gone":{"agent_id":{"value":"nope"}}}`,
	`{"type":"DRAIN_AGENT","drain_agent":{"agent_id":{"value":"nope"}}}`,
	`{"type":"DEACTIVATE_AGENT","deactivate_agent":{"agent_id":{"value":"nope"}}}`,
	`{"type":"REACTIVATE_AGENT","reactivate_agent":{"agent_id":{"value":"nope"}}}`,
	`{"type":"SET_QUOTA","set_quota":{"quota_request":{"role":"r","guarantee":[{"name":"cpus","type":"SCALAR","scalar":{"value":1}}]}}}`,
	`{"type":"UPDATE_QUOTA","update_quota":{"quota_configs":[{"role":"r","guarantees":{"cpus":{"value":1}},"limits":{"cpus":{"value":2}}}]}}`,
	`{"type":"SUBSCRIBE"}`,
}

// FuzzOperatorCall decodes a master.Call body as handleOperator does, applies
// it, and checks a response can be encoded for the client.
func FuzzOperatorCall(f *testing.F) {
	fresh := func() api.GogoMessage { return new(mmaster.Call) }
	addBoth(f, operatorSeeds, fresh)
	m := newFuzzMaster(f)
	fuzzFramework(f, m)
	f.Fuzz(func(t *testing.T, body []byte, asProto bool) {
		c := codecOf(asProto)
		var call mmaster.Call
		if err := c.Unmarshal(body, &call); err != nil {
			return
		}
		checkReencode(t, c, &call, fresh)
		if call.Type == mmaster.Call_SUBSCRIBE {
			return // a stream; its decoding is what is under test
		}
		resp, err := m.operatorCallAs(auth.Subject{}, &call)
		if err != nil || resp == nil {
			return
		}
		if _, err := c.Marshal(resp); err != nil && c == api.Protobuf {
			t.Fatalf("%s: response does not encode: %v", call.Type, err)
		}
	})
}

var agentSeeds = []*api.AgentCall{
	{Type: api.AgentCallType_REGISTER, Agent: &api.AgentRecord{Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:4096"}},
	{Type: api.AgentCallType_REGISTER, Agent: &api.AgentRecord{Hostname: "agent", Resources: "cpus:x"}},
	{Type: api.AgentCallType_STATUS_UPDATE},
	{Type: api.AgentCallType_EXECUTOR_MESSAGE},
	{Type: api.AgentCallType_EXECUTOR_EXITED},
	{Type: api.AgentCallType_USAGE},
	{Type: api.AgentCallType_AGENT_BATCH, Batch: []*api.AgentCall{{Type: api.AgentCallType_USAGE}, {Type: api.AgentCallType_AGENT_BATCH}}},
}

// FuzzAgentCall decodes an AgentCall body as handleAgent does and applies it
// as a registered agent.
func FuzzAgentCall(f *testing.F) {
	for _, c := range agentSeeds {
		b, err := proto.Marshal(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	m := newFuzzMaster(f)
	fuzzFramework(f, m)
	id, err := m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER,
		Agent: &api.AgentRecord{Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:4096;ports:[31000-32000]"}},
		api.NewStream(api.Protobuf, 1<<16))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var call api.AgentCall
		if err := proto.Unmarshal(body, &call); err != nil {
			return
		}
		b, err := proto.Marshal(&call)
		if err != nil {
			t.Fatalf("decoded AgentCall does not re-encode: %v", err)
		}
		var back api.AgentCall
		if err := proto.Unmarshal(b, &back); err != nil || !proto.Equal(&call, &back) {
			t.Fatalf("AgentCall round trip: %v\n%v\n%v", err, &call, &back)
		}
		if call.Type == api.AgentCallType_REGISTER {
			return // admitting would keep a new agent per input
		}
		call.AgentId = id
		m.agentCall(&call)
	})
}

// FuzzSwitchSorter posts a body to the runtime policy switch (httptest, no
// listener) on a master with a framework and an agent: a sorter, agent
// selection and mode it cannot parse or apply is a 400, and whatever is
// applied leaves a master that still allocates.
func FuzzSwitchSorter(f *testing.F) {
	for _, s := range []string{
		`{"sorter":"nope"}`, `{"agent_selection":"sideways"}`, `{"mode":"psychic"}`,
		`{"sorter":"psdsf","agent_selection":"bestfit"}`, `{"sorter":"drf","colour":"red"}`,
		`{"sorter":"fifo","mode":"characterized"}`, `{"sorter":"drf"}`, `{}`, `{"sorter":" "}`,
		`{"sorter":"bandit","agent_selection":"rrr","mode":"characterized"}`,
		`{"sorter":"fsp","mode":"characterized"}`, `{"sorter":"prophet"}`,
	} {
		f.Add([]byte(s))
	}
	m := newFuzzMaster(f)
	fuzzFramework(f, m)
	if _, err := m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER,
		Agent: &api.AgentRecord{Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:4096"}},
		api.NewStream(api.Protobuf, 1<<16)); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, SorterPath, bytes.NewReader(body))
		w := httptest.NewRecorder()
		m.handleSorterSwitch(w, req)
		if w.Code >= 500 {
			t.Fatalf("answered %d: %s", w.Code, w.Body.String())
		}
		m.allocate()
	})
}
