package integration

import (
	"slices"
	"testing"
	"time"

	"github.com/allot-sched/allot/internal/testcluster"
)

// completedIDs lists the leader's /state completed tasks, in its order.
func (c *mcluster) completedIDs() []string {
	var out []string
	for _, f := range c.state().Frameworks {
		for _, tk := range f.CompletedTasks {
			out = append(out, tk.ID+":"+tk.State)
		}
	}
	return out
}

// Completed tasks are in the registry: after the leader is killed -9, the
// new leader lists the same ones, bounded by
// --max-completed-tasks-per-framework (before the fix it listed none).
func TestRaftCompletedTasksSurviveLeaderKill(t *testing.T) {
	const keep = 5
	c := newMCluster(t, 3, 1, "--max-completed-tasks-per-framework", "5")
	fw := startRSched(t, c.seeds(), "true")
	fw.setLaunching(true)
	testcluster.WaitFor(t, 60*time.Second, "12 tasks launched", func() bool { return fw.launchedCount() >= 12 })
	fw.setLaunching(false)
	testcluster.WaitFor(t, 60*time.Second, "every launched task to end", func() bool { return len(fw.unaccounted(true)) == 0 })
	var before []string
	testcluster.WaitFor(t, 30*time.Second, "the leader to list 5 completed tasks and no live one", func() bool {
		before = c.completedIDs()
		st := c.state()
		return len(before) == keep && len(st.Frameworks) == 1 && len(st.Frameworks[0].Tasks) == 0
	})
	old := c.leader(10 * time.Second)
	c.kill9(old)
	if lead := c.leader(30 * time.Second); lead == old {
		t.Fatalf("master %d still leads after kill -9", old)
	}
	// The old leader lists a task as completed when its framework
	// acknowledges it, a moment before the registry commits it; one whose
	// commit the kill cut off is still terminal in the registry, and its
	// agent resends the update to the new leader until it is acknowledged
	// again. Either way the new leader ends listing the same ones.
	var after []string
	testcluster.WaitFor(t, 30*time.Second, "the new leader to list the same completed tasks", func() bool {
		after = c.completedIDs()
		return slices.Equal(after, before)
	})
	c.checkInvariants()
}
