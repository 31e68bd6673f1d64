package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	exec1 "github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/rs/zerolog"
)

// recordingExecutor is a command executor whose updates go to a list
// instead of an agent.
type recordingExecutor struct {
	*commandExecutor
	mu      sync.Mutex
	updates []mesos.TaskStatus
}

func newRecordingExecutor(t *testing.T) *recordingExecutor {
	r := &recordingExecutor{}
	r.commandExecutor = &commandExecutor{
		log: zerolog.Nop(), cfg: config.Config{Sandbox: t.TempDir(), ExecutorID: "e"}, clock: wallClock{},
		sender: calls.SenderFunc(func(_ context.Context, req calls.Request) (mesos.Response, error) {
			if c := req.Call(); c.Type == exec1.Call_UPDATE {
				r.mu.Lock()
				r.updates = append(r.updates, c.Update.Status)
				r.mu.Unlock()
			}
			return nil, nil
		}),
		tasks: map[string]*cmdTask{}, unacked: map[string]exec1.Call_Update{}, unackTasks: map[string]mesos.TaskInfo{},
	}
	r.commandExecutor.quitCtx, r.commandExecutor.quit = context.WithCancel(context.Background())
	t.Cleanup(func() { r.killAll(0) })
	return r
}

// waitTerminal waits for the task's terminal update and returns every
// update of the task.
func (r *recordingExecutor) waitTerminal(t *testing.T, id string) []mesos.TaskStatus {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		var out []mesos.TaskStatus
		done := false
		for _, u := range r.updates {
			if u.TaskID.Value == id {
				out = append(out, u)
				done = done || (u.GetState() != mesos.TASK_RUNNING)
			}
		}
		r.mu.Unlock()
		if done {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s did not end", id)
	return nil
}

func healthTask(id, shell string, hc *mesos.HealthCheck) mesos.TaskInfo {
	return mesos.TaskInfo{TaskID: mesos.TaskID{Value: id}, Command: &mesos.CommandInfo{Value: &shell}, HealthCheck: hc}
}

func fastCheck(cmd string) *mesos.HealthCheck {
	zero, tick := 0.0, 0.05
	return &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: &mesos.CommandInfo{Value: &cmd},
		DelaySeconds: &zero, IntervalSeconds: &tick, GracePeriodSeconds: &zero}
}

// A task failing its command check three times is reported unhealthy each
// time, then killed (SIGTERM, which its trap ignores, then SIGKILL after
// its kill policy's grace) and ends TASK_KILLED, healthy=false, with the
// check and the last failure in the message.
func TestCommandExecutorKillsUnhealthyTask(t *testing.T) {
	r := newRecordingExecutor(t)
	ti := healthTask("sick", `trap "" TERM; sleep 30`, fastCheck("test -f missing"))
	ti.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(200 * time.Millisecond)}}
	r.launch(ti)
	ups := r.waitTerminal(t, "sick")
	var got []string
	for _, u := range ups {
		s := u.GetState().String()
		if u.Healthy != nil {
			s += map[bool]string{true: "+", false: "-"}[u.GetHealthy()]
		}
		got = append(got, s)
	}
	want := "TASK_RUNNING TASK_RUNNING- TASK_RUNNING- TASK_RUNNING- TASK_KILLED-"
	if strings.Join(got, " ") != want {
		t.Fatalf("updates %v, want %s", got, want)
	}
	last := ups[len(ups)-1]
	if last.GetReason() != mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED {
		t.Errorf("terminal reason %v", last.GetReason())
	}
	if m := last.GetMessage(); !strings.Contains(m, "COMMAND health check `test -f missing` failed 3 consecutive times") ||
		!strings.Contains(m, "command exited with status 1") || !strings.Contains(m, "status 137") {
		t.Errorf("terminal message %q does not name the check, the last failure and the SIGKILL", m)
	}
	for _, u := range ups[1:4] {
		if u.GetReason() != mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED {
			t.Errorf("health update reason %v", u.GetReason())
		}
	}
}

// A passing check is reported healthy once, however many checks pass; the
// task runs on until it is killed, and then ends TASK_KILLED without a
// health verdict.
func TestCommandExecutorHealthyTask(t *testing.T) {
	r := newRecordingExecutor(t)
	clock := newManualClock()
	r.clock = clock
	dir := r.cfg.Sandbox
	os.WriteFile(filepath.Join(dir, "ok"), nil, 0o644)
	hc := fastCheck("test -f ok")
	r.launch(healthTask("well", "sleep 30", hc))
	// The checker waits an interval after each check has been judged (and
	// reported): the eleventh wait means eleven checks passed.
	const checks = 11
	for i := 1; i < checks; i++ {
		clock.waitPending(t, 1)
		clock.Advance(newHealthPolicy(hc).interval)
	}
	clock.waitPending(t, 1)
	r.kill("well", time.Second)
	ups := r.waitTerminal(t, "well")
	var healthy int
	for _, u := range ups {
		if u.Healthy != nil {
			healthy++
			if !u.GetHealthy() || u.GetState() != mesos.TASK_RUNNING {
				t.Errorf("health update %v healthy=%v", u.GetState(), u.GetHealthy())
			}
		}
	}
	if healthy != 1 {
		t.Errorf("%d health updates, want the first success only", healthy)
	}
	if last := ups[len(ups)-1]; last.GetState() != mesos.TASK_KILLED || last.Healthy != nil {
		t.Errorf("terminal %v healthy=%v, want TASK_KILLED without a verdict", last.GetState(), last.Healthy)
	}
}

// A check the master would refuse fails the task here too.
func TestCommandExecutorInvalidHealthCheck(t *testing.T) {
	r := newRecordingExecutor(t)
	r.launch(healthTask("bad", "sleep 30", &mesos.HealthCheck{Type: mesos.HealthCheck_HTTP}))
	ups := r.waitTerminal(t, "bad")
	if len(ups) != 1 || ups[0].GetState() != mesos.TASK_ERROR || !strings.Contains(ups[0].GetMessage(), "expecting 'http' to be set") {
		t.Errorf("updates %v, want one TASK_ERROR naming the missing http", ups)
	}
}
