package master

// Reservations and persistent volumes outside the allocator. The master
// keeps each agent's exact resources as Mesos resources (agentResv): its
// static --resources ("cpus(ads):4" becomes a STATIC reservation) with its
// checkpointed resources (dynamic reservations, with principal, labels and
// refinement stacks, and persistent volumes) applied. The checkpointed
// resources are replicated (AGENT_RESOURCES_SET), so a new leader knows
// them before the agent re-registers, and sent to the agent
// (CHECKPOINT_RESOURCES), which keeps them and the volumes' directories
// across its restarts. The allocator sees only quantities per reservation
// role (reservationsChangedLocked).

import (
	"fmt"
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/resources"
)

// agentResv is an agent's exact resources.
type agentResv struct {
	static mesos.Resources // --resources, static reservations included
	total  mesos.Resources // static with the checkpointed resources applied
	known  bool            // total was set from the registry or an earlier registration
	// seq numbers each change proposed to the registry, sent the newest
	// change the agent was told of (replicateResvLocked).
	seq, sent uint64
	// inflight counts the changes proposed whose commit has not been heard
	// of; held are the RUNs sent meanwhile, which wait for the agent to
	// hear of the change first (sendRunLocked).
	inflight int
	held     []*api.AgentEvent
}

// agentTotal reads an agent record's resources (static reservations
// included) into the allocator's quantities and the exact static list.
func agentTotal(text string) (resources.Resources, mesos.Resources, error) {
	byRole, err := resources.ParseByRole(text)
	if err != nil {
		return resources.Resources{}, nil, err
	}
	return resources.Total(byRole), resources.StaticMesos(byRole), nil
}

// checkpointed returns what of the agent's exact resources it
// checkpoints.
func (a *agentState) checkpointed() mesos.Resources {
	return resources.Checkpointed(a.resv.total)
}

// setExact sets a's exact resources from its static list and
// checkpointed resources; an error says which checkpointed resource the
// static ones cannot hold. Caller holds m.mu.
func (a *agentState) setExact(static, checkpointed mesos.Resources) error {
	total, err := resources.ApplyCheckpointed(static, checkpointed)
	if err != nil {
		return err
	}
	a.resv = agentResv{static: static, total: total, known: true, seq: a.resv.seq, sent: a.resv.seq,
		inflight: a.resv.inflight, held: a.resv.held}
	return nil
}

// admitExactLocked sets the exact resources of an agent that registers
// with static and reports the checkpointed resources it kept: the master's
// own copy wins where it has one (the registry's, or an earlier
// registration's), else the agent's report is adopted and replicated. The
// agent is then told what to keep. Caller holds m.mu.
func (m *Master) admitExactLocked(a *agentState, static mesos.Resources, reported [][]byte) error {
	ckpt := a.checkpointed()
	adopt := !a.resv.known
	if adopt {
		list, err := decodeResourceList(reported)
		if err != nil {
			return api.Errorf(http.StatusBadRequest, "REGISTER: checkpointed_resources: %v", err)
		}
		ckpt = list
	}
	if err := a.setExact(static, ckpt); err != nil {
		return api.Errorf(http.StatusBadRequest, "REGISTER: agent.resources %s cannot hold the agent's reservations and volumes: %v", a.rec.Resources, err)
	}
	if adopt && len(ckpt) > 0 {
		m.rep.propose(agentResourcesCommand(a.rec.Id, ckpt))
	}
	return nil
}

// recoverExactLocked sets the exact resources of an agent known from the
// registry after an election. Caller holds m.mu.
func (m *Master) recoverExactLocked(a *agentState, static mesos.Resources, held map[string]*api.AgentResourcesRecord) {
	ckpt, err := decodeResourceList(held[a.rec.Id].GetResources())
	if err == nil {
		err = a.setExact(static, ckpt)
	}
	if err != nil {
		m.log.Error().Err(err).Str("agent_id", a.rec.Id).Msg("registry's reservations and volumes of the agent do not fit it; its static resources only until it re-registers")
		a.resv = agentResv{static: static, total: static.Clone()}
	}
}

// heldByAgent indexes the registry's checkpointed resources by agent.
func (m *Master) heldByAgent() map[string]*api.AgentResourcesRecord {
	out := map[string]*api.AgentResourcesRecord{}
	for _, rec := range m.reg.AgentResources() {
		out[rec.AgentId] = rec
	}
	return out
}

// replicateResvLocked proposes a's checkpointed resources and tells the
// agent to keep them once they are committed, never before: a leader that
// dies before the commit leaves no record, the next leader's copy wins when
// the agent re-registers, and an agent told first would then delete the
// volume it had made. A commit that an earlier registration or a newer
// change overtook sends nothing. Until every change is heard of, RUNs for
// the agent are held (sendRunLocked). Caller holds m.mu.
func (m *Master) replicateResvLocked(a *agentState) {
	list := a.checkpointed()
	a.resv.seq++
	a.resv.inflight++
	seq, id := a.resv.seq, a.rec.Id
	m.rep.proposeThen(agentResourcesCommand(id, list), func(err error) {
		if err != nil {
			m.log.Error().Err(err).Str("agent_id", id).Msg("reservations and volumes not replicated; the agent is not told of the change")
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		a.resv.inflight--
		cur := m.agents[id]
		if err == nil && cur == a && seq > a.resv.sent && a.stream != nil {
			a.resv.sent = seq
			a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_CHECKPOINT_RESOURCES, AgentId: id, Resources: encodeResourceList(list)})
		}
		if a.resv.inflight == 0 {
			m.releaseRunsLocked(a, cur == a)
		}
	})
}

// sendRunLocked sends a RUN to a, unless a change of its reservations or
// volumes is still being replicated: the agent must hear CHECKPOINT_RESOURCES
// before a RUN that uses what it made (a new volume, say), and the stream
// keeps the order, so the RUN waits until the change's commit is heard of.
// Caller holds m.mu.
func (m *Master) sendRunLocked(a *agentState, ev *api.AgentEvent) {
	if a.resv.inflight > 0 {
		a.resv.held = append(a.resv.held, ev)
		return
	}
	a.stream.SendProto(ev)
}

// releaseRunsLocked sends the RUNs held for a, or drops them where a has
// no stream or was replaced: its tasks are then recorded on the agent but
// unknown to it, and its next registration reports them lost, as it does
// for a RUN a broken connection lost. Caller holds m.mu.
func (m *Master) releaseRunsLocked(a *agentState, current bool) {
	held := a.resv.held
	a.resv.held = nil
	if len(held) == 0 {
		return
	}
	if !current || a.stream == nil {
		m.log.Warn().Str("agent_id", a.rec.Id).Int("runs", len(held)).Msg("agent gone while its reservations were replicated; its held RUNs are dropped")
		return
	}
	for _, ev := range held {
		a.stream.SendProto(ev)
	}
}

// checkpointEvent is CHECKPOINT_RESOURCES with what a is to keep.
func checkpointEvent(a *agentState) *api.AgentEvent {
	return &api.AgentEvent{Type: api.AgentEventType_CHECKPOINT_RESOURCES, AgentId: a.rec.Id,
		Resources: encodeResourceList(a.checkpointed())}
}

func agentResourcesCommand(id string, ckpt mesos.Resources) *api.Command {
	return &api.Command{Type: api.CommandType_AGENT_RESOURCES_SET,
		AgentResources: &api.AgentResourcesRecord{AgentId: id, Resources: encodeResourceList(ckpt)}}
}

func decodeResourceList(raw [][]byte) (mesos.Resources, error) {
	out := make(mesos.Resources, len(raw))
	for i, b := range raw {
		if err := out[i].Unmarshal(b); err != nil {
			return nil, fmt.Errorf("resource %d: %w", i, err)
		}
	}
	return out, nil
}

func encodeResourceList(list mesos.Resources) [][]byte {
	out := make([][]byte, 0, len(list))
	for i := range list {
		if b, err := list[i].Marshal(); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// reservedQuantities returns an agent's reserved resources as the
// allocator counts them: by the innermost role of each reservation.
func (a *agentState) reservedQuantities() map[string]resources.Resources {
	byRole, err := resources.Quantities(a.resv.total)
	if err != nil {
		return nil
	}
	delete(byRole, resources.Unreserved)
	return byRole
}

// usedExactLocked returns the exact resources the live tasks on agent id
// hold (their TaskInfo's, volumes included), with the task using each
// persistent volume. Caller holds m.mu.
func (m *Master) usedExactLocked(id string) (used mesos.Resources, volumeUsers map[string]string) {
	volumeUsers = map[string]string{}
	for _, pt := range m.tasksOnLocked(id) {
		if taskstate.IsTerminal(pt.t.state) {
			continue
		}
		for _, r := range pt.t.info.Resources {
			used.Add1(r)
			if r.IsPersistentVolume() {
				volumeUsers[volumeName(&r)] = fmt.Sprintf("task %s of framework %s", pt.t.id, pt.fw.id)
			}
		}
	}
	return used, volumeUsers
}

// volumeName names a volume as errors and volumeUsers do: role and id.
func volumeName(r *mesos.Resource) string {
	return fmt.Sprintf("%q of role %q", r.GetDisk().GetPersistence().GetID(), r.ReservationRole())
}

// staticMesos is the agent's --resources as Mesos's AgentInfo.resources
// lists them: static reservations included.
func (a *agentState) staticMesos() []mesos.Resource {
	if a.resv.static == nil {
		return resources.ToMesos(a.total, "", "")
	}
	return a.resv.static
}

// totalMesos is the agent's resources as GET_AGENTS's total_resources
// lists them: dynamic reservations and persistent volumes included.
func (a *agentState) totalMesos() []mesos.Resource {
	if a.resv.total == nil {
		return resources.ToMesos(a.total, "", "")
	}
	return a.resv.total
}

// stateReservations is what /state shows of a's reservations: quantities
// and the exact resources, by reservation role; nil when none.
func (a *agentState) stateReservations() (map[string]map[string]float64, map[string][]mesos.Resource) {
	var q map[string]map[string]float64
	var full map[string][]mesos.Resource
	for _, r := range a.resv.total {
		role := r.ReservationRole()
		if role == resources.Unreserved {
			continue
		}
		if q == nil {
			q, full = map[string]map[string]float64{}, map[string][]mesos.Resource{}
		}
		full[role] = append(full[role], r)
	}
	for role, r := range a.reservedQuantities() {
		q[role] = stateScalars(r)
	}
	return q, full
}
