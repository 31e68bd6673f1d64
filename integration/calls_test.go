package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpmaster"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	mcalls "github.com/mesos/mesos-go/api/v1/lib/master/calls"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/internal/testcluster"
)

// The scheduler calls beyond launch: KILL, DECLINE with a filter,
// SUPPRESS and REVIVE, LAUNCH_GROUP on the default executor, fetched URIs,
// SHUTDOWN of an executor, MULTI_ROLE allocation info, and TEARDOWN.
func TestSchedulerCalls(t *testing.T) {
	c := newCluster(t, 1)

	t.Run("kill", func(t *testing.T) { callKill(t, c) })
	t.Run("reconcile and update framework", func(t *testing.T) { callReconcileAndUpdateFramework(t, c) })
	t.Run("decline filter, suppress, revive", func(t *testing.T) { callDeclineSuppressRevive(t, c) })
	t.Run("launch group and fetcher", func(t *testing.T) { callLaunchGroupAndFetcher(t, c) })
	t.Run("shutdown executor", func(t *testing.T) { callShutdownExecutor(t, c) })
	t.Run("multi-role allocation info", func(t *testing.T) { callMultiRoleAllocationInfo(t, c) })
	t.Run("teardown", func(t *testing.T) { callTeardown(t, c) })
}

// callKill: KILL of a running task, of an unknown one (TASK_LOST) and of
// one that ignores SIGTERM (SIGKILL after the grace period).
func callKill(t *testing.T, c *cluster) {
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "killer"})
	o := fw.takeOfferFits(t, 1, 256)
	if err := fw.call(launch(o, cmdTask("victim", o, "sleep 60", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "victim", mesos.TASK_RUNNING)
	if err := fw.call(calls.Kill("victim", o.AgentID.Value)); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "victim", mesos.TASK_KILLED)
	// Killing an unknown task answers TASK_LOST, as Mesos does.
	if err := fw.call(calls.Kill("never-was", "")); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "never-was", mesos.TASK_LOST)
	// A task that ignores SIGTERM is killed with SIGKILL after the
	// kill policy's grace period.
	o = fw.takeOfferFits(t, 1, 256)
	if err := fw.call(launch(o, cmdTask("stubborn", o, "trap '' TERM; sleep 60", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "stubborn", mesos.TASK_RUNNING)
	kill := calls.Kill("stubborn", o.AgentID.Value)
	kill.Kill.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(300 * time.Millisecond)}}
	if err := fw.call(kill); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "stubborn", mesos.TASK_KILLED)
}

// callReconcileAndUpdateFramework: explicit reconciliation of an unknown
// task, and UPDATE_FRAMEWORK renaming the framework.
func callReconcileAndUpdateFramework(t *testing.T, c *cluster) {
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "before"})
	if err := fw.call(calls.Reconcile(calls.ReconcileTasks(map[string]string{"ghost": ""}))); err != nil {
		t.Fatal(err)
	}
	st := fw.waitState(t, "ghost", mesos.TASK_LOST)
	if st.GetReason() != mesos.REASON_RECONCILIATION {
		t.Errorf("reason = %v, want RECONCILIATION", st.GetReason())
	}
	info := mesos.FrameworkInfo{User: "root", Name: "after", ID: &mesos.FrameworkID{Value: fw.ID()}}
	if err := fw.call(calls.UpdateFramework(info)); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, 10*time.Second, "/state to show the new name", func() bool {
		for _, f := range c.state().Frameworks {
			if f.ID == fw.ID() {
				return f.Name == "after"
			}
		}
		return false
	})
}

// callDeclineSuppressRevive: REVIVE clears a decline filter.
func callDeclineSuppressRevive(t *testing.T, c *cluster) {
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "picky"})
	o := fw.takeOffer(t, "")
	if err := fw.call(calls.Decline(o.ID).With(calls.RefuseSeconds(time.Hour))); err != nil {
		t.Fatal(err)
	}
	// Filtered for an hour: revive clears filters and offers come back.
	if err := fw.call(calls.Suppress()); err != nil {
		t.Fatal(err)
	}
	fw.mu.Lock()
	fw.offers = nil
	fw.mu.Unlock()
	if err := fw.call(calls.Revive()); err != nil {
		t.Fatal(err)
	}
	fw.takeOffer(t, o.AgentID.Value)
	fw.call(calls.Suppress())
}

// callLaunchGroupAndFetcher: LAUNCH_GROUP on the default executor, with a
// URI it fetches into the sandbox.
func callLaunchGroupAndFetcher(t *testing.T, c *cluster) {
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "grouper"})
	o := fw.takeOfferFits(t, 1, 256)
	data := filepath.Join(t.TempDir(), "input.txt")
	os.WriteFile(data, []byte("fetched!\n"), 0o644)
	ex := mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "group-ex"}, Type: mesos.ExecutorInfo_DEFAULT,
		Resources: []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 32)}}
	t1 := cmdTask("g1", o, "cat input.txt", 0.1, 32)
	t1.Command.URIs = []mesos.CommandInfo_URI{{Value: data}}
	ex.Command = nil
	t2 := cmdTask("g2", o, "exit 0", 0.1, 32)
	// The default executor fetches nothing itself; put the URI on it.
	ex.Command = &mesos.CommandInfo{URIs: []mesos.CommandInfo_URI{{Value: data}}}
	call := calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ex, t1, t2)}.WithOffers(o.ID))
	if err := fw.call(call); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "g1", mesos.TASK_FINISHED)
	fw.waitState(t, "g2", mesos.TASK_FINISHED)
	out, _ := filepath.Glob(filepath.Join(c.Agents[0].Dir, "slaves", "*", "frameworks", fw.ID(), "executors", "group-ex", "runs", "*", "stdout"))
	if len(out) != 1 || !strings.Contains(strings.Join(readLines(out[0]), "\n"), "fetched!") {
		t.Errorf("group stdout %v does not show the fetched file", out)
	}
}

// callShutdownExecutor: SHUTDOWN kills the executor's task and sends FAILURE.
func callShutdownExecutor(t *testing.T, c *cluster) {
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "shutter"})
	o := fw.takeOfferFits(t, 1, 256)
	ex := execInfo("to-shut")
	if err := fw.call(launch(o, execTask("held", o, ex, "sleep"))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "held", mesos.TASK_RUNNING)
	if err := fw.call(calls.Shutdown("to-shut", o.AgentID.Value)); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "held", mesos.TASK_KILLED)
	testcluster.WaitFor(t, 10*time.Second, "FAILURE event for the executor", func() bool {
		fw.mu.Lock()
		defer fw.mu.Unlock()
		for _, e := range fw.events {
			if e == scheduler.Event_FAILURE {
				return true
			}
		}
		return false
	})
}

// callMultiRoleAllocationInfo: only MULTI_ROLE frameworks get allocation
// info on offered resources.
func callMultiRoleAllocationInfo(t *testing.T, c *cluster) {
	info := mesos.FrameworkInfo{Name: "multi", Roles: []string{"analytics"},
		Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE}}}
	fw := subscribe(t, c.MasterAddr, info)
	o := fw.takeOffer(t, "")
	for _, r := range o.Resources {
		if r.AllocationInfo.GetRole() != "analytics" {
			t.Fatalf("resource %s has allocation info %v, want role analytics", r.Name, r.AllocationInfo)
		}
	}
	plain := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "single"})
	fw.call(calls.Decline(o.ID).With(calls.RefuseSeconds(3600)))
	fw.call(calls.Suppress())
	po := plain.takeOffer(t, "")
	for _, r := range po.Resources {
		if r.AllocationInfo != nil {
			t.Fatalf("non-MULTI_ROLE framework got allocation info on %s", r.Name)
		}
	}
	plain.call(calls.Decline(po.ID))
	plain.call(calls.Suppress())
}

// callTeardown: TEARDOWN removes the framework and its executors, and its
// id cannot subscribe again.
func callTeardown(t *testing.T, c *cluster) {
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "leaver"})
	o := fw.takeOfferFits(t, 1, 256)
	if err := fw.call(launch(o, cmdTask("left", o, "sleep 60", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "left", mesos.TASK_RUNNING)
	id := fw.ID()
	if err := fw.call(&scheduler.Call{Type: scheduler.Call_TEARDOWN}); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, 10*time.Second, "the framework to be gone", func() bool {
		for _, f := range c.state().Frameworks {
			if f.ID == id {
				return false
			}
		}
		return true
	})
	testcluster.WaitFor(t, 15*time.Second, "its executor to be gone", func() bool { return len(sandboxPids(c.Dir, "left")) == 0 })
	// Its id is spent: subscribing with it again is refused.
	// (httpsched retries every failed SUBSCRIBE for about a minute, so
	// ask with a plain request.)
	body := `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"root","name":"leaver","id":{"value":"` + id + `"}}}}`
	if code, msg := postRaw(t, c.MasterAddr, "/api/v1/scheduler", "application/json", []byte(body), nil); code != 403 || !strings.Contains(msg, "has been removed") {
		t.Errorf("re-SUBSCRIBE of a torn-down framework answered %d %q, want 403", code, msg)
	}
}

// The operator API answers mesos-go's httpmaster client; UPDATE_WEIGHTS is
// kept in the registry; /metrics has the master's series.
func TestOperatorAPIAndMetrics(t *testing.T) {
	c := newCluster(t, 2)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "observed", Role: strp("prod")})
	o := fw.takeOfferFits(t, 1, 256)
	if err := fw.call(launch(o, cmdTask("seen", o, "sleep 60", 0.5, 64))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "seen", mesos.TASK_RUNNING)
	cli := httpmaster.NewSender(httpcli.New(httpcli.Endpoint("http://"+c.MasterAddr+"/api/v1"), httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeJSON])).Send)
	get := operatorGetter(t, cli)
	checkOperatorReads(t, get)
	resp, err := cli.Send(context.Background(), mcalls.NonStreaming(mcalls.UpdateWeights(mesos.WeightInfo{Role: strp("prod"), Weight: 3})))
	if err != nil {
		t.Fatalf("UPDATE_WEIGHTS: %v", err)
	}
	if resp != nil { // a no-data call answers without a body
		resp.Close()
	}
	var found bool
	for _, r := range get(mcalls.GetRoles()).GetRoles.Roles {
		found = found || (r.Name == "prod" && r.Weight == 3)
	}
	if !found {
		t.Error("GET_ROLES does not show the updated weight")
	}
	checkMasterMetrics(t, c.MasterAddr)
	// Weights survive a master restart (they are in the registry).
	c.Master.Kill(syscall.SIGKILL)
	fw.close()
	c.StartMaster()
	found = false
	for _, r := range get(mcalls.GetWeights()).GetWeights.WeightInfos {
		found = found || (r.GetRole() == "prod" && r.Weight == 3)
	}
	if !found {
		t.Error("weights lost in a master restart")
	}
}

// operatorGetter returns a function that sends one operator call with cli
// and decodes its answer, failing the test on an error.
func operatorGetter(t *testing.T, cli mcalls.Sender) func(call *mmaster.Call) *mmaster.Response {
	return func(call *mmaster.Call) *mmaster.Response {
		t.Helper()
		resp, err := cli.Send(context.Background(), mcalls.NonStreaming(call))
		if err != nil {
			t.Fatalf("%v: %v", call.Type, err)
		}
		defer resp.Close()
		var r mmaster.Response
		if err := resp.Decode(&r); err != nil {
			t.Fatalf("%v: decode: %v", call.Type, err)
		}
		return &r
	}
}

// checkOperatorReads checks the read-only operator calls against a cluster
// of two agents running one task "seen" of a framework "observed" in role
// prod.
func checkOperatorReads(t *testing.T, get func(call *mmaster.Call) *mmaster.Response) {
	if !get(mcalls.GetHealth()).GetHealth.Healthy {
		t.Error("GET_HEALTH: not healthy")
	}
	if v := get(mcalls.GetVersion()).GetVersion.VersionInfo.Version; v == "" {
		t.Error("GET_VERSION: empty")
	}
	if n := len(get(mcalls.GetAgents()).GetAgents.Agents); n != 2 {
		t.Errorf("GET_AGENTS: %d agents, want 2", n)
	}
	if fws := get(mcalls.GetFrameworks()).GetFrameworks.Frameworks; len(fws) != 1 || fws[0].FrameworkInfo.Name != "observed" {
		t.Errorf("GET_FRAMEWORKS: %v", fws)
	}
	tasks := get(mcalls.GetTasks()).GetTasks.Tasks
	if len(tasks) != 1 || tasks[0].TaskID.Value != "seen" || tasks[0].GetState() != mesos.TASK_RUNNING {
		t.Errorf("GET_TASKS: %v", tasks)
	}
	if st := get(mcalls.GetState()).GetState; len(st.GetTasks.Tasks) != 1 || len(st.GetAgents.Agents) != 2 {
		t.Errorf("GET_STATE: %d tasks, %d agents", len(st.GetTasks.Tasks), len(st.GetAgents.Agents))
	}
	if roles := get(mcalls.GetRoles()).GetRoles.Roles; len(roles) != 1 || roles[0].Name != "prod" {
		t.Errorf("GET_ROLES: %v", roles)
	}
	if flags := get(mcalls.GetFlags()).GetFlags.Flags; len(flags) == 0 {
		t.Error("GET_FLAGS: none")
	}
}

// checkMasterMetrics checks that /metrics has the master's series for that
// cluster. A scrape that finds the master's lock held reports the state
// gauges' last reading (none before the first), so it asks until the
// series are there.
func checkMasterMetrics(t *testing.T, addr string) {
	want := []string{"allot_master_offers_total", "allot_master_allocation_cycle_seconds_bucket",
		`allot_master_role_dominant_share{role="prod"}`, `allot_master_tasks{state="TASK_RUNNING"} 1`,
		`allot_master_agents{state="connected"} 2`, `allot_master_frameworks{state="connected"} 1`}
	var missing []string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(testcluster.PollInterval) {
		hr, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(hr.Body)
		hr.Body.Close()
		missing = missing[:0]
		for _, series := range want {
			if !strings.Contains(string(body), series) {
				missing = append(missing, series)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %v", missing)
		}
	}
}

func strp(s string) *string { return &s }

// allot run, the README's run example, runs a command to its exit code and
// shows its output.
func TestAllotRun(t *testing.T) {
	c := newCluster(t, 1)
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"echo", "hello", "from", "allot"}, 0, "hello from allot"},
		{[]string{"sh", "-c", "echo partial; exit 3"}, 3, "partial"},
	}
	for _, tc := range tests {
		cmd := exec.Command(allotBin, append([]string{"run", "--master", c.MasterAddr, "--timeout", "60s", "--"}, tc.args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(string(out), tc.out) {
			t.Errorf("allot run %v: exit %d, stdout %q; want %d with %q", tc.args, code, out, tc.code, tc.out)
		}
	}
}

// The usage monitor sees a running executor's process group on the agent
// (/monitor/statistics) and reports host and executor usage to the master
// (/state).
func TestUsageMonitor(t *testing.T) {
	c := newCluster(t, 1)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "measured"})
	o := fw.takeOfferFits(t, 1, 256)
	if err := fw.call(launch(o, cmdTask("busy", o, "sleep 60", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "busy", mesos.TASK_RUNNING)
	var stats []struct {
		ExecutorID string `json:"executor_id"`
		Statistics struct {
			MemRSSBytes uint64 `json:"mem_rss_bytes"`
			Processes   int    `json:"processes"`
		} `json:"statistics"`
	}
	testcluster.WaitFor(t, 10*time.Second, "/monitor/statistics to show the executor and its task process", func() bool {
		resp, err := http.Get("http://" + c.Agents[0].Addr + "/monitor/statistics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		stats = nil
		json.NewDecoder(resp.Body).Decode(&stats)
		return len(stats) == 1 && stats[0].ExecutorID == "busy" && stats[0].Statistics.Processes >= 2 && stats[0].Statistics.MemRSSBytes > 0
	})
	testcluster.WaitFor(t, 10*time.Second, "the master's /state to carry the agent's usage report", func() bool {
		resp, err := http.Get("http://" + c.MasterAddr + "/state")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var st operator.State
		json.NewDecoder(resp.Body).Decode(&st)
		return len(st.Slaves) == 1 && st.Slaves[0].Usage != nil && st.Slaves[0].Usage.MemTotalBytes > 0 &&
			len(st.Slaves[0].Usage.Executors) == 1 && st.Slaves[0].Usage.Executors[0].ExecutorId == "busy"
	})
}

// A status update the framework does not acknowledge is sent again (same
// uuid) until it is; after the acknowledgement the next one follows.
func TestUpdatesRetriedUntilAcknowledged(t *testing.T) {
	c := newCluster(t, 1)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "forgetful"})
	fw.mu.Lock()
	fw.noAck = true
	fw.mu.Unlock()
	o := fw.takeOfferFits(t, 1, 256)
	if err := fw.call(launch(o, cmdTask("once", o, "true", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	var running []mesos.TaskStatus
	testcluster.WaitFor(t, 20*time.Second, "TASK_RUNNING delivered twice", func() bool {
		fw.mu.Lock()
		defer fw.mu.Unlock()
		running = running[:0]
		for _, u := range fw.updates {
			if u.TaskID.Value == "once" && u.GetState() == mesos.TASK_RUNNING {
				running = append(running, u)
			}
		}
		return len(running) >= 2
	})
	if string(running[0].UUID) != string(running[1].UUID) {
		t.Fatalf("retry carries a different uuid")
	}
	if s := fw.states("once"); len(s) != len(running) {
		t.Fatalf("states = %v: FINISHED was sent before RUNNING was acknowledged", s)
	}
	if err := fw.call(calls.Acknowledge(o.AgentID.Value, "once", running[0].UUID)); err != nil {
		t.Fatal(err)
	}
	fin := fw.waitState(t, "once", mesos.TASK_FINISHED)
	if err := fw.call(calls.Acknowledge(o.AgentID.Value, "once", fin.UUID)); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, 10*time.Second, "the agent to drop the acknowledged task", func() bool {
		st, err := agentState(c.Agents[0].Addr)
		return err == nil && st["tasks"] == nil
	})
}

// With --offer-timeout an unanswered offer is rescinded and its resources
// offered again; a launch on the rescinded offer is lost, not run.
func TestOfferTimeoutRescinds(t *testing.T) {
	c := newCluster(t, 1, "--offer-timeout", "300ms")
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "slow"})
	o := fw.takeOffer(t, "")
	testcluster.WaitFor(t, 10*time.Second, "RESCIND", func() bool {
		fw.mu.Lock()
		defer fw.mu.Unlock()
		for _, e := range fw.events {
			if e == scheduler.Event_RESCIND {
				return true
			}
		}
		return false
	})
	// As Mesos: the ACCEPT is answered 202 and its task reported lost with
	// REASON_INVALID_OFFERS (TASK_DROPPED for partition-aware frameworks).
	if err := fw.call(launch(o, cmdTask("late", o, "true", 0.1, 32))); err != nil {
		t.Fatalf("ACCEPT of a rescinded offer answered %v, want 202", err)
	}
	if st := fw.waitState(t, "late", mesos.TASK_LOST); st.GetReason() != mesos.REASON_INVALID_OFFERS {
		t.Errorf("the late task is TASK_LOST with %v, want REASON_INVALID_OFFERS", st.GetReason())
	}
	fw.takeOffer(t, "") // the resources come back
}

// An executor that never subscribes to the executor API is killed after
// --executor-registration-timeout and its task fails with that reason.
func TestExecutorRegistrationTimeout(t *testing.T) {
	c := newCluster(t, 1)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "mute"})
	o := fw.takeOfferFits(t, 1, 256)
	sh := "sleep 300"
	ex := &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "mute-ex"}, Type: mesos.ExecutorInfo_CUSTOM,
		Command: &mesos.CommandInfo{Value: &sh}}
	if err := fw.call(launch(o, execTask("waits", o, ex, ""))); err != nil {
		t.Fatal(err)
	}
	st := fw.waitState(t, "waits", mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_EXECUTOR_REGISTRATION_TIMEOUT {
		t.Errorf("reason = %v, want REASON_EXECUTOR_REGISTRATION_TIMEOUT", st.GetReason())
	}
	if got := fw.states("waits"); len(got) != 1 {
		t.Errorf("states = %v, want only FAILED", got)
	}
	defer func() {
		for _, p := range sandboxPids(c.Dir, "mute-ex") {
			st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
			cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p))
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
			t.Logf("left behind: pid %d cmd %q\n%s\n%s", p, cmd, st[:200], cg)
		}
	}()
	testcluster.WaitFor(t, 10*time.Second, "the mute executor's processes to be gone", func() bool { return len(sandboxPids(c.Dir, "mute-ex")) == 0 })
}
