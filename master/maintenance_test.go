package master

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mallocator "github.com/mesos/mesos-go/api/v1/lib/allocator"
	mmaint "github.com/mesos/mesos-go/api/v1/lib/maintenance"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

func machine(host, ip string) mesos.MachineID {
	return mesos.MachineID{Hostname: &host, IP: &ip}
}

func scheduleCall(windows ...mmaint.Window) *mmaster.Call {
	return &mmaster.Call{Type: mmaster.Call_UPDATE_MAINTENANCE_SCHEDULE,
		UpdateMaintenanceSchedule: &mmaster.Call_UpdateMaintenanceSchedule{Schedule: mmaint.Schedule{Windows: windows}}}
}

func window(start int64, ids ...mesos.MachineID) mmaint.Window {
	return mmaint.Window{MachineIDs: ids, Unavailability: mesos.Unavailability{Start: mesos.TimeInfo{Nanoseconds: start},
		Duration: &mesos.DurationInfo{Nanoseconds: 3600e9}}}
}

func TestMaintenanceCallsRejectWhatMesosRejects(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("cpus:4;mem:4096")
	neg := window(1, machine("x", ""))
	neg.Unavailability.Duration = &mesos.DurationInfo{Nanoseconds: -1}
	start := func(ids ...mesos.MachineID) *mmaster.Call {
		return &mmaster.Call{Type: mmaster.Call_START_MAINTENANCE, StartMaintenance: &mmaster.Call_StartMaintenance{Machines: ids}}
	}
	tests := []struct {
		name string
		call *mmaster.Call
		want string
	}{
		{"empty window", scheduleCall(mmaint.Window{}), "List of machines in the maintenance window is empty"},
		{"negative duration", scheduleCall(neg), "Unavailability 'duration' is negative"},
		{"machine twice", scheduleCall(window(1, machine("a", ""), machine("A", ""))), "appears more than once in the schedule"},
		{"machine without name", scheduleCall(window(1, mesos.MachineID{})), "Both 'hostname' and 'ip' for a machine are empty"},
		{"bad ip", scheduleCall(window(1, machine("", "300.1.1.1"))), "Failed to parse IP"},
		{"no body", &mmaster.Call{Type: mmaster.Call_UPDATE_MAINTENANCE_SCHEDULE}, "Expecting 'update_maintenance_schedule' to be present"},
		{"start nothing", start(), "List of machines is empty"},
		{"start unscheduled", start(machine("elsewhere", "10.0.0.9")), `Machine '{"hostname":"elsewhere","ip":"10.0.0.9"}' is not part of a maintenance schedule`},
		{"start UP machine", start(machine("agent", "127.0.0.1")), "is not in DRAINING mode and cannot be brought down"},
		{"stop UP machine", &mmaster.Call{Type: mmaster.Call_STOP_MAINTENANCE, StopMaintenance: &mmaster.Call_StopMaintenance{
			Machines: []mesos.MachineID{machine("agent", "127.0.0.1")}}}, "is not in DOWN mode and cannot be brought up"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.operator(tc.call)
			if he, ok := err.(*api.HTTPError); !ok || he.Code != 400 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want 400 containing %q", err, tc.want)
			}
		})
	}
}

// A window over the agent's machine: its offers carry the unavailability,
// the framework running a task there gets an inverse offer with it, whose
// answer GET_MAINTENANCE_STATUS reports; START_MAINTENANCE removes the
// agent (its task TASK_LOST) and refuses it; STOP_MAINTENANCE lets it back.
func TestMaintenanceWindowDownAndUp(t *testing.T) {
	h := newHarness(t, nil)
	agentID, _ := h.agent("cpus:4;mem:4096")
	fw := h.framework("maint")
	h.runningTasks(fw, agentID, commandTask("t1", agentID, 1, 512))
	m := machine("agent", "127.0.0.1")
	startNs := h.clock.Now().UnixNano() + 3600e9
	if _, err := h.operator(scheduleCall(window(startNs, m))); err != nil {
		t.Fatalf("UPDATE_MAINTENANCE_SCHEDULE: %v", err)
	}
	h.allocate()
	ios, offers := h.cycleOffers(fw)
	io := ios[0]
	if io.AgentID.GetValue() != agentID || io.Unavailability.Start.Nanoseconds != startNs || io.Unavailability.Duration.GetNanoseconds() != 3600e9 {
		t.Fatalf("inverse offer %v, want agent %s with the window's unavailability", io, agentID)
	}
	if u := offers[0].Unavailability; u == nil || u.Start.Nanoseconds != startNs {
		t.Fatalf("offer of a DRAINING agent carries unavailability %v, want the window's", u)
	}
	if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_DECLINE_INVERSE_OFFERS, DeclineInverseOffers: &scheduler.Call_DeclineInverseOffers{
		InverseOfferIDs: []mesos.OfferID{io.OfferID}}}); err != nil {
		t.Fatal(err)
	}
	resp, err := h.operator(&mmaster.Call{Type: mmaster.Call_GET_MAINTENANCE_STATUS})
	if err != nil {
		t.Fatal(err)
	}
	st := resp.GetMaintenanceStatus.Status
	if len(st.DrainingMachines) != 1 || len(st.DrainingMachines[0].Statuses) != 1 ||
		st.DrainingMachines[0].Statuses[0].GetStatus() != mallocator.InverseOfferStatus_DECLINE {
		t.Fatalf("GET_MAINTENANCE_STATUS %v, want the machine draining with the framework's DECLINE", st)
	}

	if _, err := h.operator(&mmaster.Call{Type: mmaster.Call_START_MAINTENANCE, StartMaintenance: &mmaster.Call_StartMaintenance{Machines: []mesos.MachineID{m}}}); err != nil {
		t.Fatalf("START_MAINTENANCE: %v", err)
	}
	for {
		u := fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
		if u.TaskID.Value == "t1" && u.GetState() == mesos.TASK_LOST {
			if u.GetReason() != mesos.REASON_AGENT_REMOVED || u.GetMessage() != "Operator initiated 'Machine DOWN'" {
				t.Fatalf("t1 lost with %v %q", u.GetReason(), u.GetMessage())
			}
			break
		}
	}
	s := newFakeStream(t, api.Protobuf)
	_, err = h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER, Agent: &api.AgentRecord{Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4"}}, s.Stream)
	if err == nil || !strings.Contains(err.Error(), "DOWN for maintenance") {
		t.Fatalf("agent of a DOWN machine registered: %v", err)
	}
	if _, err := h.operator(scheduleCall()); err == nil || !strings.Contains(err.Error(), "is deactivated and cannot be removed from the schedule") {
		t.Fatalf("schedule without the DOWN machine: %v", err)
	}
	if _, err := h.operator(&mmaster.Call{Type: mmaster.Call_STOP_MAINTENANCE, StopMaintenance: &mmaster.Call_StopMaintenance{Machines: []mesos.MachineID{m}}}); err != nil {
		t.Fatalf("STOP_MAINTENANCE: %v", err)
	}
	resp, err = h.operator(&mmaster.Call{Type: mmaster.Call_GET_MAINTENANCE_SCHEDULE})
	if err != nil || len(resp.GetMaintenanceSchedule.Schedule.Windows) != 0 {
		t.Fatalf("schedule after STOP_MAINTENANCE: %v %v, want empty", resp, err)
	}
	if _, err := h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER, Agent: &api.AgentRecord{Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:4"}}, s.Stream); err != nil {
		t.Fatalf("agent of a machine brought UP refused: %v", err)
	}
}

// The maintenance state survives a new leader: it is rebuilt from the
// registry's record.
func TestMaintenanceStateRebuiltFromRegistry(t *testing.T) {
	h := newHarness(t, nil)
	agentID, _ := h.agent("cpus:4;mem:4096")
	if _, err := h.operator(scheduleCall(window(5, machine("other", "10.0.0.2")))); err != nil {
		t.Fatal(err)
	}
	if _, err := h.operator(&mmaster.Call{Type: mmaster.Call_DEACTIVATE_AGENT, DeactivateAgent: &mmaster.Call_DeactivateAgent{AgentID: mesos.AgentID{Value: agentID}}}); err != nil {
		t.Fatal(err)
	}
	h.m.mu.Lock()
	want := h.m.maint.record()
	h.m.resetLiveLocked("test: new term")
	h.m.recoverLocked()
	got := h.m.maint.record()
	h.m.mu.Unlock()
	if len(got.Schedule) == 0 || !got.Agents[agentID].GetDeactivated() || string(got.Schedule) != string(want.Schedule) {
		t.Fatalf("rebuilt maintenance record %v, want %v", got, want)
	}
}

// cycleOffers reads one cycle's OFFERS and INVERSE_OFFERS, in whichever
// order they come.
func (h *harness) cycleOffers(fw *fakeFramework) ([]mesos.InverseOffer, []mesos.Offer) {
	h.t.Helper()
	t := h.t
	var ios []mesos.InverseOffer
	var offers []mesos.Offer
	for ios == nil || offers == nil {
		fw.take(t, "OFFERS and INVERSE_OFFERS", func(b []byte) bool {
			var ev scheduler.Event
			if fw.Codec.Unmarshal(b, &ev) != nil {
				return false
			}
			switch ev.Type {
			case scheduler.Event_INVERSE_OFFERS:
				ios = ev.InverseOffers.InverseOffers
			case scheduler.Event_OFFERS:
				offers = ev.Offers.Offers
			default:
				return false
			}
			return true
		})
	}
	return ios, offers
}

// Mesos's maintenance endpoints answer as the operator calls they stand for.
func TestMaintenanceEndpoints(t *testing.T) {
	m := startAuthnMaster(t, Authn{})
	addr := m.Addr()
	sched := `{"windows":[{"machine_ids":[{"hostname":"m1","ip":"10.0.0.1"}],"unavailability":{"start":{"nanoseconds":5}}}]}`
	steps := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"POST", "/maintenance/schedule", sched, 200, ""},
		{"GET", "/master/maintenance/schedule", "", 200, `"hostname":"m1"`},
		{"GET", "/maintenance/status", "", 200, `"draining_machines":[{"id":{"hostname":"m1","ip":"10.0.0.1"}`},
		{"POST", "/machine/up", `[{"hostname":"m1","ip":"10.0.0.1"}]`, 400, "is not in DOWN mode and cannot be brought up"},
		{"POST", "/machine/down", `[{"hostname":"m2"}]`, 400, `Machine '{"hostname":"m2"}' is not part of a maintenance schedule`},
		{"POST", "/machine/down", `{"hostname":"m1"}`, 400, "the body is not a list of machines"},
		{"POST", "/machine/down", `[{"hostname":"m1","ip":"10.0.0.1"}]`, 200, ""},
		{"GET", "/maintenance/status", "", 200, `"down_machines":[{"hostname":"m1","ip":"10.0.0.1"}]`},
		{"POST", "/master/machine/up", `[{"hostname":"m1","ip":"10.0.0.1"}]`, 200, ""},
		{"GET", "/maintenance/schedule", "", 200, `{}`},
	}
	for _, s := range steps {
		code, body := do(t, addr, s.method, s.path, []byte(s.body), "", "")
		if code != s.code || !strings.Contains(string(body), s.want) {
			t.Fatalf("%s %s: %d %s, want %d with %q", s.method, s.path, code, body, s.code, s.want)
		}
	}
}
