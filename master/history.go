package master

import (
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// What the registry remembers of things that are over: each framework's
// completed tasks, so that /state and GET_TASKS of a newly elected leader
// list what the previous one did (as Mesos's master keeps them, bounded by
// --max_completed_tasks_per_framework and --max_completed_frameworks), and
// the ids of removed agents, which may never re-register under them (as
// Mesos's registry kept its removed agents before partition awareness).

// DefaultMaxCompletedTasksPerFramework and DefaultMaxCompletedFrameworks
// are Mesos's defaults of the flags of the same names.
const (
	DefaultMaxCompletedTasksPerFramework = 1000
	DefaultMaxCompletedFrameworks        = 50
)

// maxRemovedAgents bounds the removed agent ids the registry keeps, oldest
// forgotten first, as Mesos's --registry_max_agent_count (its default) does.
// A constant, not a flag: every replica must trim the same ids.
const maxRemovedAgents = 100 * 1024

// registryHistory is the registry's completed tasks and removed agents.
// Every slice is in the order of the log, so replicas that applied the same
// log hold equal histories and write equal snapshots. Guarded by
// Registry.mu.
type registryHistory struct {
	completed    map[string][]*api.TaskRecord // framework -> completed tasks, oldest first
	completedFws []string                     // removed frameworks with completed tasks, oldest first
	removed      map[string]bool              // removed agent ids
	removedOrder []string                     // the same, oldest first
	// restoring is the order in which a snapshot being restored named
	// frameworks in its completed tasks (restored clears it).
	restoring []string
}

func newRegistryHistory() registryHistory {
	return registryHistory{completed: map[string][]*api.TaskRecord{}, removed: map[string]bool{}}
}

func orLimit(limit, def int) int {
	if limit <= 0 {
		return def
	}
	return limit
}

// complete appends t to its framework's completed tasks, keeping the newest
// limit (0: the default).
func (h *registryHistory) complete(t *api.TaskRecord, limit int) {
	limit = orLimit(limit, DefaultMaxCompletedTasksPerFramework)
	list := append(h.completed[t.FrameworkId], t)
	if len(list) > limit {
		list = list[len(list)-limit:]
	}
	h.completed[t.FrameworkId] = list
}

// restoreTask appends t as a snapshot lists it (already trimmed).
func (h *registryHistory) restoreTask(t *api.TaskRecord) {
	if len(h.completed[t.FrameworkId]) == 0 {
		h.restoring = append(h.restoring, t.FrameworkId)
	}
	h.completed[t.FrameworkId] = append(h.completed[t.FrameworkId], t)
}

// restored finishes a snapshot restore: the frameworks with completed tasks
// but no record are the removed ones, in the order the snapshot wrote them.
func (h *registryHistory) restored(frameworks map[string]*api.FrameworkRecord) {
	h.completedFws = nil
	for _, fw := range h.restoring {
		if frameworks[fw] == nil {
			h.completedFws = append(h.completedFws, fw)
		}
	}
	h.restoring = nil
}

// frameworkRemoved keeps the removed framework's completed tasks among
// those of the newest limit (0: the default) removed frameworks.
func (h *registryHistory) frameworkRemoved(fw string, limit int) {
	if len(h.completed[fw]) == 0 {
		delete(h.completed, fw)
		return
	}
	limit = orLimit(limit, DefaultMaxCompletedFrameworks)
	h.completedFws = append(h.completedFws, fw)
	for len(h.completedFws) > limit {
		delete(h.completed, h.completedFws[0])
		h.completedFws = h.completedFws[1:]
	}
}

// removeAgent remembers id as removed, forgetting the oldest beyond
// maxRemovedAgents.
func (h *registryHistory) removeAgent(id string) {
	if id == "" || h.removed[id] {
		return
	}
	h.removed[id] = true
	h.removedOrder = append(h.removedOrder, id)
	for len(h.removedOrder) > maxRemovedAgents {
		delete(h.removed, h.removedOrder[0])
		h.removedOrder = h.removedOrder[1:]
	}
}

// historyRecords lists the history as snapshot records: the live
// frameworks' completed tasks by framework id, then the removed
// frameworks' in the order they were removed, then the removed agents.
func (r *Registry) historyRecords() []*api.SnapshotRecord {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*api.SnapshotRecord
	task := func(fw string) {
		for _, t := range r.hist.completed[fw] {
			out = append(out, &api.SnapshotRecord{Record: &api.SnapshotRecord_CompletedTask{CompletedTask: proto.Clone(t).(*api.TaskRecord)}})
		}
	}
	live := make([]string, 0, len(r.hist.completed))
	for fw := range r.hist.completed {
		if r.frameworks[fw] != nil {
			live = append(live, fw)
		}
	}
	sort.Strings(live)
	for _, fw := range live {
		task(fw)
	}
	for _, fw := range r.hist.completedFws {
		task(fw)
	}
	for _, id := range r.hist.removedOrder {
		out = append(out, &api.SnapshotRecord{Record: &api.SnapshotRecord_RemovedAgent{RemovedAgent: id}})
	}
	return out
}

// CompletedTasks returns the completed tasks: the live frameworks' by
// framework id, then the removed frameworks' oldest removal first; each
// framework's oldest first.
func (r *Registry) CompletedTasks() []*api.TaskRecord {
	var out []*api.TaskRecord
	for _, rec := range r.historyRecords() {
		if t := rec.GetCompletedTask(); t != nil {
			out = append(out, t)
		}
	}
	return out
}

// AgentRemoved reports whether the agent id was removed.
func (r *Registry) AgentRemoved(id string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.hist.removed[id]
}

// completedTasks is the leader's completed history: the registry's, decoded,
// under the same bounds applied in the same order. Guarded by Master.mu.
type completedTasks struct {
	perFw, maxFws int
	byFw          map[string][]*task
	fws           []string         // removed frameworks with completed tasks, oldest first
	index         map[string]*task // taskKey -> the newest completed task of that id
}

func newCompletedTasks(perFw, maxFws int) *completedTasks {
	return &completedTasks{perFw: orLimit(perFw, DefaultMaxCompletedTasksPerFramework), maxFws: orLimit(maxFws, DefaultMaxCompletedFrameworks),
		byFw: map[string][]*task{}, index: map[string]*task{}}
}

// add appends t to its framework's completed tasks.
func (c *completedTasks) add(t *task) {
	list := append(c.byFw[t.fw], t)
	for len(list) > c.perFw {
		c.unindex(list[0])
		list = list[1:]
	}
	c.byFw[t.fw] = list
	c.index[taskKey(t.fw, t.id)] = t
}

func (c *completedTasks) unindex(t *task) {
	if k := taskKey(t.fw, t.id); c.index[k] == t {
		delete(c.index, k)
	}
}

// frameworkRemoved keeps fw's completed tasks among the newest maxFws
// removed frameworks'.
func (c *completedTasks) frameworkRemoved(fw string) {
	if len(c.byFw[fw]) == 0 {
		return
	}
	c.fws = append(c.fws, fw)
	for len(c.fws) > c.maxFws {
		for _, t := range c.byFw[c.fws[0]] {
			c.unindex(t)
		}
		delete(c.byFw, c.fws[0])
		c.fws = c.fws[1:]
	}
}

// of lists fw's completed tasks, oldest first.
func (c *completedTasks) of(fw string) []*task { return c.byFw[fw] }

// get is the completed task id of framework fw, nil if none.
func (c *completedTasks) get(fw, id string) *task { return c.index[taskKey(fw, id)] }

// removedFrameworks lists the removed frameworks whose completed tasks are
// kept, oldest removal first.
func (c *completedTasks) removedFrameworks() []string { return c.fws }

// frameworks lists every framework with completed tasks: the live ones by
// id, then the removed ones.
func (c *completedTasks) frameworks() []string {
	removed := map[string]bool{}
	for _, fw := range c.fws {
		removed[fw] = true
	}
	var out []string
	for fw := range c.byFw {
		if !removed[fw] {
			out = append(out, fw)
		}
	}
	sort.Strings(out)
	return append(out, c.fws...)
}

// completeLocked moves t, which is over, from fw's live tasks to its
// completed history, and returns the registry command that does the same.
// Caller holds m.mu.
func (m *Master) completeLocked(fw *framework, t *task) *api.Command {
	delete(fw.tasks, t.id)
	m.tasksOn.forget(t)
	m.completed.add(t)
	return &api.Command{Type: api.CommandType_TASK_COMPLETE, Task: taskRecord(t), Limit: int32(m.completed.perFw)}
}

// recoverCompletedLocked refills the completed history from the registry
// after an election. Caller holds m.mu.
func (m *Master) recoverCompletedLocked() {
	var removed []string
	for _, rec := range m.reg.CompletedTasks() {
		if m.frameworks[rec.FrameworkId] == nil && len(m.completed.of(rec.FrameworkId)) == 0 {
			removed = append(removed, rec.FrameworkId)
		}
		m.completed.add(taskFromRecord(rec))
	}
	for _, fw := range removed {
		m.completed.frameworkRemoved(fw)
	}
}

// agentRemovedLocked reports whether id names an agent this master removed
// or the registry remembers as removed (an AGENT_REMOVE still being
// committed is already in m.removedAgents). Caller holds m.mu.
func (m *Master) agentRemovedLocked(id string) bool {
	return id != "" && (m.removedAgents[id] || m.reg.AgentRemoved(id))
}
