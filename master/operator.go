package master

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/resources"
)

// Handler returns the master's HTTP routes: the table in routes.go,
// authenticated by the class of the route each request is served by.
func (m *Master) Handler() http.Handler {
	mux := http.NewServeMux()
	return m.serve(newRouter(mux, m.routes(mux)))
}

// serve wraps rt's mux in authentication (outermost: the limits and ACLs
// read the principal it stores) and the request limits.
func (m *Master) serve(rt *router) http.Handler {
	return m.authenticate(rt.classify, m.limitRequests(rt.mux))
}

func (m *Master) handleOperator(w http.ResponseWriter, r *http.Request) {
	req, err := api.ReadRequest(w, r)
	if err != nil {
		m.m.badRequests.WithLabelValues("operator").Inc()
		api.WriteError(w, err)
		return
	}
	var call mmaster.Call
	if err := req.Decode(&call, "master.Call"); err != nil {
		m.m.badRequests.WithLabelValues("operator").Inc()
		api.WriteError(w, err)
		return
	}
	if call.Type == mmaster.Call_SUBSCRIBE {
		p, _ := auth.PrincipalFrom(r.Context())
		release, ok := m.admitStream(w, r, p)
		if !ok {
			return
		}
		defer release()
		m.operatorSubscribe(w, r, req)
		return
	}
	resp, handled, err := m.operatorRequestCall(r, &call)
	if !handled {
		resp, err = m.operatorCallAs(auth.SubjectFrom(r.Context()), &call)
	}
	if err != nil {
		m.m.badRequests.WithLabelValues("operator").Inc()
		api.WriteError(w, err)
		return
	}
	if resp == nil {
		w.WriteHeader(operatorEmptyStatus(call.Type))
		return
	}
	b, err := req.Out.MarshalOmitEmpty(resp) // as Mesos: no unset fields
	if err != nil {
		api.WriteError(w, err)
		return
	}
	w.Header().Set("Content-Type", req.Out.String())
	w.Write(b)
}

// operatorCall answers every operator call but SUBSCRIBE. Takes m.mu for
// those that read live state.
func (m *Master) operatorCall(call *mmaster.Call) (*mmaster.Response, error) {
	switch call.Type {
	case mmaster.Call_GET_HEALTH:
		return &mmaster.Response{Type: mmaster.Response_GET_HEALTH, GetHealth: &mmaster.Response_GetHealth{Healthy: true}}, nil
	case mmaster.Call_GET_VERSION:
		return &mmaster.Response{Type: mmaster.Response_GET_VERSION, GetVersion: &mmaster.Response_GetVersion{
			VersionInfo: versionInfo()}}, nil // version.go
	case mmaster.Call_GET_FLAGS:
		var flags []mesos.Flag
		names := make([]string, 0, len(m.cfg.Flags))
		for k := range m.cfg.Flags {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			flags = append(flags, mesos.Flag{Name: k, Value: strPtr(m.cfg.Flags[k])})
		}
		return &mmaster.Response{Type: mmaster.Response_GET_FLAGS, GetFlags: &mmaster.Response_GetFlags{Flags: flags}}, nil
	case mmaster.Call_GET_METRICS:
		out, err := m.mesosMetrics()
		if err != nil {
			return nil, err
		}
		return &mmaster.Response{Type: mmaster.Response_GET_METRICS, GetMetrics: &mmaster.Response_GetMetrics{Metrics: out}}, nil
	case mmaster.Call_GET_MASTER:
		st := float64(m.start.UnixNano()) / 1e9
		m.mu.Lock()
		el := float64(m.elected.UnixNano()) / 1e9
		m.mu.Unlock()
		info := m.info
		return &mmaster.Response{Type: mmaster.Response_GET_MASTER, GetMaster: &mmaster.Response_GetMaster{MasterInfo: &info, StartTime: &st, ElectedTime: &el}}, nil
	case mmaster.Call_MARK_AGENT_GONE:
		return m.markAgentGone(call.MarkAgentGone)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch call.Type {
	case mmaster.Call_GET_STATE:
		return &mmaster.Response{Type: mmaster.Response_GET_STATE, GetState: m.getStateLocked()}, nil
	case mmaster.Call_GET_AGENTS:
		return &mmaster.Response{Type: mmaster.Response_GET_AGENTS, GetAgents: m.getAgentsLocked()}, nil
	case mmaster.Call_GET_FRAMEWORKS:
		return &mmaster.Response{Type: mmaster.Response_GET_FRAMEWORKS, GetFrameworks: m.getFrameworksLocked()}, nil
	case mmaster.Call_GET_EXECUTORS:
		return &mmaster.Response{Type: mmaster.Response_GET_EXECUTORS, GetExecutors: m.getExecutorsLocked()}, nil
	case mmaster.Call_GET_TASKS:
		return &mmaster.Response{Type: mmaster.Response_GET_TASKS, GetTasks: m.getTasksLocked()}, nil
	case mmaster.Call_GET_WEIGHTS:
		var wi []mesos.WeightInfo
		for _, role := range sortedKeys(m.weights) {
			wi = append(wi, mesos.WeightInfo{Role: strPtr(role), Weight: m.weights[role]})
		}
		return &mmaster.Response{Type: mmaster.Response_GET_WEIGHTS, GetWeights: &mmaster.Response_GetWeights{WeightInfos: wi}}, nil
	case mmaster.Call_UPDATE_WEIGHTS:
		return m.updateWeightsLocked(call.UpdateWeights)
	}
	return nil, api.Errorf(http.StatusBadRequest, "operator call %s is not supported", call.Type)
}

func timeInfo(t time.Time) *mesos.TimeInfo {
	if t.IsZero() {
		return nil
	}
	return &mesos.TimeInfo{Nanoseconds: t.UnixNano()}
}

// agentInfo is a as Mesos describes agents. Caller holds m.mu.
func (m *Master) agentInfo(a *agentState) mesos.AgentInfo {
	port := int32(0)
	if _, p, err := splitHostPort(a.rec.Address); err == nil {
		port = int32(p)
	}
	return mesos.AgentInfo{Hostname: a.rec.Hostname, Port: &port, ID: &mesos.AgentID{Value: a.rec.Id},
		Resources: a.staticMesos()}
}

// agentEntryLocked is a as GET_AGENTS lists it. Caller holds m.mu.
func (m *Master) agentEntryLocked(a *agentState) mmaster.Response_GetAgents_Agent {
	e := mmaster.Response_GetAgents_Agent{AgentInfo: m.agentInfo(a), Active: a.stream != nil, Version: MesosVersion,
		PID: strPtr("slave(1)@" + a.rec.Address), RegisteredTime: timeInfo(time.Unix(0, a.rec.RegisteredUnixNano)),
		TotalResources: a.totalMesos()}
	if st, err := m.alloc.Agent(a.rec.Id); err == nil {
		var alloc resources.Resources
		for _, r := range st.Allocated {
			alloc = alloc.Add(r)
		}
		e.AllocatedResources = resources.ToMesos(alloc, "", "")
	}
	m.agentMaintFieldsLocked(&e, a)
	return e
}

// getAgentsLocked answers GET_AGENTS. Caller holds m.mu.
func (m *Master) getAgentsLocked() *mmaster.Response_GetAgents {
	out := &mmaster.Response_GetAgents{}
	for _, id := range sortedKeys(m.agents) {
		if m.awaitingAgentLocked(&mesos.AgentID{Value: id}) {
			// Known from the registry only, as Mesos's recovered agents.
			out.RecoveredAgents = append(out.RecoveredAgents, m.agentInfo(m.agents[id]))
			continue
		}
		out.Agents = append(out.Agents, m.agentEntryLocked(m.agents[id]))
	}
	return out
}

// frameworkEntryLocked is fw as GET_FRAMEWORKS lists it. Caller holds m.mu.
func (m *Master) frameworkEntryLocked(fw *framework) mmaster.Response_GetFrameworks_Framework {
	e := mmaster.Response_GetFrameworks_Framework{FrameworkInfo: fw.info, Active: fw.stream != nil && !fw.suppressed,
		Connected: fw.stream != nil, RegisteredTime: timeInfo(fw.registered), UnregisteredTime: timeInfo(fw.disconnectedAt)}
	if st, err := m.alloc.Framework(fw.id); err == nil {
		e.AllocatedResources = resources.ToMesos(st.Allocated, "", "")
	}
	for _, o := range offersByID(fw.offers) {
		if a := m.agents[o.agent]; a != nil {
			e.Offers = append(e.Offers, m.mesosOfferLocked(fw, a, o))
		}
	}
	return e
}

// getFrameworksLocked answers GET_FRAMEWORKS. Caller holds m.mu.
func (m *Master) getFrameworksLocked() *mmaster.Response_GetFrameworks {
	out := &mmaster.Response_GetFrameworks{}
	for _, id := range sortedKeys(m.frameworks) {
		out.Frameworks = append(out.Frameworks, m.frameworkEntryLocked(m.frameworks[id]))
	}
	out.CompletedFrameworks = m.completedFrameworkEntriesLocked() // history.go
	return out
}

// getExecutorsLocked answers GET_EXECUTORS. Caller holds m.mu.
func (m *Master) getExecutorsLocked() *mmaster.Response_GetExecutors {
	out := &mmaster.Response_GetExecutors{}
	for _, aid := range sortedKeys(m.agents) {
		a := m.agents[aid]
		for _, key := range sortedKeys(a.executors) {
			fw, ex := splitKey(key)
			out.Executors = append(out.Executors, mmaster.Response_GetExecutors_Executor{
				ExecutorInfo: mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: ex}, FrameworkID: &mesos.FrameworkID{Value: fw},
					Resources: resources.ToMesos(a.executors[key], "", "")},
				AgentID: mesos.AgentID{Value: aid}})
		}
	}
	return out
}

// mesosTask is t as the Mesos API shows it. Caller holds m.mu.
func (m *Master) mesosTask(t *task) mesos.Task {
	mt := mesos.Task{Name: t.info.Name, TaskID: mesos.TaskID{Value: t.id}, FrameworkID: mesos.FrameworkID{Value: t.fw},
		AgentID: mesos.AgentID{Value: t.agent}, State: t.state.Enum(), Resources: resources.ToMesos(t.res, "", ""),
		Labels: t.info.Labels, Container: t.info.Container, KillPolicy: t.info.KillPolicy}
	if t.executor != "" {
		mt.ExecutorID = &mesos.ExecutorID{Value: t.executor}
	}
	if t.status != nil {
		mt.Statuses = t.statuses
		if len(mt.Statuses) == 0 {
			mt.Statuses = []mesos.TaskStatus{*t.status}
		}
		mt.StatusUpdateState = t.status.State
		mt.StatusUpdateUUID = t.status.UUID
	}
	return mt
}

// getTasksLocked answers GET_TASKS. Caller holds m.mu.
func (m *Master) getTasksLocked() *mmaster.Response_GetTasks {
	out := &mmaster.Response_GetTasks{}
	for _, fid := range sortedKeys(m.frameworks) {
		fw := m.frameworks[fid]
		for _, tid := range sortedKeys(fw.tasks) {
			t := fw.tasks[tid]
			if taskstate.IsTerminal(t.state) {
				out.CompletedTasks = append(out.CompletedTasks, m.mesosTask(t))
			} else if t.state == mesos.TASK_UNREACHABLE {
				out.UnreachableTasks = append(out.UnreachableTasks, m.mesosTask(t))
			} else {
				out.Tasks = append(out.Tasks, m.mesosTask(t))
			}
		}
	}
	for _, fw := range m.completed.frameworks() {
		for _, t := range m.completed.of(fw) {
			out.CompletedTasks = append(out.CompletedTasks, m.mesosTask(t))
		}
	}
	return out
}

// getStateLocked answers GET_STATE. Caller holds m.mu.
func (m *Master) getStateLocked() *mmaster.Response_GetState {
	return &mmaster.Response_GetState{GetTasks: m.getTasksLocked(), GetExecutors: m.getExecutorsLocked(),
		GetFrameworks: m.getFrameworksLocked(), GetAgents: m.getAgentsLocked()}
}

// stateScalars is r as /state shows it: scalar name -> value.
func stateScalars(r resources.Resources) map[string]float64 {
	out := map[string]float64{}
	for k, q := range r.Scalars {
		if q != 0 {
			out[resources.KindNames[k]] = q.Units()
		}
	}
	for _, e := range r.Extra {
		out[e.Name] = e.Value.Units()
	}
	return out
}

// Caller holds m.mu.
func stateTaskOf(t *task) operator.Task {
	st := operator.Task{ID: t.id, Name: t.info.Name, FrameworkID: t.fw, ExecutorID: t.executor, SlaveID: t.agent, State: t.state.String(), Resources: stateScalars(t.res)}
	if t.status != nil && t.status.Healthy != nil {
		h := *t.status.Healthy
		st.Healthy = &h
	}
	st.Statuses = stateStatuses(t.statuses)
	st.Container, st.ExecutorContainer = stateTaskContainers(&t.info) // statecontainer.go
	return st
}

// handleState serves a Mesos-shaped /state JSON document. Takes m.mu.
func (m *Master) handleState(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	who := auth.SubjectFrom(r.Context())
	doc := operator.State{Version: MesosVersion, AllotVersion: Version, ID: m.id, PID: "master@" + m.ln.Addr().String(),
		Hostname: m.info.GetHostname(), StartTime: float64(m.start.UnixNano()) / 1e9, Leader: "master@" + m.ln.Addr().String()}
	doc.Slaves = m.stateAgentsLocked()
	doc.Frameworks = m.visibleStateLocked(who, m.stateFrameworksLocked())
	doc.CompletedFrameworks = m.visibleStateLocked(who, m.stateCompletedFrameworksLocked())
	doc.ActivatedSlaves = len(doc.Slaves)
	doc.UnreachableAgents = m.stateUnreachableLocked()
	doc.UnreachableSlaves = len(doc.UnreachableAgents)
	if m.allocCfg.Reclaim {
		p := m.visiblePressureLocked(who, m.pressureLocked())
		doc.Pressure = &p
	}
	doc.Allocator = operator.Allocator{Sorter: m.allocCfg.Sorter.Name(),
		AgentSelection: m.allocCfg.AgentSelection.String(), Mode: m.allocCfg.Mode.String()}
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(doc)
}

// stateFrameworksLocked lists the frameworks for /state. Caller holds m.mu.
func (m *Master) stateFrameworksLocked() []operator.Framework {
	fws := []operator.Framework{} // [] when none, as Mesos writes it
	for _, id := range sortedKeys(m.frameworks) {
		fw := m.frameworks[id]
		f := operator.Framework{ID: id, Name: fw.info.Name, Role: fw.role, Active: fw.stream != nil && !fw.suppressed, Connected: fw.stream != nil,
			FailoverTO: fw.info.GetFailoverTimeout(), OfferCount: len(fw.offers), Tasks: []operator.Task{}, CompletedTasks: []operator.Task{},
			JobType: jobTypeOf(&fw.info), JobSize: fw.jobSize}
		if st, err := m.alloc.Framework(id); err == nil {
			f.UsedResources, f.Share = stateScalars(st.Allocated), st.Share
		}
		f.Unplaced = m.unplacedLocked(id) // placement.go
		f.Filters = []operator.Filter{}
		if fls, err := m.alloc.Filters(id); err == nil {
			for _, fl := range fls {
				f.Filters = append(f.Filters, operator.Filter{AgentID: fl.Agent, Until: float64(fl.Until.UnixNano()) / 1e9, Resources: stateScalars(fl.Resources)})
			}
		}
		f.Tasks, f.UnreachableTasks = stateTasksLocked(fw)
		for _, t := range m.completed.of(id) {
			f.CompletedTasks = append(f.CompletedTasks, stateTaskOf(t))
		}
		fws = append(fws, f)
	}
	return fws
}

// stateCompletedFrameworksLocked lists, as Mesos's completed_frameworks,
// the frameworks that are gone but whose finished tasks the master still
// keeps, so that a task's sandbox can be found after its framework ended
// (`allot logs` of an `allot run`). Caller holds m.mu.
func (m *Master) stateCompletedFrameworksLocked() []operator.Framework {
	removed := m.completed.removedFrameworks()
	out := make([]operator.Framework, 0, len(removed))
	for _, id := range removed {
		f := operator.Framework{ID: id, Tasks: []operator.Task{}, UnreachableTasks: []operator.Task{}, CompletedTasks: []operator.Task{},
			UsedResources: map[string]float64{}, Filters: []operator.Filter{}}
		if info := m.completed.info(id); info != nil {
			f.Name, f.Role = info.Name, info.GetRole()
		}
		for _, t := range m.completed.of(id) {
			f.CompletedTasks = append(f.CompletedTasks, stateTaskOf(t))
		}
		out = append(out, f)
	}
	return out
}

// stateAgentsLocked lists the agents for /state. Caller holds m.mu.
func (m *Master) stateAgentsLocked() []operator.Agent {
	agents := []operator.Agent{}
	for _, id := range sortedKeys(m.agents) {
		a := m.agents[id]
		ja := operator.Agent{ID: id, Hostname: a.rec.Hostname, PID: "slave(1)@" + a.rec.Address, Active: a.stream != nil, Resources: stateScalars(a.total), Usage: m.usage[id], Rates: m.ratesForStateLocked(id), Isolation: a.rec.Isolation}
		if st, err := m.alloc.Agent(id); err == nil {
			ja.Used = stateScalars(st.Total.Sub(st.Available))
		}
		m.stateAgentMaintLocked(&ja, a)
		ja.ReservedResources, ja.ReservedResourcesFull = a.stateReservations() // reservations.go
		agents = append(agents, ja)
	}
	return agents
}

func sortedKeys[V any](mp map[string]V) []string {
	out := make([]string, 0, len(mp))
	for k := range mp {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func splitKey(k string) (string, string) {
	for i := 0; i < len(k); i++ {
		if k[i] == '/' {
			return k[:i], k[i+1:]
		}
	}
	return k, ""
}

// updateWeightsLocked applies UPDATE_WEIGHTS and answers once the weights
// are durable. Caller holds m.mu; it is released while the registry writes.
func (m *Master) updateWeightsLocked(uw *mmaster.Call_UpdateWeights) (*mmaster.Response, error) {
	if uw == nil {
		return nil, api.Errorf(http.StatusBadRequest, "UPDATE_WEIGHTS call without update_weights")
	}
	next := map[string]float64{}
	for _, wi := range uw.WeightInfos {
		if wi.GetRole() == "" {
			return nil, api.Errorf(http.StatusBadRequest, "UPDATE_WEIGHTS: weight_info without a role")
		}
		if err := resources.ValidateRole(wi.GetRole()); err != nil {
			return nil, api.Errorf(http.StatusBadRequest, "UPDATE_WEIGHTS: %v", err)
		}
		next[wi.GetRole()] = wi.Weight
	}
	if err := m.alloc.SetWeights(next); err != nil {
		return nil, api.Errorf(http.StatusBadRequest, "UPDATE_WEIGHTS: %v", err)
	}
	for k, v := range next {
		m.weights[k] = v
	}
	cfg := m.reg.Config()
	cfg.Weights = map[string]float64{}
	for k, v := range m.weights {
		cfg.Weights[k] = v
	}
	m.triggerAllocation()
	// Answer only once the weights are durable; do not hold the lock
	// through the disk write.
	m.mu.Unlock()
	err := m.rep.proposeWait(&api.Command{Type: api.CommandType_CONFIG_SET, Config: cfg})
	m.mu.Lock()
	if err != nil {
		return nil, api.Errorf(http.StatusServiceUnavailable, "UPDATE_WEIGHTS: registry: %v", err)
	}
	return nil, nil
}

// mesosMetrics is the Prometheus registry as GET_METRICS reports it.
func (m *Master) mesosMetrics() ([]mesos.Metric, error) {
	mfs, err := m.m.reg.Gather()
	if err != nil {
		return nil, err
	}
	var out []mesos.Metric
	for _, mf := range mfs {
		for _, mm := range mf.Metric {
			var v float64
			switch {
			case mm.Counter != nil:
				v = mm.Counter.GetValue()
			case mm.Gauge != nil:
				v = mm.Gauge.GetValue()
			case mm.Histogram != nil:
				v = float64(mm.Histogram.GetSampleCount())
			default:
				continue
			}
			name := mf.GetName()
			for _, l := range mm.Label {
				name += "/" + l.GetValue()
			}
			vv := v
			out = append(out, mesos.Metric{Name: name, Value: &vv})
		}
	}
	return append(out, m.snapshotMetricList()...), nil
}
