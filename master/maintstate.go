package master

import (
	"encoding/json"
	"net"
	"sort"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mallocator "github.com/mesos/mesos-go/api/v1/lib/allocator"
	mmaint "github.com/mesos/mesos-go/api/v1/lib/maintenance"

	"github.com/allot-sched/allot/api"
)

// The maintenance state every leader holds (guarded by m.mu) and the
// registry's MaintenanceRecord it is saved as and rebuilt from: Mesos's
// maintenance schedule, its machine modes (a machine in the schedule is
// DRAINING unless it is DOWN; one in neither is UP) and its agents'
// deactivation and drain state. The inverse-offer answers of frameworks
// are leader-local, as in Mesos (a new leader asks again).

// maintState is the master's maintenance state. Caller holds m.mu.
type maintState struct {
	schedule mmaint.Schedule
	down     map[string]mesos.MachineID // by machineKey
	agents   map[string]*agentMaint     // by agent id: deactivated or drained agents only
	// answers are the frameworks' latest answers to maintenance inverse
	// offers, by inverseKey(framework, agent), for GET_MAINTENANCE_STATUS.
	answers map[string]mallocator.InverseOfferStatus
	// unavailSet is true while some agent's unavail may be set, so that an
	// emptied schedule clears them once.
	unavailSet bool
}

// agentMaint is what an operator asked of one agent.
type agentMaint struct {
	deactivated bool
	drain       *mesos.DrainInfo // nil: never drained
	// killed maps the key of each task the drain killed to the agent
	// connection the KILL went out on: a re-registered agent (or a new
	// leader) is asked again.
	killed map[string]*api.Stream
}

func (s *maintState) init() {
	if s.down == nil {
		s.down, s.agents, s.answers = map[string]mesos.MachineID{}, map[string]*agentMaint{}, map[string]mallocator.InverseOfferStatus{}
	}
}

// draining reports whether the agent is draining (not yet drained).
func (am *agentMaint) draining() bool {
	return am != nil && am.drain != nil && am.drain.State == mesos.DrainState_DRAINING
}

// machineKey identifies a machine as Mesos compares MachineIDs: the
// hostname without regard to case, and the IP.
func machineKey(id mesos.MachineID) string {
	return strings.ToLower(id.GetHostname()) + "\x00" + id.GetIP()
}

// machineString is id as Mesos's errors name it: its JSON.
func machineString(id mesos.MachineID) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// machineObject is the object of the maintenance ACLs for id: its
// hostname, else its IP.
func machineObject(id mesos.MachineID) string {
	if h := id.GetHostname(); h != "" {
		return strings.ToLower(h)
	}
	return id.GetIP()
}

// agentMachine is the machine an agent runs on: its hostname and the IP of
// its address (empty if the address names a host, not an IP).
func agentMachine(rec *api.AgentRecord) mesos.MachineID {
	id := mesos.MachineID{Hostname: strPtr(rec.Hostname)}
	if h, _, err := net.SplitHostPort(rec.Address); err == nil && net.ParseIP(h) != nil {
		id.IP = strPtr(h)
	}
	return id
}

// windowOf returns the unavailability of the window that holds the machine
// key, nil if none does.
func (s *maintState) windowOf(key string) *mesos.Unavailability {
	for i := range s.schedule.Windows {
		w := &s.schedule.Windows[i]
		for _, id := range w.MachineIDs {
			if machineKey(id) == key {
				return &w.Unavailability
			}
		}
	}
	return nil
}

// mode is the machine's maintenance mode.
func (s *maintState) mode(key string) mesos.MachineInfo_Mode {
	if _, ok := s.down[key]; ok {
		return mesos.DOWN
	}
	if s.windowOf(key) != nil {
		return mesos.DRAINING
	}
	return mesos.UP
}

// record is the state as the registry keeps it.
func (s *maintState) record() *api.MaintenanceRecord {
	rec := &api.MaintenanceRecord{Agents: map[string]*api.AgentMaintenance{}}
	if len(s.schedule.Windows) > 0 {
		rec.Schedule, _ = s.schedule.Marshal()
	}
	for _, k := range sortedKeys(s.down) {
		id := s.down[k]
		b, _ := id.Marshal()
		rec.Down = append(rec.Down, b)
	}
	for id, am := range s.agents {
		e := &api.AgentMaintenance{Deactivated: am.deactivated}
		if am.drain != nil {
			e.Drain, _ = am.drain.Marshal()
		}
		rec.Agents[id] = e
	}
	return rec
}

// loadMaintState rebuilds the state from the registry's record (nil:
// none). Damaged parts are dropped: the record is only ever written by
// record, so that would be a bug, not an operator's input.
func loadMaintState(rec *api.MaintenanceRecord) maintState {
	var s maintState
	s.init()
	if rec == nil {
		return s
	}
	if len(rec.Schedule) > 0 {
		if err := s.schedule.Unmarshal(rec.Schedule); err != nil {
			s.schedule = mmaint.Schedule{}
		}
	}
	for _, b := range rec.Down {
		var id mesos.MachineID
		if id.Unmarshal(b) == nil {
			s.down[machineKey(id)] = id
		}
	}
	for id, e := range rec.Agents {
		am := &agentMaint{deactivated: e.Deactivated}
		if len(e.Drain) > 0 {
			var di mesos.DrainInfo
			if di.Unmarshal(e.Drain) == nil {
				am.drain = &di
			}
		}
		s.agents[id] = am
	}
	s.unavailSet = len(s.schedule.Windows) > 0
	return s
}

// downMachines lists the DOWN machines in key order.
func (s *maintState) downMachines() []mesos.MachineID {
	keys := sortedKeys(s.down)
	out := make([]mesos.MachineID, 0, len(keys))
	for _, k := range keys {
		out = append(out, s.down[k])
	}
	return out
}

// scheduledMachines lists the machines of the schedule in schedule order.
func (s *maintState) scheduledMachines() []mesos.MachineID {
	var out []mesos.MachineID
	for _, w := range s.schedule.Windows {
		out = append(out, w.MachineIDs...)
	}
	return out
}

// sortStatuses orders inverse-offer statuses by framework id.
func sortStatuses(st []mallocator.InverseOfferStatus) {
	sort.Slice(st, func(i, j int) bool { return st[i].FrameworkID.Value < st[j].FrameworkID.Value })
}
