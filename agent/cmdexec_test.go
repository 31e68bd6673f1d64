package agent

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	exec1 "github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/api"
)

// fakeExecAgent speaks the agent's side of the executor API to one command
// executor: it launches one task, kills it once it runs, and acknowledges
// its updates. With ackBeforeAnswer, the executor has handled the
// acknowledgement of the terminal update before its UPDATE call is
// answered: what a loaded host does when the round trip through master and
// framework beats the executor's own scheduling. Without, the executor has
// read the answer and marked the task terminal before the acknowledgement
// is sent. The executor's hooks (hooks) tell it when each step is done.
type fakeExecAgent struct {
	t               *testing.T
	ackBeforeAnswer bool
	// caps are the framework's capabilities, as SUBSCRIBED tells them.
	caps  []mesos.FrameworkInfo_Capability
	acked chan struct{} // an ACKNOWLEDGED event was handled
	ended chan struct{} // a task's terminal update was answered

	mu      sync.Mutex
	stream  *api.Stream
	updates []mesos.TaskState
}

func newFakeExecAgent(t *testing.T, ackBeforeAnswer bool) *fakeExecAgent {
	return &fakeExecAgent{t: t, ackBeforeAnswer: ackBeforeAnswer, acked: make(chan struct{}, 8), ended: make(chan struct{}, 8)}
}

func (f *fakeExecAgent) hooks() execHooks {
	return execHooks{
		handled: func(e exec1.Event_Type) {
			if e == exec1.Event_ACKNOWLEDGED {
				f.acked <- struct{}{}
			}
		},
		ended: func(string) { f.ended <- struct{}{} },
	}
}

// await waits for the executor's n-th step of a kind; false (and the test
// failed) if it never comes, so that a handler stuck on it lets the server
// close.
func (f *fakeExecAgent) await(step chan struct{}, n int, what string) bool {
	for i := 0; i < n; i++ {
		select {
		case <-step:
		case <-time.After(10 * time.Second):
			f.t.Errorf("the executor never %s", what)
			return false
		}
	}
	return true
}

func (f *fakeExecAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	switch call.Type {
	case exec1.Call_SUBSCRIBE:
		s := api.NewStream(req.Out, 64)
		f.mu.Lock()
		f.stream = s
		f.mu.Unlock()
		shell := "sleep 30"
		s.Send(&exec1.Event{Type: exec1.Event_SUBSCRIBED, Subscribed: &exec1.Event_Subscribed{
			ExecutorInfo: mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "e"}}, FrameworkInfo: mesos.FrameworkInfo{Name: "f", Capabilities: f.caps},
			AgentInfo: mesos.AgentInfo{Hostname: "localhost"}}})
		s.Send(&exec1.Event{Type: exec1.Event_LAUNCH, Launch: &exec1.Event_Launch{Task: mesos.TaskInfo{Name: "t",
			TaskID: mesos.TaskID{Value: "t"}, AgentID: mesos.AgentID{Value: "a"}, Command: &mesos.CommandInfo{Value: &shell}}}})
		s.Serve(w, r, req.RecordIO, nil)
	case exec1.Call_UPDATE:
		st := call.Update.Status
		f.mu.Lock()
		f.updates = append(f.updates, st.GetState())
		s := f.stream
		f.mu.Unlock()
		ack := &exec1.Event{Type: exec1.Event_ACKNOWLEDGED, Acknowledged: &exec1.Event_Acknowledged{TaskID: st.TaskID, UUID: st.UUID}}
		if st.GetState() == mesos.TASK_KILLING {
			w.WriteHeader(http.StatusAccepted)
			s.Send(ack)
			return
		}
		if st.GetState() == mesos.TASK_RUNNING {
			w.WriteHeader(http.StatusAccepted)
			s.Send(ack)
			s.Send(&exec1.Event{Type: exec1.Event_KILL, Kill: &exec1.Event_Kill{TaskID: st.TaskID}})
			return
		}
		if f.ackBeforeAnswer {
			s.Send(ack)
			// TASK_RUNNING's acknowledgement, then this one.
			f.await(f.acked, 2, "handled the acknowledgement")
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		go func() {
			if f.await(f.ended, 1, "read the answer to its terminal update") {
				s.Send(ack)
			}
		}()
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

func (f *fakeExecAgent) closeStream() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stream != nil {
		f.stream.Close("test over")
	}
}

// A command executor whose killed task's update is acknowledged exits,
// whichever of the acknowledgement and the answer to its UPDATE it sees
// first. It used to wait for one more event from the agent when the
// acknowledgement came first, and with none coming it never exited: its
// container outlived the test.
func TestCommandExecutorExitsAfterTerminalAck(t *testing.T) {
	for _, ackFirst := range []bool{false, true} {
		name := "answer first"
		if ackFirst {
			name = "ack first"
		}
		t.Run(name, func(t *testing.T) {
			f := newFakeExecAgent(t, ackFirst)
			srv := httptest.NewServer(f)
			defer srv.Close()
			defer f.closeStream() // frees a stuck executor so the test can end
			sandbox := t.TempDir()
			for k, v := range map[string]string{"MESOS_FRAMEWORK_ID": "f", "MESOS_EXECUTOR_ID": "e", "MESOS_DIRECTORY": sandbox,
				"MESOS_SANDBOX": sandbox, "MESOS_AGENT_ENDPOINT": strings.TrimPrefix(srv.URL, "http://"),
				"MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD": "5secs", "MESOS_CHECKPOINT": "0"} {
				t.Setenv(k, v)
			}
			done := make(chan error, 1)
			go func() { done <- runCommandExecutor(zerolog.New(zerolog.NewTestWriter(t)), wallClock{}, f.hooks()) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("executor returned %v, want nil after its last update was acknowledged", err)
				}
			case <-time.After(10 * time.Second):
				f.mu.Lock()
				defer f.mu.Unlock()
				t.Fatalf("executor still running 10 s after its task was killed (updates %v)", f.updates)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if n := len(f.updates); n != 2 || f.updates[n-1] != mesos.TASK_KILLED {
				t.Errorf("updates %v, want TASK_RUNNING then TASK_KILLED", f.updates)
			}
		})
	}
}

// runAgainst runs the command executor against fake agent f until it
// exits, and returns the states of the updates it sent.
func runAgainst(t *testing.T, f *fakeExecAgent) []mesos.TaskState {
	t.Helper()
	srv := httptest.NewServer(f)
	defer srv.Close()
	defer f.closeStream() // frees a stuck executor so the test can end
	sandbox := t.TempDir()
	for k, v := range map[string]string{"MESOS_FRAMEWORK_ID": "f", "MESOS_EXECUTOR_ID": "e", "MESOS_DIRECTORY": sandbox,
		"MESOS_SANDBOX": sandbox, "MESOS_AGENT_ENDPOINT": strings.TrimPrefix(srv.URL, "http://"),
		"MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD": "5secs", "MESOS_CHECKPOINT": "0"} {
		t.Setenv(k, v)
	}
	done := make(chan error, 1)
	go func() { done <- runCommandExecutor(zerolog.New(zerolog.NewTestWriter(t)), wallClock{}, f.hooks()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("executor returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("executor still running 30 s after its task was killed")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]mesos.TaskState(nil), f.updates...)
}

// A killed task is reported TASK_KILLING before TASK_KILLED exactly when
// the framework declared TASK_KILLING_STATE, as Mesos's command executor
// does.
func TestCommandExecutorReportsKilling(t *testing.T) {
	killing := []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_TASK_KILLING_STATE}}
	for _, tc := range []struct {
		name string
		caps []mesos.FrameworkInfo_Capability
		want []mesos.TaskState
	}{
		{"declared", killing, []mesos.TaskState{mesos.TASK_RUNNING, mesos.TASK_KILLING, mesos.TASK_KILLED}},
		{"not declared", nil, []mesos.TaskState{mesos.TASK_RUNNING, mesos.TASK_KILLED}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeExecAgent(t, false)
			f.caps = tc.caps
			if got := runAgainst(t, f); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("updates %v, want %v", got, tc.want)
			}
		})
	}
}
