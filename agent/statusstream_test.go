package agent

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	exec1 "github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/api"
)

// An executor's update for a task whose stream already ended in a
// terminal state is dropped, whether it comes again on re-subscription
// (a RUNNING whose acknowledgement an agent restart lost) or as an UPDATE:
// the task stays FINISHED and nothing more goes to the master.
func TestUpdatesAfterTerminalDropped(t *testing.T) {
	a := startedAgent(t, Config{Masters: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:0", WorkDir: t.TempDir(),
		Resources: "cpus:1;mem:128;disk:100", Log: zerolog.Nop()})
	status := func(st mesos.TaskState, uuid string) mesos.TaskStatus {
		return mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t"}, State: st.Enum(), UUID: []byte(uuid), Source: mesos.SOURCE_EXECUTOR.Enum()}
	}
	running, finished := status(mesos.TASK_RUNNING, "uuid-running"), status(mesos.TASK_FINISHED, "uuid-finished")
	post := func(call *exec1.Call) *http.Response {
		b, _ := call.Marshal()
		req, _ := http.NewRequest(http.MethodPost, "http://"+a.Addr()+"/api/v1/executor", bytes.NewReader(b))
		req.Header.Set("Content-Type", api.MediaProtobuf)
		req.Header.Set("Accept", api.MediaProtobuf)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	fw, exID := mesos.FrameworkID{Value: "f"}, mesos.ExecutorID{Value: "e"}
	cases := []struct {
		name string
		call *exec1.Call
	}{
		{"re-subscription", &exec1.Call{Type: exec1.Call_SUBSCRIBE, FrameworkID: fw, ExecutorID: exID,
			Subscribe: &exec1.Call_Subscribe{UnacknowledgedUpdates: []exec1.Call_Update{{Status: running}, {Status: finished}}}}},
		{"update", &exec1.Call{Type: exec1.Call_UPDATE, FrameworkID: fw, ExecutorID: exID, Update: &exec1.Call_Update{Status: running}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The agent's record: RUNNING acknowledged, FINISHED pending.
			fin := finished
			task := &agentTask{info: mesos.TaskInfo{TaskID: mesos.TaskID{Value: "t"}}, state: mesos.TASK_FINISHED, latest: &fin, pending: []*mesos.TaskStatus{&fin}, launched: true}
			ex := &executor{fw: "f", id: "e", tasks: map[string]*agentTask{"t": task}}
			ex.info.ExecutorID = exID
			a.mu.Lock()
			a.executors[exKey("f", "e")] = ex
			a.mu.Unlock()
			defer func() {
				a.mu.Lock()
				delete(a.executors, exKey("f", "e"))
				a.mu.Unlock()
			}()
			resp := post(tc.call)
			// The handler answers (a subscription's first event, or 202)
			// only after it has taken the updates, under a.mu.
			one := make([]byte, 1)
			resp.Body.Read(one)
			resp.Body.Close()
			a.mu.Lock()
			defer a.mu.Unlock()
			if task.state != mesos.TASK_FINISHED || len(task.pending) != 1 || task.pending[0].GetState() != mesos.TASK_FINISHED {
				var states []string
				for _, p := range task.pending {
					states = append(states, p.GetState().String())
				}
				t.Fatalf("task is %v with pending %v; want FINISHED with only FINISHED pending", task.state, states)
			}
		})
	}
}

// On (re-)registration a task is reported at the state its update stream
// has reached: with RUNNING still unacknowledged, a FINISHED behind it is
// not reported yet, so that a master's reconciliation cannot answer
// FINISHED before the stream delivers RUNNING.
func TestRegisterReportsStreamState(t *testing.T) {
	a := &Agent{executors: map[string]*executor{}}
	st := func(s mesos.TaskState) *mesos.TaskStatus {
		return &mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t"}, State: s.Enum(), UUID: []byte(s.String())}
	}
	cases := []struct {
		name    string
		pending []*mesos.TaskStatus
		latest  *mesos.TaskStatus
		want    mesos.TaskState
	}{
		{"RUNNING unacknowledged, FINISHED behind it", []*mesos.TaskStatus{st(mesos.TASK_RUNNING), st(mesos.TASK_FINISHED)}, st(mesos.TASK_FINISHED), mesos.TASK_RUNNING},
		{"FINISHED unacknowledged", []*mesos.TaskStatus{st(mesos.TASK_FINISHED)}, st(mesos.TASK_FINISHED), mesos.TASK_FINISHED},
		{"all acknowledged", nil, st(mesos.TASK_RUNNING), mesos.TASK_RUNNING},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			task := &agentTask{info: mesos.TaskInfo{TaskID: mesos.TaskID{Value: "t"}}, state: tc.latest.GetState(), latest: tc.latest, pending: tc.pending}
			a.executors[exKey("f", "e")] = &executor{fw: "f", id: "e", tasks: map[string]*agentTask{"t": task}}
			recs := a.taskRecordsLocked()
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			var got mesos.TaskStatus
			if err := got.Unmarshal(recs[0].Status); err != nil {
				t.Fatal(err)
			}
			if mesos.TaskState(recs[0].State) != tc.want || got.GetState() != tc.want {
				t.Errorf("reported state %v with status %v, want %v", mesos.TaskState(recs[0].State), got.GetState(), tc.want)
			}
		})
	}
}

// A recovered executor that subscribes without a task the agent's last run
// queued for it (and never sent) is sent that task's launch; one it
// reports, or one already sent, is not sent again.
func TestLostLaunchSentOnResubscribe(t *testing.T) {
	a := startedAgent(t, Config{Masters: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:0", WorkDir: t.TempDir(),
		Resources: "cpus:1;mem:128;disk:100", Log: zerolog.Nop()})
	cases := []struct {
		name       string
		launched   bool
		reported   bool
		wantLaunch bool
	}{
		{"queued launch lost with the agent", false, false, true},
		{"the executor has it", false, true, false},
		{"already sent", true, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := "true"
			task := &agentTask{info: mesos.TaskInfo{TaskID: mesos.TaskID{Value: "t"}, Command: &mesos.CommandInfo{Value: &cmd}}, state: mesos.TASK_STAGING, launched: tc.launched}
			ex := &executor{fw: "f", id: "t", command: true, commandTask: true, tasks: map[string]*agentTask{"t": task}}
			ex.info.ExecutorID = mesos.ExecutorID{Value: "t"}
			a.mu.Lock()
			a.executors[exKey("f", "t")] = ex
			a.mu.Unlock()
			defer func() {
				a.mu.Lock()
				delete(a.executors, exKey("f", "t"))
				a.mu.Unlock()
			}()
			sub := &exec1.Call_Subscribe{}
			if tc.reported {
				sub.UnacknowledgedTasks = []mesos.TaskInfo{task.info}
			}
			b, _ := (&exec1.Call{Type: exec1.Call_SUBSCRIBE, FrameworkID: mesos.FrameworkID{Value: "f"}, ExecutorID: mesos.ExecutorID{Value: "t"}, Subscribe: sub}).Marshal()
			req, _ := http.NewRequest(http.MethodPost, "http://"+a.Addr()+"/api/v1/executor", bytes.NewReader(b))
			req.Header.Set("Content-Type", api.MediaProtobuf)
			req.Header.Set("Accept", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			// The stream's first bytes come once the handler has queued
			// everything it sends on subscription; closing the stream then
			// ends the body after them.
			first := make([]byte, 1)
			if _, err := io.ReadFull(resp.Body, first); err != nil {
				t.Fatal(err)
			}
			a.mu.Lock()
			if ex.stream != nil {
				ex.stream.Close("test done")
			}
			a.mu.Unlock()
			rest, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body := append(first, rest...)
			if got := bytes.Count(body, []byte(`"LAUNCH"`)); got != map[bool]int{true: 1}[tc.wantLaunch] {
				t.Errorf("%d launches sent, want it sent: %v; stream %q", got, tc.wantLaunch, body)
			}
		})
	}
}

// An executor that re-subscribes with an update of a task this agent has
// already forgotten (its terminal update acknowledged, the executor's
// acknowledgement lost to an agent restart) hears ACKNOWLEDGED for it, so
// that it does not wait for it forever.
func TestForgottenTaskUpdateAcknowledged(t *testing.T) {
	a := startedAgent(t, Config{Masters: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:0", WorkDir: t.TempDir(),
		Resources: "cpus:1;mem:128;disk:100", Log: zerolog.Nop()})
	fw, exID := mesos.FrameworkID{Value: "f"}, mesos.ExecutorID{Value: "e"}
	ex := &executor{fw: "f", id: "e", tasks: map[string]*agentTask{}}
	ex.info.ExecutorID = exID
	a.mu.Lock()
	a.executors[exKey("f", "e")] = ex
	a.mu.Unlock()
	gone := mesos.TaskStatus{TaskID: mesos.TaskID{Value: "gone-task"}, State: mesos.TASK_FINISHED.Enum(),
		UUID: []byte("uuid-of-gone-task"), Source: mesos.SOURCE_EXECUTOR.Enum()}
	call := &exec1.Call{Type: exec1.Call_SUBSCRIBE, FrameworkID: fw, ExecutorID: exID,
		Subscribe: &exec1.Call_Subscribe{UnacknowledgedUpdates: []exec1.Call_Update{{Status: gone}}}}
	b, _ := call.Marshal()
	req, _ := http.NewRequest(http.MethodPost, "http://"+a.Addr()+"/api/v1/executor", bytes.NewReader(b))
	req.Header.Set("Content-Type", api.MediaProtobuf)
	req.Header.Set("Accept", api.MediaProtobuf)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	found := make(chan bool, 1)
	go func() {
		var got []byte
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
			if bytes.Contains(got, []byte("uuid-of-gone-task")) {
				found <- true
				return
			}
			if err != nil {
				found <- false
				return
			}
		}
	}()
	select {
	case ok := <-found:
		if !ok {
			t.Fatal("the stream ended without ACKNOWLEDGED for the forgotten task's update")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no ACKNOWLEDGED for the forgotten task's update within 10 s")
	}
}
