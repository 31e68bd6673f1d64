package master

import (
	"net"
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mallocator "github.com/mesos/mesos-go/api/v1/lib/allocator"
	mmaint "github.com/mesos/mesos-go/api/v1/lib/maintenance"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/auth"
)

// Maintenance primitives as Mesos has them: UPDATE_MAINTENANCE_SCHEDULE
// puts machines in DRAINING mode (their agents' offers carry the window's
// unavailability and every framework holding resources there gets an
// inverse offer with it), START_MAINTENANCE takes DRAINING machines DOWN
// (their agents are removed, their tasks reported TASK_LOST, or
// TASK_GONE_BY_OPERATOR to PARTITION_AWARE frameworks, and agents of a
// DOWN machine are refused), STOP_MAINTENANCE brings DOWN machines UP and
// out of the schedule. Errors are Mesos's texts with Mesos's statuses.
// Agent drain and deactivation are in drain.go; the state in maintstate.go.

// isMaintenanceCall reports whether maintenanceCallAs answers call.
func isMaintenanceCall(t mmaster.Call_Type) bool {
	switch t {
	case mmaster.Call_GET_MAINTENANCE_SCHEDULE, mmaster.Call_UPDATE_MAINTENANCE_SCHEDULE, mmaster.Call_GET_MAINTENANCE_STATUS,
		mmaster.Call_START_MAINTENANCE, mmaster.Call_STOP_MAINTENANCE,
		mmaster.Call_DRAIN_AGENT, mmaster.Call_DEACTIVATE_AGENT, mmaster.Call_REACTIVATE_AGENT:
		return true
	}
	return false
}

// maintenanceCallAs answers the maintenance and drain calls for who: it
// authorizes, changes the live state under m.mu and answers once the
// change is durable (503 if the registry failed). Takes m.mu.
func (m *Master) maintenanceCallAs(who auth.Subject, call *mmaster.Call) (*mmaster.Response, error) {
	m.mu.Lock()
	m.maint.init()
	resp, changed, err := m.maintenanceCallLocked(who, call)
	var done chan error
	if err == nil && changed {
		done = make(chan error, 1)
		m.rep.proposeThen(&api.Command{Type: api.CommandType_MAINTENANCE_SET, Maintenance: m.maint.record()}, func(e error) { done <- e })
		m.triggerAllocation()
	}
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if done != nil {
		if err := <-done; err != nil {
			return nil, api.Errorf(http.StatusServiceUnavailable, "%s: registry: %v", call.Type, err)
		}
	}
	return resp, nil
}

// maintenanceCallLocked dispatches; changed says the record must be
// saved. Caller holds m.mu.
func (m *Master) maintenanceCallLocked(who auth.Subject, call *mmaster.Call) (resp *mmaster.Response, changed bool, err error) {
	switch call.Type {
	case mmaster.Call_GET_MAINTENANCE_SCHEDULE:
		return &mmaster.Response{Type: mmaster.Response_GET_MAINTENANCE_SCHEDULE,
			GetMaintenanceSchedule: &mmaster.Response_GetMaintenanceSchedule{Schedule: m.visibleScheduleLocked(who)}}, false, nil
	case mmaster.Call_GET_MAINTENANCE_STATUS:
		return &mmaster.Response{Type: mmaster.Response_GET_MAINTENANCE_STATUS,
			GetMaintenanceStatus: &mmaster.Response_GetMaintenanceStatus{Status: m.maintenanceStatusLocked(who)}}, false, nil
	case mmaster.Call_UPDATE_MAINTENANCE_SCHEDULE:
		if call.UpdateMaintenanceSchedule == nil {
			return nil, false, api.Errorf(http.StatusBadRequest, "Expecting 'update_maintenance_schedule' to be present")
		}
		return nil, true, m.updateScheduleLocked(who, call.UpdateMaintenanceSchedule.Schedule)
	case mmaster.Call_START_MAINTENANCE:
		if call.StartMaintenance == nil {
			return nil, false, api.Errorf(http.StatusBadRequest, "Expecting 'start_maintenance' to be present")
		}
		return nil, true, m.startMaintenanceLocked(who, call.StartMaintenance.Machines)
	case mmaster.Call_STOP_MAINTENANCE:
		if call.StopMaintenance == nil {
			return nil, false, api.Errorf(http.StatusBadRequest, "Expecting 'stop_maintenance' to be present")
		}
		return nil, true, m.stopMaintenanceLocked(who, call.StopMaintenance.Machines)
	}
	return nil, true, m.agentMaintenanceLocked(who, call)
}

// validateMachine is Mesos's check of one MachineID.
func validateMachine(id mesos.MachineID) error {
	if id.GetHostname() == "" && id.GetIP() == "" {
		return api.Errorf(http.StatusBadRequest, "Both 'hostname' and 'ip' for a machine are empty")
	}
	if ip := id.GetIP(); ip != "" && net.ParseIP(ip).To4() == nil {
		return api.Errorf(http.StatusBadRequest, "Failed to parse IP '%s'", ip)
	}
	return nil
}

// validateMachines is Mesos's check of START_MAINTENANCE's and
// STOP_MAINTENANCE's list.
func validateMachines(ids []mesos.MachineID) error {
	if len(ids) == 0 {
		return api.Errorf(http.StatusBadRequest, "List of machines is empty")
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if err := validateMachine(id); err != nil {
			return err
		}
		if seen[machineKey(id)] {
			return api.Errorf(http.StatusBadRequest, "Machine '%s' appears more than once in the schedule", machineString(id))
		}
		seen[machineKey(id)] = true
	}
	return nil
}

// validateSchedule is Mesos's check of a new schedule against the machines
// DOWN: every window has machines and a duration that is not negative,
// every machine appears once, and no DOWN machine leaves the schedule.
func validateSchedule(s mmaint.Schedule, down map[string]mesos.MachineID) error {
	seen := map[string]bool{}
	for _, w := range s.Windows {
		if len(w.MachineIDs) == 0 {
			return api.Errorf(http.StatusBadRequest, "List of machines in the maintenance window is empty")
		}
		if d := w.Unavailability.Duration; d != nil && d.Nanoseconds < 0 {
			return api.Errorf(http.StatusBadRequest, "Unavailability 'duration' is negative")
		}
		for _, id := range w.MachineIDs {
			if err := validateMachine(id); err != nil {
				return err
			}
			if seen[machineKey(id)] {
				return api.Errorf(http.StatusBadRequest, "Machine '%s' appears more than once in the schedule", machineString(id))
			}
			seen[machineKey(id)] = true
		}
	}
	for _, k := range sortedKeys(down) {
		if !seen[k] {
			return api.Errorf(http.StatusBadRequest, "Machine '%s' is deactivated and cannot be removed from the schedule", machineString(down[k]))
		}
	}
	return nil
}

// updateScheduleLocked is UPDATE_MAINTENANCE_SCHEDULE: the schedule is
// replaced, machines that left it go UP (their frameworks' answers are
// forgotten) and agents whose unavailability changed have their offers
// rescinded, to be offered again with it. Caller holds m.mu.
func (m *Master) updateScheduleLocked(who auth.Subject, s mmaint.Schedule) error {
	if err := validateSchedule(s, m.maint.down); err != nil {
		return err
	}
	for _, w := range s.Windows {
		for _, id := range w.MachineIDs {
			if err := m.authorize(who, auth.UpdateMaintenanceSchedules, machineObject(id), false); err != nil {
				return err
			}
		}
	}
	m.maint.schedule = s
	m.maint.unavailSet = true
	m.refreshUnavailabilityLocked()
	return nil
}

// visibleScheduleLocked is the schedule without the machines who may not
// see (get_maintenance_schedules); windows left empty are left out.
// Caller holds m.mu.
func (m *Master) visibleScheduleLocked(who auth.Subject) mmaint.Schedule {
	var out mmaint.Schedule
	for _, w := range m.maint.schedule.Windows {
		v := mmaint.Window{Unavailability: w.Unavailability}
		for _, id := range w.MachineIDs {
			if m.authorize(who, auth.GetMaintenanceSchedules, machineObject(id), true) == nil {
				v.MachineIDs = append(v.MachineIDs, id)
			}
		}
		if len(v.MachineIDs) > 0 {
			out.Windows = append(out.Windows, v)
		}
	}
	return out
}

// maintenanceStatusLocked is GET_MAINTENANCE_STATUS: the DRAINING machines
// with their frameworks' latest inverse-offer answers (UNKNOWN until one
// answers) and the DOWN machines, those who may see
// (get_maintenance_statuses). Caller holds m.mu.
func (m *Master) maintenanceStatusLocked(who auth.Subject) mmaint.ClusterStatus {
	var out mmaint.ClusterStatus
	seen := func(id mesos.MachineID) bool {
		return m.authorize(who, auth.GetMaintenanceStatuses, machineObject(id), true) == nil
	}
	for _, id := range m.maint.scheduledMachines() {
		key := machineKey(id)
		if _, down := m.maint.down[key]; down || !seen(id) {
			continue
		}
		dm := mmaint.ClusterStatus_DrainingMachine{ID: id}
		for _, aid := range sortedKeys(m.agents) {
			if machineKey(agentMachine(m.agents[aid].rec)) != key {
				continue
			}
			var st []mallocator.InverseOfferStatus
			for k, s := range m.maint.answers {
				if _, agent := splitInverseKey(k); agent == aid {
					st = append(st, s)
				}
			}
			sortStatuses(st)
			dm.Statuses = append(dm.Statuses, st...)
		}
		out.DrainingMachines = append(out.DrainingMachines, dm)
	}
	for _, id := range m.maint.downMachines() {
		if seen(id) {
			out.DownMachines = append(out.DownMachines, id)
		}
	}
	return out
}

// machineKnownLocked reports whether Mesos's master would know the machine:
// it is scheduled, DOWN, or runs an agent. Caller holds m.mu.
func (m *Master) machineKnownLocked(key string) bool {
	if m.maint.mode(key) != mesos.UP {
		return true
	}
	for _, a := range m.agents {
		if machineKey(agentMachine(a.rec)) == key {
			return true
		}
	}
	return false
}

// checkMachineModesLocked is START_MAINTENANCE's and STOP_MAINTENANCE's
// check that every machine is known and in mode from, and that who may
// act on it. Caller holds m.mu.
func (m *Master) checkMachineModesLocked(who auth.Subject, ids []mesos.MachineID, from mesos.MachineInfo_Mode, act auth.Action) error {
	if err := validateMachines(ids); err != nil {
		return err
	}
	verb := map[mesos.MachineInfo_Mode]string{mesos.DRAINING: "brought down", mesos.DOWN: "brought up"}[from]
	for _, id := range ids {
		key := machineKey(id)
		if !m.machineKnownLocked(key) {
			return api.Errorf(http.StatusBadRequest, "Machine '%s' is not part of a maintenance schedule", machineString(id))
		}
		if m.maint.mode(key) != from {
			return api.Errorf(http.StatusBadRequest, "Machine '%s' is not in %s mode and cannot be %s", machineString(id), from, verb)
		}
		if err := m.authorize(who, act, machineObject(id), false); err != nil {
			return err
		}
	}
	return nil
}

// startMaintenanceLocked is START_MAINTENANCE: the machines go DOWN and
// their agents are removed as Mesos removes them for 'Machine DOWN'.
// Caller holds m.mu.
func (m *Master) startMaintenanceLocked(who auth.Subject, ids []mesos.MachineID) error {
	if err := m.checkMachineModesLocked(who, ids, mesos.DRAINING, auth.StartMaintenances); err != nil {
		return err
	}
	for _, id := range ids {
		key := machineKey(id)
		m.maint.down[key] = id
		for _, aid := range sortedKeys(m.agents) {
			if a := m.agents[aid]; machineKey(agentMachine(a.rec)) == key {
				m.removeAgentForMaintenanceLocked(a)
			}
		}
	}
	m.refreshUnavailabilityLocked()
	return nil
}

// stopMaintenanceLocked is STOP_MAINTENANCE: the machines go UP and leave
// the schedule (windows left empty are dropped). Caller holds m.mu.
func (m *Master) stopMaintenanceLocked(who auth.Subject, ids []mesos.MachineID) error {
	if err := m.checkMachineModesLocked(who, ids, mesos.DOWN, auth.StopMaintenances); err != nil {
		return err
	}
	up := map[string]bool{}
	for _, id := range ids {
		up[machineKey(id)] = true
		delete(m.maint.down, machineKey(id))
	}
	var windows []mmaint.Window
	for _, w := range m.maint.schedule.Windows {
		var keep []mesos.MachineID
		for _, id := range w.MachineIDs {
			if !up[machineKey(id)] {
				keep = append(keep, id)
			}
		}
		if len(keep) > 0 {
			w.MachineIDs = keep
			windows = append(windows, w)
		}
	}
	m.maint.schedule.Windows = windows
	m.refreshUnavailabilityLocked()
	return nil
}

// removeAgentForMaintenanceLocked removes an agent whose machine went
// DOWN: its tasks end as Mesos ends them ('Operator initiated 'Machine
// DOWN”), its connection is closed (it is refused while the machine is
// DOWN) and it is forgotten. Caller holds m.mu.
func (m *Master) removeAgentForMaintenanceLocked(a *agentState) {
	const why = "Operator initiated 'Machine DOWN'"
	for _, p := range m.tasksOnLocked(a.rec.Id) {
		if taskstate.IsTerminal(p.t.state) {
			continue
		}
		state, reason := mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED
		if frameworkCapable(p.fw, mesos.FrameworkInfo_Capability_PARTITION_AWARE) {
			state, reason = mesos.TASK_GONE_BY_OPERATOR, mesos.REASON_AGENT_REMOVED_BY_OPERATOR
		}
		m.taskEndedLocked(p.fw, p.t, state, reason, why) // agentproto.go
	}
	if a.stream != nil {
		a.stream.Close(why)
	}
	delete(m.maint.agents, a.rec.Id)
	m.forgetAnswersOfAgentLocked(a.rec.Id)
	m.removeAgentLocked(a, why)
}

// admitMachineLocked refuses an agent whose machine is DOWN, as Mesos
// shuts such agents down. Caller holds m.mu.
func (m *Master) admitMachineLocked(rec *api.AgentRecord) error {
	id := agentMachine(rec)
	if m.maint.mode(machineKey(id)) == mesos.DOWN {
		return api.Errorf(http.StatusForbidden, "agent's machine %s is DOWN for maintenance: STOP_MAINTENANCE brings it up", machineString(id))
	}
	return nil
}

// refreshUnavailabilityLocked sets each agent's unavailability from the
// schedule; an agent whose unavailability changed has its outstanding
// offers rescinded, so that they are made again with it. Caller holds m.mu.
func (m *Master) refreshUnavailabilityLocked() {
	if !m.maint.unavailSet {
		return
	}
	for _, id := range sortedKeys(m.agents) {
		a := m.agents[id]
		u := m.maint.windowOf(machineKey(agentMachine(a.rec)))
		if sameUnavailability(a.unavail, u) {
			continue
		}
		if u != nil {
			c := *u
			u = &c
		} else {
			m.forgetAnswersOfAgentLocked(id)
		}
		a.unavail = u
		m.removeAgentOffersLocked(id, true)
	}
	m.maint.unavailSet = len(m.maint.schedule.Windows) > 0
}

func sameUnavailability(a, b *mesos.Unavailability) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}

// withMaintenanceInversesLocked adds to the allocator's inverse offers one
// for every framework holding resources on an agent of a DRAINING machine
// (empty resources: all of them, as Mesos's maintenance inverse offers).
// The inverse table (inverse.go) sends each once and rescinds it when the
// machine leaves DRAINING. Caller holds m.mu.
func (m *Master) withMaintenanceInversesLocked(decided []allocator.InverseOffer) []allocator.InverseOffer {
	if len(m.maint.schedule.Windows) == 0 {
		return decided
	}
	out := decided
	copied := false
	now := m.clock.Now()
	for _, id := range sortedKeys(m.agents) {
		a := m.agents[id]
		if a.unavail == nil || !a.inAlloc {
			continue
		}
		st, err := m.alloc.Agent(id)
		if err != nil {
			continue
		}
		for _, fw := range sortedKeys(st.Allocated) {
			if !copied {
				out, copied = append([]allocator.InverseOffer(nil), decided...), true
			}
			out = append(out, allocator.InverseOffer{Framework: fw, Agent: id, Reason: "maintenance of machine " + machineString(agentMachine(a.rec))})
			m.maint.init()
			if _, ok := m.maint.answers[inverseKey(fw, id)]; !ok {
				m.maint.answers[inverseKey(fw, id)] = mallocator.InverseOfferStatus{Status: mallocator.InverseOfferStatus_UNKNOWN.Enum(),
					FrameworkID: mesos.FrameworkID{Value: fw}, Timestamp: mesos.TimeInfo{Nanoseconds: now.UnixNano()}}
			}
		}
	}
	return out
}

// inverseUnavailabilityLocked is the unavailability an inverse offer on a
// carries: its machine's window if it is DRAINING, else from now on.
// Caller holds m.mu.
func (m *Master) inverseUnavailabilityLocked(a *agentState) mesos.Unavailability {
	if a.unavail != nil {
		return *a.unavail
	}
	return mesos.Unavailability{Start: mesos.TimeInfo{Nanoseconds: m.clock.Now().UnixNano()}}
}

// noteInverseAnswerLocked records a framework's answer to an inverse offer
// on a DRAINING machine for GET_MAINTENANCE_STATUS. Caller holds m.mu.
func (m *Master) noteInverseAnswerLocked(io *inverseOffer, answer scheduler.Call_Type) {
	key := inverseKey(io.fw, io.agent)
	if _, ok := m.maint.answers[key]; !ok {
		return
	}
	st := mallocator.InverseOfferStatus_DECLINE
	if answer == scheduler.Call_ACCEPT_INVERSE_OFFERS {
		st = mallocator.InverseOfferStatus_ACCEPT
	}
	m.maint.answers[key] = mallocator.InverseOfferStatus{Status: st.Enum(), FrameworkID: mesos.FrameworkID{Value: io.fw},
		Timestamp: mesos.TimeInfo{Nanoseconds: m.clock.Now().UnixNano()}}
}

// forgetAnswersOfAgentLocked forgets the answers about an agent whose
// machine is no longer DRAINING. Caller holds m.mu.
func (m *Master) forgetAnswersOfAgentLocked(agent string) {
	for k := range m.maint.answers {
		if _, a := splitInverseKey(k); a == agent {
			delete(m.maint.answers, k)
		}
	}
}

// splitInverseKey undoes inverseKey.
func splitInverseKey(k string) (fw, agent string) {
	for i := 0; i < len(k); i++ {
		if k[i] == 0 {
			return k[:i], k[i+1:]
		}
	}
	return k, ""
}
