package master

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/resources"
)

// triggerAllocation asks the allocation loop for a cycle soon; calls
// coalesce.
func (m *Master) triggerAllocation() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

func (m *Master) allocationLoop() {
	t := time.NewTicker(m.cfg.AllocationInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		case <-m.kick:
		}
		if m.leader.Load() {
			m.allocate()
		}
	}
}

func (m *Master) allocate() {
	start := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	decisions := m.alloc.Allocate()
	byFw := map[string][]mesos.Offer{}
	for _, d := range decisions {
		fw := m.frameworks[d.Framework]
		a := m.agents[d.Agent]
		if fw == nil || fw.stream == nil || a == nil || a.stream == nil {
			m.alloc.Recover(d.Framework, d.Agent, d.Resources, nil)
			continue
		}
		m.seq++
		o := &offer{id: m.id + "-O" + strconv.FormatUint(m.seq, 10), fw: fw.id, agent: a.rec.Id, res: d.Resources}
		m.offers[o.id] = o
		fw.offers[o.id] = o
		if m.cfg.OfferTimeout > 0 {
			id := o.id
			o.timer = time.AfterFunc(m.cfg.OfferTimeout, func() { m.rescindOffer(id, "offer timed out") })
		}
		byFw[fw.id] = append(byFw[fw.id], m.mesosOffer(fw, a, o))
		m.m.offers.Inc()
		m.log.Debug().Str("framework_id", fw.id).Str("agent_id", a.rec.Id).Str("resources", d.Resources.String()).
			Str("reason", d.Reason.String()).Msg("offer")
	}
	for fwID, offers := range byFw {
		m.sendFramework(m.frameworks[fwID], &schedEvent{Type: evOffers, Offers: &schedOffers{Offers: offers}})
	}
	m.m.allocCycle.Observe(time.Since(start).Seconds())
}

func (m *Master) mesosOffer(fw *framework, a *agentState, o *offer) mesos.Offer {
	allocRole := ""
	if fw.multiRole {
		allocRole = fw.role
	}
	host := a.rec.Hostname
	mo := mesos.Offer{
		ID:          mesos.OfferID{Value: o.id},
		FrameworkID: mesos.FrameworkID{Value: fw.id},
		AgentID:     mesos.AgentID{Value: a.rec.Id},
		Hostname:    host,
		Resources:   resources.ToMesos(o.res, "", allocRole),
	}
	if allocRole != "" {
		mo.AllocationInfo = &mesos.Resource_AllocationInfo{Role: strPtr(allocRole)}
	}
	for k, v := range a.rec.Attributes {
		t := mesos.TEXT
		mo.Attributes = append(mo.Attributes, mesos.Attribute{Name: k, Type: t, Text: &mesos.Value_Text{Value: v}})
	}
	if h, p, err := net.SplitHostPort(a.rec.Address); err == nil {
		port, _ := strconv.Atoi(p)
		mo.URL = &mesos.URL{Scheme: "http", Address: mesos.Address{Hostname: &h, Port: int32(port)}, Path: strPtr("/slave(1)")}
	}
	return mo
}

// rescindOffer withdraws an outstanding offer and returns its resources.
func (m *Master) rescindOffer(id, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.offers[id]
	if o == nil {
		return
	}
	m.removeOffer(o, true, nil)
	if fw := m.frameworks[o.fw]; fw != nil {
		m.sendFramework(fw, &schedEvent{Type: evRescind, Rescind: &schedRescind{OfferID: mesos.OfferID{Value: id}}})
	}
	m.log.Info().Str("offer_id", id).Str("why", why).Msg("offer rescinded")
	m.triggerAllocation()
}

// removeOffer forgets o; with recover its resources go back to the
// allocator (with filter fl).
func (m *Master) removeOffer(o *offer, recoverRes bool, fl *allocator.Filter) {
	if o.timer != nil {
		o.timer.Stop()
	}
	delete(m.offers, o.id)
	if fw := m.frameworks[o.fw]; fw != nil {
		delete(fw.offers, o.id)
	}
	if recoverRes {
		if err := m.alloc.Recover(o.fw, o.agent, o.res, fl); err != nil {
			m.log.Warn().Err(err).Str("offer_id", o.id).Msg("recovering offer")
		}
	}
}

// sendFramework queues an event on the framework's stream, if connected.
func (m *Master) sendFramework(fw *framework, ev *schedEvent) {
	if fw == nil || fw.stream == nil {
		return
	}
	fw.stream.Send(ev)
}

func filterOf(f *mesos.Filters) *allocator.Filter {
	rs := allocator.DefaultRefuseSeconds
	if f != nil && f.RefuseSeconds != nil {
		rs = *f.RefuseSeconds
	}
	return &allocator.Filter{RefuseSeconds: rs}
}

type plannedLaunch struct {
	tasks    []mesos.TaskInfo
	group    bool
	executor *mesos.ExecutorInfo
}

// accept validates an ACCEPT completely before changing anything, so a
// rejected call leaves the offers outstanding and the framework can retry.
func (m *Master) accept(fw *framework, acc *scheduler.Call_Accept) error {
	var offered resources.Resources
	var agentID string
	seen := map[string]bool{}
	for _, oid := range acc.OfferIDs {
		o := fw.offers[oid.Value]
		if o == nil {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: offer %q does not exist or was rescinded", oid.Value)
		}
		if seen[oid.Value] {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: offer %q is listed twice", oid.Value)
		}
		seen[oid.Value] = true
		if agentID != "" && o.agent != agentID {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: offers %v are on different agents", acc.OfferIDs)
		}
		agentID = o.agent
		offered = offered.Add(o.res)
	}
	a := m.agents[agentID]
	if a == nil || a.stream == nil {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: agent %s of the offer is gone", agentID)
	}
	remaining := offered
	newIDs := map[string]bool{}
	newExecutors := map[string]bool{}
	var plans []plannedLaunch
	checkTask := func(t *mesos.TaskInfo, ex *mesos.ExecutorInfo) error {
		if err := validTaskID(t.TaskID.Value); err != nil {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: %v", err)
		}
		if _, used := fw.tasks[t.TaskID.Value]; used || newIDs[t.TaskID.Value] {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task id %q is already in use by framework %s", t.TaskID.Value, fw.id)
		}
		newIDs[t.TaskID.Value] = true
		if t.AgentID.Value != agentID {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q names agent %q but the offer is on agent %q", t.TaskID.Value, t.AgentID.Value, agentID)
		}
		if ex == nil && t.Command == nil && t.Executor == nil {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q has neither command nor executor", t.TaskID.Value)
		}
		if ex == nil && t.Command != nil && t.Executor != nil {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q has both command and executor; give one", t.TaskID.Value)
		}
		need, err := taskResources(t.Resources)
		if err != nil {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q: %v", t.TaskID.Value, err)
		}
		if need.IsEmpty() {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q uses no resources", t.TaskID.Value)
		}
		if ex == nil {
			ex = t.Executor
		}
		if ex != nil {
			if ex.ExecutorID.Value == "" {
				return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q: executor has no executor_id", t.TaskID.Value)
			}
			key := fw.id + "/" + ex.ExecutorID.Value
			if _, running := a.executors[key]; !running && !newExecutors[key] {
				exRes, err := taskResources(ex.Resources)
				if err != nil {
					return api.Errorf(http.StatusBadRequest, "ACCEPT: executor %q: %v", ex.ExecutorID.Value, err)
				}
				need = need.Add(exRes)
				newExecutors[key] = true
			}
		}
		if !remaining.Contains(need) {
			return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q needs %s (with any new executor) but only %s remains of the offered resources",
				t.TaskID.Value, need, remaining)
		}
		remaining = remaining.Sub(need)
		return nil
	}
	for i := range acc.Operations {
		op := &acc.Operations[i]
		switch op.GetType() {
		case mesos.Offer_Operation_LAUNCH:
			if op.Launch == nil {
				return api.Errorf(http.StatusBadRequest, "ACCEPT: LAUNCH operation without launch")
			}
			for j := range op.Launch.TaskInfos {
				if err := checkTask(&op.Launch.TaskInfos[j], nil); err != nil {
					return err
				}
			}
			plans = append(plans, plannedLaunch{tasks: op.Launch.TaskInfos})
		case mesos.Offer_Operation_LAUNCH_GROUP:
			lg := op.LaunchGroup
			if lg == nil || len(lg.TaskGroup.Tasks) == 0 {
				return api.Errorf(http.StatusBadRequest, "ACCEPT: LAUNCH_GROUP operation without tasks")
			}
			for j := range lg.TaskGroup.Tasks {
				t := &lg.TaskGroup.Tasks[j]
				if t.Executor != nil {
					return api.Errorf(http.StatusBadRequest, "ACCEPT: LAUNCH_GROUP task %q must not carry its own executor", t.TaskID.Value)
				}
				if err := checkTask(t, &lg.Executor); err != nil {
					return err
				}
			}
			ex := lg.Executor
			plans = append(plans, plannedLaunch{tasks: lg.TaskGroup.Tasks, group: true, executor: &ex})
		default:
			return api.Errorf(http.StatusBadRequest, "ACCEPT: operation %s is not supported yet (only LAUNCH and LAUNCH_GROUP)", op.GetType())
		}
	}

	// Valid: consume the offers, launch, and return what is left.
	for _, oid := range acc.OfferIDs {
		m.removeOffer(fw.offers[oid.Value], false, nil)
	}
	fwInfo, _ := fw.info.Marshal()
	for _, p := range plans {
		if p.group {
			tg := mesos.TaskGroupInfo{Tasks: p.tasks}
			exB, _ := p.executor.Marshal()
			tgB, _ := tg.Marshal()
			m.addExecutor(a, fw.id, p.executor)
			for i := range p.tasks {
				m.addTask(fw, a, &p.tasks[i], p.executor.ExecutorID.Value)
			}
			a.stream.SendProto(&api.AgentEvent{Type: api.AgentEventType_RUN, FrameworkId: fw.id, ExecutorId: p.executor.ExecutorID.Value,
				FrameworkInfo: fwInfo, ExecutorInfo: exB, TaskGroup: tgB})
			continue
		}
		for i := range p.tasks {
			t := &p.tasks[i]
			ev := &api.AgentEvent{Type: api.AgentEventType_RUN, FrameworkId: fw.id, FrameworkInfo: fwInfo}
			exID := ""
			if t.Executor != nil {
				t.Executor.FrameworkID = &mesos.FrameworkID{Value: fw.id}
				m.addExecutor(a, fw.id, t.Executor)
				exID = t.Executor.ExecutorID.Value
				ev.ExecutorId = exID
				ev.ExecutorInfo, _ = t.Executor.Marshal()
			}
			ev.Task, _ = t.Marshal()
			m.addTask(fw, a, t, exID)
			a.stream.SendProto(ev)
		}
	}
	if !remaining.IsEmpty() {
		if err := m.alloc.Recover(fw.id, agentID, remaining, filterOf(acc.Filters)); err != nil {
			m.log.Warn().Err(err).Msg("recovering unused offer resources")
		}
	}
	m.triggerAllocation()
	return nil
}

func (m *Master) addExecutor(a *agentState, fwID string, ex *mesos.ExecutorInfo) {
	key := fwID + "/" + ex.ExecutorID.Value
	if _, ok := a.executors[key]; ok {
		return
	}
	res, _ := taskResources(ex.Resources)
	a.executors[key] = res
}

func (m *Master) addTask(fw *framework, a *agentState, ti *mesos.TaskInfo, exID string) {
	res, _ := taskResources(ti.Resources)
	t := &task{id: ti.TaskID.Value, fw: fw.id, agent: a.rec.Id, executor: exID, info: *ti, res: res, state: mesos.TASK_STAGING}
	fw.tasks[t.id] = t
	m.m.tasksLaunched.Inc()
	m.rep.propose(&api.Command{Type: api.CommandType_TASK_UPSERT, Task: taskRecord(t)})
	m.publishTask(evTaskAdded, t)
}

func validTaskID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("task_id is empty")
	case id == "." || id == "..":
		return fmt.Errorf("task_id %q is not allowed", id)
	case strings.ContainsAny(id, "/\x00"):
		return fmt.Errorf("task_id %q contains '/' or NUL", id)
	}
	return nil
}
