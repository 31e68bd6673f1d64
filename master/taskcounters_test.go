package master

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// /metrics/snapshot carries Mesos's lifetime task counters: each task is
// counted once, in the state it turned terminal in, whether its agent
// said so (a retried update is not counted again) or the master did (an
// invalid task, invalid offers, a framework torn down: TASK_KILLED).
func TestLifetimeTaskCounters(t *testing.T) {
	h := newHarness(t, nil)
	agentID, _ := h.agent("cpus:8;mem:4096")
	fw := h.framework("counted")
	h.runningTasks(fw, agentID, commandTask("t1", agentID, 1, 128), commandTask("t2", agentID, 1, 128), commandTask("t3", agentID, 1, 128))
	torn := h.framework("torn down")
	h.runningTasks(torn, agentID, commandTask("t4", agentID, 1, 128))
	if err := h.call(torn, &scheduler.Call{Type: scheduler.Call_TEARDOWN}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct {
		id    string
		state mesos.TaskState
	}{{"t1", mesos.TASK_FINISHED}, {"t2", mesos.TASK_FAILED}, {"t2", mesos.TASK_FAILED}, {"t3", mesos.TASK_KILLED}} {
		if err := h.agentUpdate(agentID, fw.id, u.id, u.state, "end-"+u.id); err != nil {
			t.Fatal(err)
		}
	}
	empty := commandTask("empty", agentID, 0, 0)
	empty.Resources = nil
	if err := h.call(fw, launchCall(h.offer(fw), nil, empty)); err != nil {
		t.Fatal(err)
	}
	bogus := &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{OfferIDs: []mesos.OfferID{{Value: "no-such-offer"}},
		Operations: []mesos.Offer_Operation{{Type: mesos.Offer_Operation_LAUNCH, Launch: &mesos.Offer_Operation_Launch{
			TaskInfos: []mesos.TaskInfo{commandTask("late", agentID, 1, 128)}}}}}}
	if err := h.call(fw, bogus); err != nil {
		t.Fatal(err)
	}

	var snap map[string]float64
	getJSON(t, h.m, "/metrics/snapshot", &snap)
	want := map[string]float64{"master/tasks_finished": 1, "master/tasks_failed": 1, "master/tasks_killed": 2, "master/tasks_error": 1,
		"master/tasks_lost": 1, "master/tasks_dropped": 0, "master/tasks_gone": 0, "master/tasks_gone_by_operator": 0, "master/tasks_running": 0}
	for k, v := range want {
		if got, ok := snap[k]; !ok || got != v {
			t.Errorf("/metrics/snapshot %s = %v (present %v), want %v", k, got, ok, v)
		}
	}
}
