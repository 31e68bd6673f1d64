package examples

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/internal/testcluster"
)

// framework returns the master's view of the framework named name (ok
// false if the master does not list it or cannot be read).
func (c *cluster) framework(name string) (operator.Framework, bool) {
	var st operator.State
	resp, err := http.Get("http://" + c.MasterAddr + "/state")
	if err != nil {
		return operator.Framework{}, false
	}
	defer resp.Body.Close()
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return operator.Framework{}, false
	}
	for _, f := range st.Frameworks {
		if f.Name == name {
			return f, true
		}
	}
	return operator.Framework{}, false
}

// running counts the framework's executor tasks the master sees running.
func runningTasks(f operator.Framework) int {
	n := 0
	for _, t := range f.Tasks {
		if t.State == "TASK_RUNNING" {
			n++
		}
	}
	return n
}

// waitApp waits up to 60s for a started application to exit, and fails
// the test unless it exited 0.
func waitApp(t *testing.T, a *testcluster.Proc) {
	t.Helper()
	select {
	case <-a.Done():
	case <-time.After(60 * time.Second):
		t.Fatalf("application did not finish\n%s", testcluster.Tail(a.Stderr.String(), 3000))
	}
	if a.Err() != nil {
		t.Fatalf("application failed: %v\n%s", a.Err(), testcluster.Tail(a.Stderr.String(), 3000))
	}
}

// TestDynamicAllocation: an application that starts with one executor
// asks for more when tasks queue up (the master runs more of its executor
// tasks), and once idle gives back the executors that hold no cached data
// while keeping the one that does, whose cache its next job then reads.
func TestDynamicAllocation(t *testing.T) {
	c := newCluster(t)
	hold := filepath.Join(t.TempDir(), "release")
	a := c.startApp(t, "testapp", "--dynamic", "--executors", "1", "--cores", "1", "--max-executors", "3",
		"--backlog-timeout", "300ms", "--idle-timeout", "1500ms", "--tasks", "24", "--task-ms", "300", "--cache", "--hold", hold)
	out, errb := a.Out, a.Stderr
	peak := 0
	testcluster.WaitFor(t, 60*time.Second, "more than one executor running under the backlog (master /state)", func() bool {
		if a.Exited() {
			t.Fatalf("testapp exited before scaling up: %v\n%s", a.Err(), testcluster.Tail(errb.String(), 3000))
		}
		f, _ := c.framework("testapp")
		peak = max(peak, runningTasks(f))
		return peak >= 2
	})
	testcluster.WaitFor(t, 60*time.Second, "the driver to release idle executors", func() bool {
		if a.Exited() {
			t.Fatalf("testapp exited before going idle: %v\n%s", a.Err(), testcluster.Tail(errb.String(), 3000))
		}
		return strings.Contains(errb.String(), "idle with 1 executors")
	})
	// The master's view follows once the agents have killed the released
	// executors; the application is still alive (it waits for the file).
	testcluster.WaitFor(t, 30*time.Second, "one executor left running (master /state)", func() bool {
		f, _ := c.framework("testapp")
		return runningTasks(f) == 1
	})
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitApp(t, a)
	if got, want := out.String(), "cached 1000\nslow 24\ncached 1000\n"; got != want {
		t.Fatalf("stdout %q, want %q", got, want)
	}
	holder := ""
	for _, line := range strings.Split(errb.String(), "\n") {
		if h, ok := strings.CutPrefix(line, "cached on "); ok {
			if holder != "" {
				t.Fatalf("the cached partition was computed with more than one executor registered (%s, %s): the test needs it on the only one", holder, h)
			}
			holder = h
		}
	}
	evs := events(t, errb.String())
	requested, added, idleRemoved := 0, count(evs, "executor_added"), 0
	for _, e := range evs {
		switch e["event"] {
		case "executors_requested":
			if e["target"].(float64) >= 2 {
				requested++
			}
		case "executor_removed":
			if e["executor"] == holder {
				t.Fatalf("the executor holding cached data (%s) was removed: %v", holder, e["reason"])
			}
			if strings.Contains(e["reason"].(string), "idle") {
				idleRemoved++
			}
		}
	}
	if requested == 0 || added < 2 || idleRemoved == 0 || idleRemoved != added-1 {
		t.Fatalf("event log: %d scale-up requests, %d executors added, %d released as idle; want scale-up, more than one executor, and all but the cache holder released", requested, added, idleRemoved)
	}
	var last map[string]any
	for _, e := range evs {
		if e["event"] == "task_end" {
			last = e
		}
	}
	if last == nil || last["executor"] != holder || last["cache_hit"] != true {
		t.Fatalf("the last job's task ran on %v with cache hit %v; want the kept executor %s reading its cache", last["executor"], last["cache_hit"], holder)
	}
	t.Logf("executors: peak %d running on the master, %d added, %d released when idle, %s kept with its cache", peak, added, idleRemoved, holder)
	c.noExecutorsLeft(t)
}
