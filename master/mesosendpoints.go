package master

import (
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/resources"
)

// The read endpoints that monitoring tools and dashboards written for Mesos
// scrape, in Mesos's JSON shapes: /metrics/snapshot (mesosmetrics.go),
// /master/state-summary, /master/slaves and /master/frameworks. Each reads
// live state under m.mu, as /state does, and leaves out what the caller
// may not view (view_frameworks), as /state does.

// summaryStates are the task states Mesos's /state-summary counts for
// each agent and framework, under the states' names.
var summaryStates = []mesos.TaskState{mesos.TASK_STAGING, mesos.TASK_STARTING, mesos.TASK_RUNNING, mesos.TASK_KILLING,
	mesos.TASK_FINISHED, mesos.TASK_KILLED, mesos.TASK_FAILED, mesos.TASK_LOST, mesos.TASK_ERROR, mesos.TASK_UNREACHABLE}

// taskCounts counts tasks by state, by framework and by agent.
type taskCounts struct {
	byFw, byAgent map[string]map[mesos.TaskState]int
	// fwAgents and agentFws: which agents a framework has tasks on, and
	// the reverse (Mesos's slave_ids and framework_ids).
	fwAgents, agentFws map[string]map[string]bool
}

func (c *taskCounts) add(t *task) {
	for _, p := range []struct {
		m     map[string]map[mesos.TaskState]int
		k     string
		links map[string]map[string]bool
		to    string
	}{{c.byFw, t.fw, c.fwAgents, t.agent}, {c.byAgent, t.agent, c.agentFws, t.fw}} {
		if p.m[p.k] == nil {
			p.m[p.k], p.links[p.k] = map[mesos.TaskState]int{}, map[string]bool{}
		}
		p.m[p.k][t.state]++
		if !taskstate.IsTerminal(t.state) {
			p.links[p.k][p.to] = true
		}
	}
}

// countTasksLocked counts the live and completed tasks of the frameworks
// who may view. Caller holds m.mu.
func (m *Master) countTasksLocked(who auth.Subject) *taskCounts {
	c := &taskCounts{byFw: map[string]map[mesos.TaskState]int{}, byAgent: map[string]map[mesos.TaskState]int{},
		fwAgents: map[string]map[string]bool{}, agentFws: map[string]map[string]bool{}}
	for id, fw := range m.frameworks {
		if !m.mayViewFrameworkLocked(who, id) {
			continue
		}
		for _, t := range fw.tasks {
			c.add(t)
		}
		for _, t := range m.completed.of(id) {
			c.add(t)
		}
	}
	return c
}

// withStates adds the TASK_* counts and the ids of links (sorted) under
// key to entry.
func withStates(entry map[string]any, counts map[mesos.TaskState]int, key string, links map[string]bool) map[string]any {
	for _, s := range summaryStates {
		entry[s.String()] = counts[s]
	}
	entry[key] = sortedKeys(links)
	return entry
}

// offeredByLocked sums the outstanding offers by agent and by framework.
// Caller holds m.mu.
func (m *Master) offeredByLocked() (byAgent, byFw map[string]resources.Resources) {
	byAgent, byFw = map[string]resources.Resources{}, map[string]resources.Resources{}
	for _, o := range m.offers {
		byAgent[o.agent] = byAgent[o.agent].Add(o.res)
		byFw[o.fw] = byFw[o.fw].Add(o.res)
	}
	return byAgent, byFw
}

// agentUsedLocked is what tasks and executors hold on agent id: the
// allocator's allocation less the outstanding offers. Caller holds m.mu.
func (m *Master) agentUsedLocked(id string, offered resources.Resources) resources.Resources {
	st, err := m.alloc.Agent(id)
	if err != nil {
		return resources.Resources{}
	}
	held := st.Total.Sub(st.Available)
	return held.Sub(offered)
}

// handleStateSummary serves /master/state-summary as Mesos's.
func (m *Master) handleStateSummary(w http.ResponseWriter, r *http.Request) {
	who := auth.SubjectFrom(r.Context())
	m.mu.Lock()
	counts := m.countTasksLocked(who)
	offAgent, offFw := m.offeredByLocked()
	slaves := []map[string]any{}
	for _, id := range sortedKeys(m.agents) {
		a := m.agents[id]
		e := map[string]any{"id": id, "pid": "slave(1)@" + a.rec.Address, "hostname": a.rec.Hostname,
			"registered_time": float64(a.rec.RegisteredUnixNano) / 1e9, "resources": stateScalars(a.total),
			"used_resources": stateScalars(m.agentUsedLocked(id, offAgent[id])), "offered_resources": stateScalars(offAgent[id]),
			"reserved_resources": map[string]any{}, "unreserved_resources": stateScalars(a.total),
			"attributes": a.rec.Attributes, "active": a.stream != nil, "version": Version}
		if a.rec.Attributes == nil {
			e["attributes"] = map[string]string{}
		}
		slaves = append(slaves, withStates(e, counts.byAgent[id], "framework_ids", counts.agentFws[id]))
	}
	fws := []map[string]any{}
	for _, id := range sortedKeys(m.frameworks) {
		if !m.mayViewFrameworkLocked(who, id) {
			continue
		}
		fw := m.frameworks[id]
		e := map[string]any{"id": id, "name": fw.info.Name, "hostname": fw.info.GetHostname(), "webui_url": fw.info.GetWebUiURL(),
			"capabilities": frameworkCapabilities(&fw.info), "active": fw.stream != nil, "connected": fw.stream != nil, "recovered": false,
			"used_resources": map[string]float64{}, "offered_resources": stateScalars(offFw[id])}
		if st, err := m.alloc.Framework(id); err == nil {
			e["used_resources"] = stateScalars(st.Allocated.Sub(offFw[id]))
		}
		fws = append(fws, withStates(e, counts.byFw[id], "slave_ids", counts.fwAgents[id]))
	}
	doc := map[string]any{"hostname": m.info.GetHostname(), "slaves": slaves, "frameworks": fws}
	m.mu.Unlock()
	writeJSON(w, doc)
}

// frameworkCapabilities is info's capabilities by name, as Mesos's JSON.
func frameworkCapabilities(info *mesos.FrameworkInfo) []string {
	out := []string{}
	for _, c := range info.Capabilities {
		out = append(out, c.Type.String())
	}
	return out
}

// handleSlaves serves /master/slaves: the agents as /state lists them.
func (m *Master) handleSlaves(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	agents := m.stateAgentsLocked()
	m.mu.Unlock()
	if agents == nil {
		agents = []operator.Agent{}
	}
	writeJSON(w, map[string]any{"slaves": agents, "recovered_slaves": []any{}})
}

// handleFrameworks serves /master/frameworks: the frameworks and the
// completed ones as /state lists them, and no unregistered ones (allot
// has none: a framework is known once it subscribed).
func (m *Master) handleFrameworks(w http.ResponseWriter, r *http.Request) {
	who := auth.SubjectFrom(r.Context())
	m.mu.Lock()
	fws := m.visibleStateLocked(who, m.stateFrameworksLocked())
	done := m.visibleStateLocked(who, m.stateCompletedFrameworksLocked())
	m.mu.Unlock()
	if fws == nil {
		fws = []operator.Framework{}
	}
	writeJSON(w, map[string]any{"frameworks": fws, "completed_frameworks": done, "unregistered_frameworks": []any{}})
}
