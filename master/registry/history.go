package registry

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
	// completedInfo is the record of each removed framework in
	// completedFws, so that its name outlives it.
	completedInfo map[string]*api.FrameworkRecord
	removed       map[string]bool // removed agent ids
	removedOrder  []string        // the same, oldest first
	// restoring is the order in which a snapshot being restored named
	// frameworks in its completed tasks (restored clears it).
	restoring []string
}

func newRegistryHistory() registryHistory {
	return registryHistory{completed: map[string][]*api.TaskRecord{}, completedInfo: map[string]*api.FrameworkRecord{}, removed: map[string]bool{}}
}

// Bounds are the completed-history bounds in force for the limits
// configured (0: the default), the same a command's Limit is read with.
func Bounds(perFw, maxFws int) (int, int) {
	return orLimit(perFw, DefaultMaxCompletedTasksPerFramework), orLimit(maxFws, DefaultMaxCompletedFrameworks)
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
	for fw := range h.completedInfo {
		if frameworks[fw] != nil || len(h.completed[fw]) == 0 {
			delete(h.completedInfo, fw)
		}
	}
}

// frameworkRemoved keeps the removed framework's completed tasks, and its
// record rec (nil if none), among those of the newest limit (0: the
// default) removed frameworks.
func (h *registryHistory) frameworkRemoved(fw string, rec *api.FrameworkRecord, limit int) {
	if len(h.completed[fw]) == 0 {
		delete(h.completed, fw)
		return
	}
	limit = orLimit(limit, DefaultMaxCompletedFrameworks)
	h.completedFws = append(h.completedFws, fw)
	if rec != nil {
		h.completedInfo[fw] = rec
	}
	for len(h.completedFws) > limit {
		delete(h.completed, h.completedFws[0])
		delete(h.completedInfo, h.completedFws[0])
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
		if rec := r.hist.completedInfo[fw]; rec != nil {
			out = append(out, &api.SnapshotRecord{Record: &api.SnapshotRecord_CompletedFramework{CompletedFramework: proto.Clone(rec).(*api.FrameworkRecord)}})
		}
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

// CompletedFramework is the record of a removed framework whose completed
// tasks are kept, nil if none.
func (r *Registry) CompletedFramework(id string) *api.FrameworkRecord {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if rec := r.hist.completedInfo[id]; rec != nil {
		return proto.Clone(rec).(*api.FrameworkRecord)
	}
	return nil
}

// AgentRemoved reports whether the agent id was removed.
func (r *Registry) AgentRemoved(id string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.hist.removed[id]
}
