package integration

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	gogotypes "github.com/gogo/protobuf/types"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpmaster"
	mmaint "github.com/mesos/mesos-go/api/v1/lib/maintenance"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	mcalls "github.com/mesos/mesos-go/api/v1/lib/master/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// operatorSender is mesos-go's operator client for the cluster's master.
func operatorSender(c *cluster) mcalls.Sender {
	return httpmaster.NewSender(httpcli.New(httpcli.Endpoint("http://"+c.MasterAddr+"/api/v1"), httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeJSON])).Send)
}

// sendNoData sends an operator call that answers no data.
func sendNoData(t *testing.T, cli mcalls.Sender, call *mmaster.Call) {
	t.Helper()
	resp, err := cli.Send(context.Background(), mcalls.NonStreaming(call))
	if err != nil {
		t.Fatalf("%v: %v", call.Type, err)
	}
	if resp != nil {
		resp.Close()
	}
}

// A drain of an agent running tasks kills them with their kill policy, the
// grace period capped by max_grace_period (a task that ignores SIGTERM and
// asks a minute is killed within the cap), offers nothing of the agent
// meanwhile, and ends with the agent DRAINED.
func TestDrainAgentKillsTasksAndEndsDrained(t *testing.T) {
	c := newCluster(t, 1)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "drained"})
	o := fw.takeOffer(t, "")
	agentID := o.AgentID.Value
	stubborn := cmdTask("stubborn", o, "trap '' TERM; sleep 600", 0.1, 32)
	stubborn.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(time.Minute)}}
	plain := cmdTask("plain", o, "sleep 600", 0.1, 32)
	if err := fw.call(launch(o, stubborn, plain)); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "stubborn", mesos.TASK_RUNNING)
	fw.waitState(t, "plain", mesos.TASK_RUNNING)

	cli := operatorSender(c)
	get := operatorGetter(t, cli)
	sendNoData(t, cli, &mmaster.Call{Type: mmaster.Call_DRAIN_AGENT, DrainAgent: &mmaster.Call_DrainAgent{
		AgentID: mesos.AgentID{Value: agentID}, MaxGracePeriod: &gogotypes.Duration{Seconds: 2}}})
	fw.waitState(t, "plain", mesos.TASK_KILLED)
	fw.waitState(t, "stubborn", mesos.TASK_KILLED) // within the wait: its minute was capped at 2 s
	testcluster.WaitFor(t, 30*time.Second, "the agent to be DRAINED", func() bool {
		for _, a := range get(mcalls.GetAgents()).GetAgents.Agents {
			if a.AgentInfo.ID.Value == agentID {
				return a.GetDrainInfo().GetState() == mesos.DrainState_DRAINED && a.GetDeactivated()
			}
		}
		return false
	})
	fw.mu.Lock()
	offers := len(fw.offers)
	fw.mu.Unlock()
	if offers != 0 {
		t.Fatalf("the framework holds %d offers of a drained agent", offers)
	}
	if st := c.state(); len(st.Slaves) != 1 || st.Slaves[0].State != "drained" || st.Slaves[0].Active {
		t.Fatalf("/state agent %+v, want state drained, not active", st.Slaves)
	}
	// The CLI shows the state and reactivates the agent by a prefix of its id.
	if code, out, errOut := allotCLI(t, c.MasterAddr, "agents"); code != 0 || !strings.Contains(out, "drained") {
		t.Fatalf("allot agents: exit %d, %q %q, want the agent drained", code, out, errOut)
	}
	if code, out, errOut := allotCLI(t, c.MasterAddr, "agent", "reactivate", agentID[:len(agentID)-1]); code != 0 || !strings.Contains(out, "REACTIVATE_AGENT done") {
		t.Fatalf("allot agent reactivate: exit %d, %q %q", code, out, errOut)
	}
	if code, out, errOut := allotCLI(t, c.MasterAddr, "agent", "reactivate", agentID); code == 0 || !strings.Contains(errOut, "Agent is not deactivated") {
		t.Fatalf("allot agent reactivate of an active agent: exit %d, %q %q, want Mesos's 400", code, out, errOut)
	}
	fw.takeOffer(t, agentID)
}

// A maintenance window over the machine of an agent running a task gives
// its framework an inverse offer with the window's unavailability; offers
// of the agent carry it too, and GET_MAINTENANCE_STATUS lists the machine
// DRAINING.
func TestMaintenanceWindowSendsInverseOffers(t *testing.T) {
	c := newCluster(t, 1)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "maintained"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("busy", o, "sleep 600", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "busy", mesos.TASK_RUNNING)
	ag := c.state().Slaves[0]
	ip, _, err := net.SplitHostPort(strings.TrimPrefix(ag.PID, "slave(1)@"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(time.Hour).UnixNano()
	cli := operatorSender(c)
	sendNoData(t, cli, &mmaster.Call{Type: mmaster.Call_UPDATE_MAINTENANCE_SCHEDULE, UpdateMaintenanceSchedule: &mmaster.Call_UpdateMaintenanceSchedule{
		Schedule: mmaint.Schedule{Windows: []mmaint.Window{{MachineIDs: []mesos.MachineID{{Hostname: &ag.Hostname, IP: &ip}},
			Unavailability: mesos.Unavailability{Start: mesos.TimeInfo{Nanoseconds: start}, Duration: &mesos.DurationInfo{Nanoseconds: int64(time.Hour)}}}}}}})
	testcluster.WaitFor(t, 30*time.Second, "an inverse offer with the window's unavailability", func() bool {
		fw.mu.Lock()
		defer fw.mu.Unlock()
		for _, io := range fw.inverse {
			if io.AgentID.GetValue() == o.AgentID.Value && io.Unavailability.Start.Nanoseconds == start &&
				io.Unavailability.Duration.GetNanoseconds() == int64(time.Hour) {
				return true
			}
		}
		return false
	})
	testcluster.WaitFor(t, 30*time.Second, "an offer carrying the unavailability", func() bool {
		fw.mu.Lock()
		defer fw.mu.Unlock()
		for _, of := range fw.offers {
			if of.Unavailability != nil && of.Unavailability.Start.Nanoseconds == start {
				return true
			}
		}
		return false
	})
	st := operatorGetter(t, cli)(&mmaster.Call{Type: mmaster.Call_GET_MAINTENANCE_STATUS}).GetMaintenanceStatus.Status
	if len(st.DrainingMachines) != 1 || st.DrainingMachines[0].ID.GetIP() != ip || len(st.DrainingMachines[0].Statuses) != 1 {
		t.Fatalf("GET_MAINTENANCE_STATUS %+v, want the machine DRAINING with the framework's status", st)
	}
	// The schedule is in the registry: a restarted master still has it.
	c.Master.Kill(syscall.SIGKILL)
	fw.close()
	c.StartMaster()
	w := operatorGetter(t, cli)(&mmaster.Call{Type: mmaster.Call_GET_MAINTENANCE_SCHEDULE}).GetMaintenanceSchedule.Schedule.Windows
	if len(w) != 1 || w[0].Unavailability.Start.Nanoseconds != start || w[0].MachineIDs[0].GetIP() != ip {
		t.Fatalf("schedule after a master restart: %+v", w)
	}
}

// The agents page shows each agent's state and a button for the
// maintenance call that fits it; the master's ACLs decide. Under ACLs that
// deny every DRAIN_AGENT, an agent deactivated through the operator API
// shows "deactivated" with a Reactivate button, which works; its Drain
// button then shows the master's 403 naming the ACL, and the agent stays
// active.
func TestWebUIDrainButtonIsACLChecked(t *testing.T) {
	ctx := browser(t)
	acls := filepath.Join(t.TempDir(), "acls.json")
	if err := os.WriteFile(acls, []byte(`{"drain_agents": [{"principals": {"type": "NONE"}, "agents": {"type": "ANY"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, 1, "--acls", acls)
	c.WaitAgents(1)
	id := c.state().Slaves[0].ID
	sendNoData(t, operatorSender(c), &mmaster.Call{Type: mmaster.Call_DEACTIVATE_AGENT, DeactivateAgent: &mmaster.Call_DeactivateAgent{AgentID: mesos.AgentID{Value: id}}})
	base := "http://" + c.MasterAddr
	run(t, ctx, "agents page", chromedp.Navigate(base+"/agents"), waitText("#agents", "deactivated"), chromedp.WaitVisible("#reactivate-"+id, chromedp.ByID))
	run(t, ctx, "reactivate", chromedp.Click("#reactivate-"+id, chromedp.ByID), waitText("#agents-result", "REACTIVATE_AGENT of "+id+": done"),
		chromedp.WaitVisible("#drain-"+id, chromedp.ByID), waitText("#agents", "active"))
	run(t, ctx, "drain refused", chromedp.Click("#drain-"+id, chromedp.ByID), waitText("#agents-result", "403"), waitText("#agents-result", "drain_agents[0]"))
	screenshot(t, ctx, "agents-drain-refused")
	if st := c.state().Slaves[0]; st.State != "active" || st.DrainInfo != nil {
		t.Fatalf("after a refused drain /state shows %+v, want the agent active and not draining", st)
	}
}
