package main

import (
	"io"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/resources"
)

// The planner launches once, makes a launch again only when the master
// says it never knew it, reconciles a failed ACCEPT instead of relaunching
// it, and hands on the first terminal status of a task that existed.
func TestRunPlanner(t *testing.T) {
	master := mesos.SOURCE_MASTER.Enum()
	recon := mesos.REASON_RECONCILIATION.Enum()
	unknown := "task is unknown to the master"
	acceptFailed := "ACCEPT failed: connection refused"
	status := func(id string, st mesos.TaskState, src *mesos.TaskStatus_Source, reason *mesos.TaskStatus_Reason, msg string) mesos.TaskStatus {
		s := mesos.TaskStatus{TaskID: mesos.TaskID{Value: id}, State: st.Enum(), Source: src, Reason: reason}
		if msg != "" {
			s.Message = &msg
		}
		return s
	}
	cases := []struct {
		name       string
		updates    func(id string) []mesos.TaskStatus
		wantDone   mesos.TaskState // 0: not done
		wantWants  bool
		reconciled int
	}{
		{"finished", func(id string) []mesos.TaskStatus {
			return []mesos.TaskStatus{status(id, mesos.TASK_RUNNING, nil, nil, ""), status(id, mesos.TASK_FINISHED, nil, nil, "")}
		}, mesos.TASK_FINISHED, false, 0},
		{"unknown to a new leader: launch again", func(id string) []mesos.TaskStatus {
			return []mesos.TaskStatus{status(id, mesos.TASK_LOST, master, recon, unknown)}
		}, 0, true, 0},
		{"lost after running: final", func(id string) []mesos.TaskStatus {
			return []mesos.TaskStatus{status(id, mesos.TASK_RUNNING, nil, nil, ""), status(id, mesos.TASK_LOST, master, recon, unknown)}
		}, mesos.TASK_LOST, false, 0},
		{"failed ACCEPT: reconciled, not relaunched", func(id string) []mesos.TaskStatus {
			return []mesos.TaskStatus{status(id, mesos.TASK_ERROR, master, nil, acceptFailed)}
		}, 0, false, 1},
		{"another task's update", func(string) []mesos.TaskStatus {
			return []mesos.TaskStatus{status("other", mesos.TASK_FINISHED, nil, nil, "")}
		}, 0, false, 0},
	}
	need, _ := resources.Parse("cpus:0.1;mem:32")
	offer := mesos.Offer{ID: mesos.OfferID{Value: "o1"}, AgentID: mesos.AgentID{Value: "a1"}, Resources: resources.ToMesos(need, "", "")}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newRunPlanner(runTaskSpec{argv: []string{"true"}, need: need}, "t", io.Discard)
			reconciled := make(chan string, 4)
			p.reconcile = func(id, _ string) { reconciled <- id }
			if l := p.Offers([]mesos.Offer{offer}); len(l) != 1 || p.Wants() {
				t.Fatalf("first offer: %d launches, wants %v; want 1 launch and no more", len(l), p.Wants())
			}
			id, _, _, _ := p.current()
			for _, u := range tc.updates(id) {
				p.Update(u)
			}
			select {
			case st := <-p.done:
				if st.GetState() != tc.wantDone {
					t.Errorf("done with %v, want %v", st.GetState(), tc.wantDone)
				}
			default:
				if tc.wantDone != 0 {
					t.Errorf("not done, want %v", tc.wantDone)
				}
			}
			if p.Wants() != tc.wantWants {
				t.Errorf("Wants() = %v, want %v", p.Wants(), tc.wantWants)
			}
			for i := 0; i < tc.reconciled; i++ {
				if got := <-reconciled; got != id {
					t.Errorf("reconciled %q, want %q", got, id)
				}
			}
			if tc.wantWants {
				l := p.Offers([]mesos.Offer{offer})
				if len(l) != 1 || l[0].Tasks[0].TaskID.Value == id {
					t.Errorf("relaunch %+v: want one launch under a new task id", l)
				}
			}
		})
	}
}
