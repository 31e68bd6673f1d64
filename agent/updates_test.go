package agent

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
)

// An unacknowledged status update is resent after the first retry
// interval, then after twice the previous wait, up to the longest; the
// intervals are Mesos's (10 s to 10 min) unless configured. The manual
// clock decides when time has passed: each row lists the offsets from the
// first send at which a resend is due, and the test checks that nothing
// goes out a nanosecond before each and exactly one resend at it.
func TestStatusUpdateRetryBackoff(t *testing.T) {
	for _, tc := range []struct {
		name           string
		first, longest time.Duration
		due            []time.Duration // from the first send
	}{
		{"mesos defaults", 0, 0, []time.Duration{
			10 * time.Second, 30 * time.Second, 70 * time.Second, 150 * time.Second, 310 * time.Second,
			630 * time.Second, 1230 * time.Second, 1830 * time.Second}},
		{"configured", time.Second, 4 * time.Second, []time.Duration{
			time.Second, 3 * time.Second, 7 * time.Second, 11 * time.Second, 15 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newManualClock()
			a := &Agent{cfg: Config{Clock: clock, StatusUpdateRetry: tc.first, StatusUpdateRetryMax: tc.longest},
				executors: map[string]*executor{}, sendq: make(chan *api.AgentCall, 16), connected: true}
			ex := &executor{fw: "fw", id: "ex", tasks: map[string]*agentTask{}}
			a.executors[exKey("fw", "ex")] = ex
			tk := &agentTask{info: mesos.TaskInfo{TaskID: mesos.TaskID{Value: "t"}}}
			ex.tasks["t"] = tk
			start := clock.Now()
			a.mu.Lock()
			a.enqueueUpdateLocked(ex, tk, a.agentStatus(ex, tk, mesos.TASK_RUNNING, mesos.REASON_TASK_CHECK_STATUS_UPDATED, "up"))
			a.mu.Unlock()
			if n := drainSent(a); n != 1 {
				t.Fatalf("%d calls sent on enqueue, want 1", n)
			}
			for i, due := range tc.due {
				clock.Advance(start.Add(due - time.Nanosecond).Sub(clock.Now()))
				a.mu.Lock()
				a.retryDueLocked(clock.Now())
				a.mu.Unlock()
				early := drainSent(a)
				clock.Advance(time.Nanosecond)
				a.mu.Lock()
				a.retryDueLocked(clock.Now())
				a.mu.Unlock()
				if early != 0 {
					t.Fatalf("resend %d went out before %v", i+1, due)
				}
				if n := drainSent(a); n != 1 {
					t.Fatalf("resend %d at %v: %d sent, want 1", i+1, due, n)
				}
			}
		})
	}
}

// An acknowledgement restarts the backoff: the next update's first resend
// waits the first interval again, not the doubled one.
func TestStatusUpdateRetryRestartsAfterAck(t *testing.T) {
	clock := newManualClock()
	a := &Agent{cfg: Config{Clock: clock}, executors: map[string]*executor{}, sendq: make(chan *api.AgentCall, 16), connected: true}
	ex := &executor{fw: "fw", id: "ex", tasks: map[string]*agentTask{}}
	a.executors[exKey("fw", "ex")] = ex
	tk := &agentTask{info: mesos.TaskInfo{TaskID: mesos.TaskID{Value: "t"}}}
	ex.tasks["t"] = tk
	a.mu.Lock()
	a.enqueueUpdateLocked(ex, tk, a.agentStatus(ex, tk, mesos.TASK_RUNNING, mesos.REASON_TASK_CHECK_STATUS_UPDATED, "up"))
	first := tk.pending[0].UUID
	a.enqueueUpdateLocked(ex, tk, a.agentStatus(ex, tk, mesos.TASK_FINISHED, mesos.REASON_TASK_CHECK_STATUS_UPDATED, "done"))
	a.mu.Unlock()
	for _, step := range []time.Duration{10 * time.Second, 20 * time.Second} {
		clock.Advance(step)
		a.mu.Lock()
		a.retryDueLocked(clock.Now())
		a.mu.Unlock()
	}
	if n := drainSent(a); n != 3 {
		t.Fatalf("%d sent, want the first send and two resends", n)
	}
	a.acknowledged("fw", "t", first)
	if n := drainSent(a); n != 1 {
		t.Fatalf("%d sent on the acknowledgement, want the next update", n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if got := tk.nextRetry.Sub(clock.Now()); got != defaultStatusUpdateRetry {
		t.Fatalf("next update's first resend in %v, want %v", got, defaultStatusUpdateRetry)
	}
}

func drainSent(a *Agent) int {
	n := 0
	for len(a.sendq) > 0 {
		<-a.sendq
		n++
	}
	return n
}
