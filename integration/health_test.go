package integration

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/internal/testcluster"
)

// quickCheck is a health check starting at once, every 200 ms, without a
// grace period (Mesos's defaults would take 15 s to start).
func quickCheck(hc mesos.HealthCheck) *mesos.HealthCheck {
	zero, tick, timeout := 0.0, 0.2, 5.0
	hc.DelaySeconds, hc.IntervalSeconds, hc.GracePeriodSeconds, hc.TimeoutSeconds = &zero, &tick, &zero, &timeout
	return &hc
}

func shellCheck(s string) mesos.HealthCheck {
	return mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, Command: &mesos.CommandInfo{Value: &s}}
}

// healthTrail is a task's updates as "RUNNING", "RUNNING+" (healthy),
// "RUNNING-" (unhealthy), "KILLED-", ...
func (s *sched) healthTrail(taskID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, u := range s.updates {
		if u.TaskID.Value != taskID {
			continue
		}
		e := strings.TrimPrefix(u.GetState().String(), "TASK_")
		if u.Healthy != nil {
			e += map[bool]string{true: "+", false: "-"}[u.GetHealthy()]
		}
		out = append(out, e)
	}
	return out
}

func (s *sched) waitTrail(t *testing.T, taskID, what string, done func([]string) bool) []string {
	t.Helper()
	var trail []string
	testcluster.WaitFor(t, 30*time.Second, "task "+taskID+" "+what, func() bool {
		trail = s.healthTrail(taskID)
		return done(trail)
	})
	return trail
}

// countingListener accepts TCP connections on a loopback port, counting
// and closing each, as a task's port answers a TCP health check.
func countingListener(t *testing.T, n *atomic.Int64) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return l
}

func last(trail []string, e string) bool { return len(trail) > 0 && trail[len(trail)-1] == e }

// Health checks on real executors, as a mesos-go scheduler sees them.
func TestHealthChecks(t *testing.T) {
	c := newCluster(t, 1)

	t.Run("command check kills", func(t *testing.T) { healthCommandCheckKills(t, c) })
	t.Run("http and tcp pass", func(t *testing.T) { healthHTTPAndTCPPass(t, c) })
	t.Run("task group", func(t *testing.T) { healthTaskGroup(t, c) })
	t.Run("invalid check", func(t *testing.T) { healthInvalidCheck(t, c) })
}

// healthCommandCheckKills: a command check passes while the task's file is
// there; removed, it fails three times in a row and the executor kills the
// task: TASK_RUNNING healthy=true, then healthy=false before TASK_KILLED
// (healthy=false, REASON_TASK_HEALTH_CHECK_STATUS_UPDATED).
func healthCommandCheckKills(t *testing.T, c *cluster) {
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "health-cmd"})
	o := fw.takeOfferFits(t, 1, 256) // more than its tasks and executors need
	ti := cmdTask("sick", o, "touch ok && sleep 60", 0.1, 32)
	ti.HealthCheck = quickCheck(shellCheck(`test -f "$MESOS_SANDBOX/ok"`))
	// A check may run before the task has made its file (a loaded
	// host): the grace period ignores such failures until the first
	// success, which ends it.
	grace := 60.0
	ti.HealthCheck.GracePeriodSeconds = &grace
	ti.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(time.Second)}}
	if err := fw.call(launch(o, ti)); err != nil {
		t.Fatal(err)
	}
	fw.waitTrail(t, "sick", "to be reported healthy", func(tr []string) bool { return last(tr, "RUNNING+") })
	oks, _ := filepath.Glob(filepath.Join(c.Agents[0].Dir, "slaves", "*", "frameworks", fw.ID(), "executors", "sick", "runs", "*", "ok"))
	if len(oks) != 1 {
		t.Fatalf("sandbox file ok: %v, want one", oks)
	}
	os.Remove(oks[0])
	st := fw.waitState(t, "sick", mesos.TASK_KILLED)
	trail := fw.healthTrail("sick")
	if got := strings.Join(trail, " "); got != "RUNNING RUNNING+ RUNNING- RUNNING- RUNNING- KILLED-" {
		t.Errorf("updates %s, want RUNNING RUNNING+ RUNNING- RUNNING- RUNNING- KILLED-", got)
	}
	if st.GetReason() != mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED || st.Healthy == nil || st.GetHealthy() {
		t.Errorf("TASK_KILLED reason %v healthy %v, want REASON_TASK_HEALTH_CHECK_STATUS_UPDATED, false", st.GetReason(), st.Healthy)
	}
	if m := st.GetMessage(); !strings.Contains(m, "COMMAND health check `test -f \"$MESOS_SANDBOX/ok\"` failed 3 consecutive times") ||
		!strings.Contains(m, "command exited with status 1") {
		t.Errorf("TASK_KILLED message %q does not name the check and its last failure", m)
	}
	t.Logf("sick: %s", st.GetMessage())
}

// healthHTTPAndTCPPass: HTTP and TCP checks that pass report healthy=true
// once, and the tasks run on through ten more checks (counted where they
// land, every 200 ms) until the scheduler kills them. The ports are this test's servers on
// the agent's host, where a task's own servers would be.
func healthHTTPAndTCPPass(t *testing.T, c *cluster) {
	var httpChecks, tcpChecks atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		httpChecks.Add(1)
	}))
	defer srv.Close()
	tcpSrv := countingListener(t, &tcpChecks)
	httpPort := uint32(srv.Listener.Addr().(*net.TCPAddr).Port)
	tcpPort := uint32(tcpSrv.Addr().(*net.TCPAddr).Port)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "health-net"})
	o := fw.takeOfferFits(t, 1, 256) // more than its tasks and executors need
	web := cmdTask("web", o, "sleep 60", 0.1, 32)
	path := "/health"
	web.HealthCheck = quickCheck(mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Port: httpPort, Path: &path}})
	tcp := cmdTask("tcp", o, "sleep 60", 0.1, 32)
	tcp.HealthCheck = quickCheck(mesos.HealthCheck{Type: mesos.HealthCheck_TCP, TCP: &mesos.HealthCheck_TCPCheckInfo{Port: tcpPort}})
	if err := fw.call(launch(o, web, tcp)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"web", "tcp"} {
		fw.waitTrail(t, id, "to be reported healthy", func(tr []string) bool { return last(tr, "RUNNING+") })
	}
	// A task's checks run one after another: when the 11th check after
	// now reaches the server, the results of the ten before it were
	// judged, and any update they caused was sent before the kill's.
	h0, t0 := httpChecks.Load(), tcpChecks.Load()
	testcluster.WaitFor(t, 30*time.Second, "ten more checks of each task", func() bool {
		return httpChecks.Load() >= h0+11 && tcpChecks.Load() >= t0+11
	})
	if h := stateHealth(t, c.MasterAddr); h["web"] == nil || !*h["web"] || h["tcp"] == nil || !*h["tcp"] {
		t.Errorf("master /state healthy = web %v, tcp %v; want true for both", h["web"], h["tcp"])
	}
	for _, id := range []string{"web", "tcp"} {
		if err := fw.call(calls.Kill(id, o.AgentID.Value)); err != nil {
			t.Fatal(err)
		}
		if st := fw.waitState(t, id, mesos.TASK_KILLED); st.Healthy != nil {
			t.Errorf("%s killed by the scheduler carries healthy=%v", id, st.GetHealthy())
		}
		if got := strings.Join(fw.healthTrail(id), " "); got != "RUNNING RUNNING+ KILLED" {
			t.Errorf("%s: updates %s through ten passing checks and the kill, want RUNNING RUNNING+ KILLED", id, got)
		}
	}
}

// healthTaskGroup: the default executor runs a task group's checks per
// task: each is reported for its own task, and the failing one is killed.
func healthTaskGroup(t *testing.T, c *cluster) {
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "health-group"})
	o := fw.takeOfferFits(t, 1, 256) // more than its tasks and executors need
	ex := mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "hg"}, Type: mesos.ExecutorInfo_DEFAULT,
		Resources: []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 32)}}
	bad, good := cmdTask("g-bad", o, "sleep 60", 0.1, 32), cmdTask("g-good", o, "sleep 60", 0.1, 32)
	bad.HealthCheck = quickCheck(shellCheck("false"))
	good.HealthCheck = quickCheck(shellCheck("true"))
	if err := fw.call(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ex, bad, good)}.WithOffers(o.ID))); err != nil {
		t.Fatal(err)
	}
	st := fw.waitState(t, "g-bad", mesos.TASK_KILLED)
	if st.GetReason() != mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED || st.GetHealthy() || st.Healthy == nil {
		t.Errorf("g-bad ended reason %v healthy %v", st.GetReason(), st.Healthy)
	}
	if got := strings.Join(fw.healthTrail("g-bad"), " "); got != "RUNNING RUNNING- RUNNING- RUNNING- KILLED-" {
		t.Errorf("g-bad updates %s", got)
	}
	if got := fw.healthTrail("g-good"); len(got) < 2 || got[1] != "RUNNING+" {
		t.Errorf("g-good updates %v, want RUNNING then healthy", got)
	}
	fw.call(calls.Kill("g-good", o.AgentID.Value))
	fw.waitState(t, "g-good", mesos.TASK_KILLED)
}

// healthInvalidCheck: a malformed check is refused by the master: TASK_ERROR,
// REASON_TASK_INVALID, the reason in the message.
func healthInvalidCheck(t *testing.T, c *cluster) {
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "health-bad"})
	o := fw.takeOfferFits(t, 1, 256) // more than its tasks and executors need
	ti := cmdTask("noport", o, "sleep 60", 0.1, 32)
	ti.HealthCheck = &mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{}}
	if err := fw.call(launch(o, ti)); err != nil {
		t.Fatal(err)
	}
	st := fw.waitState(t, "noport", mesos.TASK_ERROR)
	if st.GetReason() != mesos.REASON_TASK_INVALID || !strings.Contains(st.GetMessage(), "HTTP health check must set 'port'") {
		t.Errorf("TASK_ERROR reason %v message %q", st.GetReason(), st.GetMessage())
	}
}

// stateHealth reads the master's /state and returns each task's healthy
// field by task id (nil where absent).
func stateHealth(t *testing.T, master string) map[string]*bool {
	t.Helper()
	resp, err := http.Get("http://" + master + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc operator.State
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]*bool{}
	for _, f := range doc.Frameworks {
		for _, tk := range f.Tasks {
			out[tk.ID] = tk.Healthy
		}
	}
	return out
}
