package integration

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpmaster"
	mcalls "github.com/mesos/mesos-go/api/v1/lib/master/calls"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/internal/testcluster"
)

// partitionAware is a checkpointing framework with the PARTITION_AWARE
// capability.
func partitionAware(name string) mesos.FrameworkInfo {
	info := checkpointing(name)
	info.Capabilities = []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE}}
	return info
}

// failedAgents lists the agent ids of the FAILURE events s heard without an
// executor (an agent lost).
func (s *sched) failedAgents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, f := range s.failures {
		if f.ExecutorID == nil {
			out = append(out, f.GetAgentID().GetValue())
		}
	}
	return out
}

// An agent that stops answering (killed; its checkpointed executors keep
// running) past --agent-ping-timeout is marked unreachable: the
// partition-aware framework hears TASK_UNREACHABLE, the other TASK_LOST,
// both FAILURE naming the agent, and /state lists it unreachable. Back on
// the same work dir it re-registers under its id: the partition-aware task
// is TASK_RUNNING again (REASON_AGENT_REREGISTERED), the other's, whose end
// was heard, is killed and never heard of again. MARK_AGENT_GONE then ends
// the agent: TASK_GONE_BY_OPERATOR, and the agent, refused under its id,
// kills its executors and registers afresh.
func TestPartitionAwareUnreachableBackThenGone(t *testing.T) {
	c := newCluster(t, 1, "--agent-ping-timeout", "3s")
	a := c.Agents[0]
	pa := subscribe(t, c.MasterAddr, partitionAware("aware"))
	np := subscribe(t, c.MasterAddr, checkpointing("unaware"))
	o := pa.takeOffer(t, "")
	agentID := o.AgentID.Value
	if err := pa.call(launch(o, cmdTask("pa", o, "sleep 600", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	o2 := np.takeOffer(t, agentID)
	if err := np.call(launch(o2, cmdTask("np", o2, "sleep 600", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	pa.waitState(t, "pa", mesos.TASK_RUNNING)
	np.waitState(t, "np", mesos.TASK_RUNNING)

	a.Kill(syscall.SIGKILL)
	checkUnreachable(t, c, pa, np, agentID)
	c.StartAgent(a)
	checkBack(t, c, pa, agentID)
	markGone(t, c, pa, agentID)

	// Whatever the master sent before the answers to these reconciliations
	// reached the frameworks before them.
	for _, s := range []*sched{pa, np} {
		if err := s.call(&scheduler.Call{Type: scheduler.Call_RECONCILE, Reconcile: &scheduler.Call_Reconcile{
			Tasks: []scheduler.Call_Reconcile_Task{{TaskID: mesos.TaskID{Value: "sentinel"}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	pa.waitState(t, "sentinel", mesos.TASK_UNKNOWN)
	np.waitState(t, "sentinel", mesos.TASK_LOST)
	// A status update may arrive twice (the agent resends one whose
	// acknowledgement it has not seen yet, as Mesos's agents do), so
	// repeats of a state in a row count once.
	if got, want := slices.Compact(pa.states("pa")), []mesos.TaskState{mesos.TASK_RUNNING, mesos.TASK_UNREACHABLE, mesos.TASK_RUNNING, mesos.TASK_GONE_BY_OPERATOR}; !slices.Equal(got, want) {
		t.Errorf("the partition-aware framework heard %v, want %v", got, want)
	}
	if got, want := slices.Compact(np.states("np")), []mesos.TaskState{mesos.TASK_RUNNING, mesos.TASK_LOST}; !slices.Equal(got, want) {
		t.Errorf("the other framework heard %v, want %v", got, want)
	}
}

// checkUnreachable waits for what the frameworks hear of the lost agent:
// TASK_UNREACHABLE, TASK_LOST, FAILURE; and /state lists it unreachable.
func checkUnreachable(t *testing.T, c *cluster, pa, np *sched, agentID string) {
	t.Helper()
	un := pa.waitState(t, "pa", mesos.TASK_UNREACHABLE)
	if un.GetReason() != mesos.REASON_AGENT_REMOVED || un.GetUnreachableTime() == nil {
		t.Errorf("TASK_UNREACHABLE with reason %v unreachable_time %v, want REASON_AGENT_REMOVED and a time", un.GetReason(), un.GetUnreachableTime())
	}
	if lost := np.waitState(t, "np", mesos.TASK_LOST); lost.GetReason() != mesos.REASON_AGENT_REMOVED {
		t.Errorf("TASK_LOST with reason %v, want REASON_AGENT_REMOVED", lost.GetReason())
	}
	for _, s := range []*sched{pa, np} {
		testcluster.WaitFor(t, 10*time.Second, "FAILURE naming the agent", func() bool { return slices.Contains(s.failedAgents(), agentID) })
	}
	st := c.state()
	if st.UnreachableSlaves != 1 || len(st.UnreachableAgents) != 1 || st.UnreachableAgents[0].ID != agentID || st.UnreachableAgents[0].State != "unreachable" {
		t.Errorf("/state: unreachable_slaves %d, unreachable_agents %+v; want the agent, unreachable", st.UnreachableSlaves, st.UnreachableAgents)
	}
}

// checkBack waits for the agent's return: pa's task RUNNING again
// (REASON_AGENT_REREGISTERED) and still running, np's killed, the agent
// active under its id.
func checkBack(t *testing.T, c *cluster, pa *sched, agentID string) {
	t.Helper()
	testcluster.WaitFor(t, 30*time.Second, "pa RUNNING again", func() bool {
		return slices.Equal(pa.states("pa"), []mesos.TaskState{mesos.TASK_RUNNING, mesos.TASK_UNREACHABLE, mesos.TASK_RUNNING})
	})
	var back mesos.TaskStatus
	pa.mu.Lock()
	for _, u := range pa.updates {
		if u.TaskID.Value == "pa" {
			back = u
		}
	}
	pa.mu.Unlock()
	if back.GetReason() != mesos.REASON_AGENT_REREGISTERED || back.GetAgentID().GetValue() != agentID {
		t.Errorf("RUNNING again with reason %v on agent %s, want REASON_AGENT_REREGISTERED on %s", back.GetReason(), back.GetAgentID().GetValue(), agentID)
	}
	testcluster.WaitFor(t, 30*time.Second, "np's process to be killed", func() bool {
		return len(sandboxPids(c.Dir, "np")) == 0
	})
	if len(sandboxPids(c.Dir, "pa")) == 0 {
		t.Error("pa's process is gone, want it running")
	}
	if st := c.state(); st.UnreachableSlaves != 0 || len(st.Slaves) != 1 || st.Slaves[0].ID != agentID || !st.Slaves[0].Active {
		t.Errorf("/state after the return: unreachable_slaves %d, slaves %+v; want the agent active under %s", st.UnreachableSlaves, st.Slaves, agentID)
	}
}

// markGone sends MARK_AGENT_GONE with mesos-go's operator client and waits
// for pa's TASK_GONE_BY_OPERATOR and the agent, refused, to kill its
// executors and register afresh.
func markGone(t *testing.T, c *cluster, pa *sched, agentID string) {
	t.Helper()
	cli := httpmaster.NewSender(httpcli.New(httpcli.Endpoint("http://"+c.MasterAddr+"/api/v1"), httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeJSON])).Send)
	resp, err := cli.Send(context.Background(), mcalls.NonStreaming(mcalls.MarkAgentGone(mesos.AgentID{Value: agentID})))
	if err != nil {
		t.Fatalf("MARK_AGENT_GONE: %v", err)
	}
	if resp != nil {
		resp.Close()
	}
	if gone := pa.waitState(t, "pa", mesos.TASK_GONE_BY_OPERATOR); gone.GetReason() != mesos.REASON_AGENT_REMOVED_BY_OPERATOR {
		t.Errorf("TASK_GONE_BY_OPERATOR with reason %v, want REASON_AGENT_REMOVED_BY_OPERATOR", gone.GetReason())
	}
	testcluster.WaitFor(t, 30*time.Second, "the gone agent's executors to be killed", func() bool {
		return len(sandboxPids(c.Dir, "")) == 0
	})
	testcluster.WaitFor(t, 30*time.Second, "the agent to register afresh under a new id", func() bool {
		st := c.state()
		return len(st.Slaves) == 1 && st.Slaves[0].Active && st.Slaves[0].ID != agentID
	})
}

// An agent that stops answering without its connection breaking (SIGSTOP:
// the kernel keeps the TCP connection up) is marked unreachable once the
// master has heard nothing from it for --agent-ping-timeout; resumed, it
// finds its stream closed, re-registers under its id, and the
// partition-aware framework hears its task RUNNING again.
func TestStoppedAgentIsUnreachableUntilResumed(t *testing.T) {
	c := newCluster(t, 1, "--agent-ping-timeout", "3s")
	a := c.Agents[0]
	pa := subscribe(t, c.MasterAddr, partitionAware("aware"))
	o := pa.takeOffer(t, "")
	if err := pa.call(launch(o, cmdTask("pa", o, "sleep 600", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	pa.waitState(t, "pa", mesos.TASK_RUNNING)

	pid := a.Cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	if un := pa.waitState(t, "pa", mesos.TASK_UNREACHABLE); un.GetReason() != mesos.REASON_AGENT_REMOVED {
		t.Errorf("TASK_UNREACHABLE with reason %v, want REASON_AGENT_REMOVED", un.GetReason())
	}
	testcluster.WaitFor(t, 10*time.Second, "FAILURE naming the agent", func() bool { return slices.Contains(pa.failedAgents(), o.AgentID.Value) })
	resume()
	testcluster.WaitFor(t, 30*time.Second, "pa RUNNING again", func() bool {
		return slices.Equal(pa.states("pa"), []mesos.TaskState{mesos.TASK_RUNNING, mesos.TASK_UNREACHABLE, mesos.TASK_RUNNING})
	})
	if st := c.state(); st.UnreachableSlaves != 0 || len(st.Slaves) != 1 || st.Slaves[0].ID != o.AgentID.Value || !st.Slaves[0].Active {
		t.Errorf("/state after the resume: unreachable_slaves %d, slaves %+v; want the agent active under its id", st.UnreachableSlaves, st.Slaves)
	}
}
