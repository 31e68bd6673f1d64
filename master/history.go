package master

import (
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/master/registry"
)

// DefaultMaxCompletedTasksPerFramework and DefaultMaxCompletedFrameworks
// are the defaults of Config's bounds of the completed history: the
// registry's, which are Mesos's.
const (
	DefaultMaxCompletedTasksPerFramework = registry.DefaultMaxCompletedTasksPerFramework
	DefaultMaxCompletedFrameworks        = registry.DefaultMaxCompletedFrameworks
)

// completedTasks is the leader's completed history: the registry's, decoded,
// under the same bounds applied in the same order. Guarded by Master.mu.
type completedTasks struct {
	perFw, maxFws int
	byFw          map[string][]*task
	fws           []string         // removed frameworks with completed tasks, oldest first
	index         map[string]*task // taskKey -> the newest completed task of that id
	// infos is each removed framework's FrameworkInfo (of those in fws),
	// so that completed_frameworks keep their names and roles.
	infos map[string]*mesos.FrameworkInfo
}

func newCompletedTasks(perFw, maxFws int) *completedTasks {
	perFw, maxFws = registry.Bounds(perFw, maxFws)
	return &completedTasks{perFw: perFw, maxFws: maxFws, byFw: map[string][]*task{}, index: map[string]*task{}, infos: map[string]*mesos.FrameworkInfo{}}
}

// add appends t to its framework's completed tasks.
func (c *completedTasks) add(t *task) {
	list := append(c.byFw[t.fw], t)
	for len(list) > c.perFw {
		c.unindex(list[0])
		list = list[1:]
	}
	c.byFw[t.fw] = list
	c.index[registry.TaskKey(t.fw, t.id)] = t
}

func (c *completedTasks) unindex(t *task) {
	if k := registry.TaskKey(t.fw, t.id); c.index[k] == t {
		delete(c.index, k)
	}
}

// frameworkRemoved keeps fw's completed tasks, and its info (nil if not
// known), among the newest maxFws removed frameworks'.
func (c *completedTasks) frameworkRemoved(fw string, info *mesos.FrameworkInfo) {
	if len(c.byFw[fw]) == 0 {
		return
	}
	c.fws = append(c.fws, fw)
	if info != nil {
		c.infos[fw] = info
	}
	for len(c.fws) > c.maxFws {
		for _, t := range c.byFw[c.fws[0]] {
			c.unindex(t)
		}
		delete(c.byFw, c.fws[0])
		delete(c.infos, c.fws[0])
		c.fws = c.fws[1:]
	}
}

// info is the removed framework fw's FrameworkInfo, nil if not known.
func (c *completedTasks) info(fw string) *mesos.FrameworkInfo { return c.infos[fw] }

// of lists fw's completed tasks, oldest first.
func (c *completedTasks) of(fw string) []*task { return c.byFw[fw] }

// get is the completed task id of framework fw, nil if none.
func (c *completedTasks) get(fw, id string) *task { return c.index[registry.TaskKey(fw, id)] }

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

// completeRemovedTasksLocked moves the tasks of fw, which is being
// removed, to its completed history: a task still running ends
// TASK_KILLED, REASON_FRAMEWORK_REMOVED, as Mesos's master records the
// tasks of a removed framework (the agent is told to shut the framework
// down). It adds each task's agent to hosts. The TASK_COMPLETE commands
// are proposed before the caller's FRAMEWORK_REMOVE, so the registry keeps
// the tasks as completed. Caller holds m.mu.
func (m *Master) completeRemovedTasksLocked(fw *framework, hosts map[string]bool) {
	now := float64(m.clock.Now().UnixNano()) / 1e9
	for _, id := range sortedKeys(fw.tasks) {
		t := fw.tasks[id]
		hosts[t.agent] = true
		if !taskstate.IsTerminal(t.state) {
			m.taskEndCountLocked(mesos.TASK_KILLED) // as Mesos ends a removed framework's tasks
			msg := "Framework " + fw.id + " removed"
			st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: t.id}, State: mesos.TASK_KILLED.Enum(), AgentID: &mesos.AgentID{Value: t.agent},
				Source: mesos.SOURCE_MASTER.Enum(), Reason: mesos.REASON_FRAMEWORK_REMOVED.Enum(), Message: &msg, Timestamp: &now}
			if t.executor != "" {
				st.ExecutorID = &mesos.ExecutorID{Value: t.executor}
			}
			t.state = mesos.TASK_KILLED
			t.setStatus(&st)
		}
		m.rep.propose(m.completeLocked(fw, t))
	}
}

// completedFrameworkEntriesLocked lists GET_FRAMEWORKS's
// completed_frameworks: the removed frameworks whose completed tasks are
// kept, oldest removal first. Caller holds m.mu.
func (m *Master) completedFrameworkEntriesLocked() []mmaster.Response_GetFrameworks_Framework {
	var out []mmaster.Response_GetFrameworks_Framework
	for _, id := range m.completed.removedFrameworks() {
		e := mmaster.Response_GetFrameworks_Framework{FrameworkInfo: mesos.FrameworkInfo{ID: &mesos.FrameworkID{Value: id}}}
		if info := m.completed.info(id); info != nil {
			e.FrameworkInfo = *info
			e.FrameworkInfo.ID = &mesos.FrameworkID{Value: id}
		}
		out = append(out, e)
	}
	return out
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
		var info *mesos.FrameworkInfo
		if rec := m.reg.CompletedFramework(fw); rec != nil {
			info = new(mesos.FrameworkInfo)
			if info.Unmarshal(rec.Info) != nil {
				info = nil
			}
		}
		m.completed.frameworkRemoved(fw, info)
	}
}

// agentRemovedLocked reports whether id names an agent this master removed
// or the registry remembers as removed (an AGENT_REMOVE still being
// committed is already in m.removedAgents). Caller holds m.mu.
func (m *Master) agentRemovedLocked(id string) bool {
	return id != "" && (m.removedAgents[id] || m.reg.AgentRemoved(id))
}
