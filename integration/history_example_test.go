package integration

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/internal/testcluster"
)

// A finished example framework (wordcount, on allot's framework runtime,
// its executors tasks of their own) is kept with its name and tasks:
// `allot frameworks --completed` and `allot tasks` list them with each
// task's state history, on the leader and, after it is killed -9, on the
// next one.
func TestExampleFrameworkHistoryAfterLeaderKill(t *testing.T) {
	bins, err := testcluster.Build(t.TempDir(), []testcluster.Package{{Name: "wordcount", Path: "github.com/allot-sched/allot/examples/wordcount"}})
	if err != nil {
		t.Fatal(err)
	}
	wc := bins["wordcount"]
	input := filepath.Join(t.TempDir(), "input.txt")
	if out, err := exec.Command(wc, "--input", input, "--generate", "20000").CombinedOutput(); err != nil {
		t.Fatalf("wordcount --generate: %v\n%s", err, out)
	}
	c := newMCluster(t, 3, 1)
	masters := strings.Join(c.seeds(), ",")
	lead := c.leader(30 * time.Second)
	run := exec.Command(wc, "--master", c.seeds()[lead], "--input", input, "--executors", "1", "--mem", "256")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("wordcount: %v\n%s", err, out)
	}
	check := func(when string) {
		t.Helper()
		var fw operator.Framework
		testcluster.WaitFor(t, 30*time.Second, when+": the wordcount framework among the completed ones", func() bool {
			var fws []operator.Framework
			allotJSON(t, &fws, "frameworks", "--completed", "--master", masters)
			for _, f := range fws {
				if strings.Contains(f.Name, "wordcount") && len(f.CompletedTasks) > 0 {
					fw = f
					return true
				}
			}
			return false
		})
		var tasks []operator.Task
		allotJSON(t, &tasks, "tasks", "--framework", fw.ID, "--master", masters)
		if len(tasks) != len(fw.CompletedTasks) {
			t.Errorf("%s: allot tasks --framework lists %d tasks, allot frameworks --completed %d", when, len(tasks), len(fw.CompletedTasks))
		}
		for _, tk := range tasks {
			n := len(tk.Statuses)
			if n < 2 || tk.Statuses[0].State != "TASK_RUNNING" || tk.Statuses[n-1].State != tk.State || tk.Statuses[0].Timestamp == 0 ||
				tk.Statuses[n-1].Timestamp < tk.Statuses[0].Timestamp {
				t.Errorf("%s: task %s (%s): statuses %+v, want it ran, then ended as its state says, with times", when, tk.ID, tk.State, tk.Statuses)
			}
		}
		if table := allot(t, "frameworks", "--completed", "--master", masters); !strings.Contains(table, "wordcount") {
			t.Errorf("%s: allot frameworks --completed does not name wordcount:\n%s", when, table)
		}
	}
	check("the first leader")
	c.kill9(lead)
	if now := c.leader(30 * time.Second); now == lead {
		t.Fatalf("master %d still leads after kill -9", lead)
	}
	check("after the leader's kill -9")
}
