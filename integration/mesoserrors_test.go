package integration

import (
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// Errors a Mesos client must survive, as mesos-go's client sees them: a
// bad ACCEPT is answered 202 and status updates, and a kill is reported
// TASK_KILLING to a framework that asked for it.
func TestAcceptErrorsAsUpdates(t *testing.T) {
	c := newCluster(t, 1)
	t.Run("invalid tasks", func(t *testing.T) { acceptInvalidTasks(t, c) })
	t.Run("declined offer", func(t *testing.T) { acceptDeclinedOffer(t, c, false) })
	t.Run("declined offer, partition aware", func(t *testing.T) { acceptDeclinedOffer(t, c, true) })
	t.Run("task killing", func(t *testing.T) { taskKillingState(t, c) })
}

// acceptInvalidTasks: one ACCEPT holds a task bigger than its offer, a
// DOCKER task and a good task. The call answers 202 (mesos-go returns no
// error), the two are TASK_ERROR
// (REASON_TASK_INVALID) with messages naming why, and the good one runs.
func acceptInvalidTasks(t *testing.T, c *cluster) {
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "errors"})
	o := fw.takeOfferFits(t, 1, 256)
	docker := mesos.ContainerInfo_DOCKER
	big := cmdTask("big", o, "true", 1000, 32)
	img := cmdTask("docker", o, "true", 0.1, 32)
	img.Container = &mesos.ContainerInfo{Type: &docker, Docker: &mesos.ContainerInfo_DockerInfo{Image: "busybox"}}
	if err := fw.call(launch(o, big, img, cmdTask("good", o, "true", 0.1, 32))); err != nil {
		t.Fatalf("ACCEPT answered %v, want 202", err)
	}
	for id, want := range map[string]string{
		"big":    "required by task and its executor is more than available",
		"docker": "the DOCKER containerizer needs a Docker daemon and no Docker daemon is configured",
	} {
		st := fw.waitState(t, id, mesos.TASK_ERROR)
		if st.GetReason() != mesos.REASON_TASK_INVALID || st.GetSource() != mesos.SOURCE_MASTER || !strings.Contains(st.GetMessage(), want) {
			t.Errorf("%s: TASK_ERROR %v %v %q, want REASON_TASK_INVALID from the master with %q", id, st.GetReason(), st.GetSource(), st.GetMessage(), want)
		}
	}
	fw.waitState(t, "good", mesos.TASK_FINISHED)
	for _, id := range []string{"big", "docker"} {
		if s := fw.states(id); len(s) != 1 {
			t.Errorf("%s: updates %v, want only TASK_ERROR (it never ran)", id, s)
		}
	}
}

// acceptDeclinedOffer: an ACCEPT of an offer declined just before (the
// race with a rescind) answers 202 and its task TASK_LOST, or
// TASK_DROPPED for a PARTITION_AWARE framework, REASON_INVALID_OFFERS.
func acceptDeclinedOffer(t *testing.T, c *cluster, pa bool) {
	info := mesos.FrameworkInfo{Name: "late"}
	want := mesos.TASK_LOST
	if pa {
		info.Capabilities = []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE}}
		want = mesos.TASK_DROPPED
	}
	fw := subscribe(t, c.MasterAddr, info)
	o := fw.takeOfferFits(t, 0.1, 32)
	if err := fw.call(declineCall(o)); err != nil {
		t.Fatal(err)
	}
	if err := fw.call(launch(o, cmdTask("late", o, "true", 0.1, 32))); err != nil {
		t.Fatalf("ACCEPT of a declined offer answered %v, want 202", err)
	}
	st := fw.waitState(t, "late", want)
	if st.GetReason() != mesos.REASON_INVALID_OFFERS || !strings.Contains(st.GetMessage(), "Task launched with invalid offers: Offer "+o.ID.Value+" is no longer valid") {
		t.Errorf("%v %v %q, want REASON_INVALID_OFFERS naming the offer", want, st.GetReason(), st.GetMessage())
	}
}

// taskKillingState: a framework that declared TASK_KILLING_STATE sees
// TASK_KILLING between TASK_RUNNING and TASK_KILLED; one that did not
// sees none.
func taskKillingState(t *testing.T, c *cluster) {
	for _, declared := range []bool{true, false} {
		info := mesos.FrameworkInfo{Name: "killer"}
		want := "TASK_RUNNING TASK_KILLED"
		if declared {
			info.Capabilities = []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_TASK_KILLING_STATE}}
			want = "TASK_RUNNING TASK_KILLING TASK_KILLED"
		}
		fw := subscribe(t, c.MasterAddr, info)
		o := fw.takeOfferFits(t, 0.1, 32)
		if err := fw.call(launch(o, cmdTask("victim", o, "sleep 60", 0.1, 32))); err != nil {
			t.Fatal(err)
		}
		fw.waitState(t, "victim", mesos.TASK_RUNNING)
		if err := fw.call(calls.Kill("victim", o.AgentID.Value)); err != nil {
			t.Fatal(err)
		}
		fw.waitState(t, "victim", mesos.TASK_KILLED)
		var got []string
		for _, s := range fw.states("victim") {
			got = append(got, s.String())
		}
		if strings.Join(got, " ") != want {
			t.Errorf("TASK_KILLING_STATE declared %v: updates %v, want %s", declared, got, want)
		}
		fw.close()
	}
}

// An update nobody acknowledges is resent after the agent's first retry
// interval, then after twice the previous wait, up to the longest (here
// 2 s and 3 s instead of Mesos's 10 s and 10 min). The gaps are checked
// from below only: an early resend is the bug; a late one is a loaded
// host.
func TestStatusUpdateRetryBackoff(t *testing.T) {
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1,
		MasterFlags: []string{"--log-level", "debug"},
		AgentFlags:  []string{"--log-level", "debug", "--status-update-retry-interval", "2s", "--status-update-retry-max", "3s"}})}
	var mu sync.Mutex
	var running []time.Time
	fw := subscribeWith(t, newCaller(c.MasterAddr, "protobuf"), mesos.FrameworkInfo{Name: "deaf"}, func(st mesos.TaskStatus) {
		if st.TaskID.Value == "deaf" && st.GetState() == mesos.TASK_RUNNING {
			mu.Lock()
			running = append(running, time.Now())
			mu.Unlock()
		}
	})
	fw.mu.Lock()
	fw.noAck = true
	fw.mu.Unlock()
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("deaf", o, "sleep 60", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	testcluster.WaitFor(t, 60*time.Second, "TASK_RUNNING sent five times", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(running) >= 5
	})
	mu.Lock()
	defer mu.Unlock()
	// A gap falls short of the agent's backoff only by how much longer
	// the earlier copy took to arrive than the later one: the margin.
	for i, min := range []time.Duration{2 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second} {
		if gap := running[i+1].Sub(running[i]); gap < min-500*time.Millisecond {
			t.Errorf("resend %d came %v after the one before, want at least %v", i+1, gap, min)
		}
	}
}
