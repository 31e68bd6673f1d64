package master

import (
	"net/http"
	"path"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/auth"
)

// View filtering: what a caller may not view is left out of an answer, not
// refused, as Mesos does, so one list serves every caller. Objects are
// Unix users: a framework's FrameworkInfo.user, a task's user (taskUser).
// A framework or task the master no longer knows the user of (a completed
// framework's, say) has no object: only ANY and NONE rules match it.

// frameworkUserLocked is framework id's user, "" if it is gone. Caller
// holds m.mu.
func (m *Master) frameworkUserLocked(id string) string {
	if fw := m.frameworks[id]; fw != nil {
		return fw.info.User
	}
	return ""
}

// findTaskLocked finds a live or completed task by framework and, when
// byExecutor, by its executor's id (a command task's executor id is its
// own). Caller holds m.mu.
func (m *Master) findTaskLocked(fwID, id string, byExecutor bool) *task {
	match := func(t *task) bool {
		return t.fw == fwID && (t.id == id || byExecutor && t.executor == id)
	}
	if fw := m.frameworks[fwID]; fw != nil {
		if t := fw.tasks[id]; t != nil {
			return t
		}
		for _, t := range fw.tasks {
			if match(t) {
				return t
			}
		}
	}
	for _, t := range m.completed.of(fwID) {
		if match(t) {
			return t
		}
	}
	return nil
}

// taskUserLocked is the user task id of framework fwID runs as, "" if
// unknown. Caller holds m.mu.
func (m *Master) taskUserLocked(fwID, id string, byExecutor bool) string {
	var info *mesos.FrameworkInfo
	if fw := m.frameworks[fwID]; fw != nil {
		info = &fw.info
	}
	if t := m.findTaskLocked(fwID, id, byExecutor); t != nil {
		return taskUser(info, &t.info, nil)
	}
	if info != nil {
		return info.User
	}
	return ""
}

func (m *Master) mayViewFrameworkLocked(who auth.Subject, id string) bool {
	return m.authorize(who, auth.ViewFrameworks, m.frameworkUserLocked(id), true) == nil
}

func (m *Master) mayViewTaskLocked(who auth.Subject, fwID, id string) bool {
	return m.authorize(who, auth.ViewTasks, m.taskUserLocked(fwID, id, false), true) == nil
}

// visibleStateLocked is the /state frameworks who may view, each with only
// the tasks who may view. Caller holds m.mu.
func (m *Master) visibleStateLocked(who auth.Subject, fws []operator.Framework) []operator.Framework {
	if m.authz.authorizer == nil {
		return fws
	}
	out := []operator.Framework{}
	for _, f := range fws {
		if !m.mayViewFrameworkLocked(who, f.ID) {
			continue
		}
		keep := func(ts []operator.Task) []operator.Task {
			if ts == nil {
				return nil
			}
			kept := []operator.Task{}
			for _, t := range ts {
				if m.mayViewTaskLocked(who, f.ID, t.ID) {
					kept = append(kept, t)
				}
			}
			return kept
		}
		f.Tasks, f.UnreachableTasks, f.CompletedTasks = keep(f.Tasks), keep(f.UnreachableTasks), keep(f.CompletedTasks)
		out = append(out, f)
	}
	return out
}

// filterResponseLocked leaves out of an operator answer the frameworks,
// their executors and the tasks who may not view. Caller holds m.mu.
func (m *Master) filterResponseLocked(who auth.Subject, resp *mmaster.Response) {
	if gf := resp.GetFrameworks; gf != nil {
		m.filterFrameworksLocked(who, gf)
	}
	if gt := resp.GetTasks; gt != nil {
		m.filterTasksLocked(who, gt)
	}
	if gs := resp.GetState; gs != nil {
		if gs.GetFrameworks != nil {
			m.filterFrameworksLocked(who, gs.GetFrameworks)
		}
		if gs.GetTasks != nil {
			m.filterTasksLocked(who, gs.GetTasks)
		}
		if ge := gs.GetExecutors; ge != nil {
			kept := ge.Executors[:0]
			for _, e := range ge.Executors {
				if m.mayViewFrameworkLocked(who, e.ExecutorInfo.GetFrameworkID().GetValue()) {
					kept = append(kept, e)
				}
			}
			ge.Executors = kept
		}
	}
}

func (m *Master) filterFrameworksLocked(who auth.Subject, gf *mmaster.Response_GetFrameworks) {
	keep := func(list []mmaster.Response_GetFrameworks_Framework) []mmaster.Response_GetFrameworks_Framework {
		kept := list[:0]
		for _, f := range list {
			if m.authorize(who, auth.ViewFrameworks, f.FrameworkInfo.User, true) == nil {
				kept = append(kept, f)
			}
		}
		return kept
	}
	gf.Frameworks, gf.CompletedFrameworks = keep(gf.Frameworks), keep(gf.CompletedFrameworks)
}

func (m *Master) filterTasksLocked(who auth.Subject, gt *mmaster.Response_GetTasks) {
	keep := func(list []mesos.Task) []mesos.Task {
		kept := list[:0]
		for _, t := range list {
			if m.mayViewTaskLocked(who, t.FrameworkID.Value, t.TaskID.Value) {
				kept = append(kept, t)
			}
		}
		return kept
	}
	gt.Tasks, gt.CompletedTasks = keep(gt.Tasks), keep(gt.CompletedTasks)
	gt.PendingTasks, gt.OrphanTasks = keep(gt.PendingTasks), keep(gt.OrphanTasks)
	gt.UnreachableTasks = keep(gt.UnreachableTasks)
}

// sandboxOwners is every (framework, executor) a sandbox path names, as
// /frameworks/F/executors/E anywhere in it after cleaning: each must be
// accessible, so a path cannot name one sandbox to reach another.
func sandboxOwners(p string) [][2]string {
	parts := strings.Split(path.Clean("/"+p), "/")
	var out [][2]string
	for i := 0; i+3 < len(parts); i++ {
		if parts[i] == "frameworks" && parts[i+2] == "executors" {
			out = append(out, [2]string{parts[i+1], parts[i+3]})
		}
	}
	return out
}

// allowSandbox authorizes a /files call: access_sandboxes for the user of
// each executor its path names (the executor's task's user, else its
// framework's); a path that names none has no object. Answers 403 if
// denied. Takes m.mu.
func (m *Master) allowSandbox(w http.ResponseWriter, r *http.Request) bool {
	if m.authz.authorizer == nil {
		return true
	}
	owners := sandboxOwners(r.URL.Query().Get("path"))
	m.mu.Lock()
	users := make([]string, 0, len(owners)+1)
	for _, o := range owners {
		users = append(users, m.taskUserLocked(o[0], o[1], true))
	}
	m.mu.Unlock()
	if len(users) == 0 {
		users = append(users, "")
	}
	for _, u := range users {
		if !m.allowHTTP(w, r, auth.AccessSandboxes, u) {
			return false
		}
	}
	return true
}

// mayViewEventLocked reports whether operator subscriber who may see ev:
// framework events need view_frameworks on the framework's user, task
// events view_tasks on the task's. Caller holds m.mu.
func (m *Master) mayViewEventLocked(who auth.Subject, ev *mmaster.Event) bool {
	if m.authz.authorizer == nil {
		return true
	}
	quietly := func(act auth.Action, user string) bool { return m.authorize(who, act, user, true) == nil }
	switch {
	case ev.TaskAdded != nil:
		t := &ev.TaskAdded.Task
		return m.mayViewTaskLocked(who, t.FrameworkID.Value, t.TaskID.Value)
	case ev.TaskUpdated != nil:
		return m.mayViewTaskLocked(who, ev.TaskUpdated.FrameworkID.Value, ev.TaskUpdated.Status.TaskID.Value)
	case ev.FrameworkAdded != nil:
		return quietly(auth.ViewFrameworks, ev.FrameworkAdded.Framework.FrameworkInfo.User)
	case ev.FrameworkUpdated != nil:
		return quietly(auth.ViewFrameworks, ev.FrameworkUpdated.Framework.FrameworkInfo.User)
	case ev.FrameworkRemoved != nil:
		return quietly(auth.ViewFrameworks, ev.FrameworkRemoved.FrameworkInfo.User)
	}
	return true
}

// The allocator's views, /pressure, /explain, /timelines and the policy
// view (and the UI's data routes onto them), name frameworks and their
// shares, so view_frameworks filters them as it filters /state.

// visiblePressureLocked is doc without the starving frameworks and the
// inverse offers of frameworks who may not view. Caller holds m.mu.
func (m *Master) visiblePressureLocked(who auth.Subject, doc operator.Pressure) operator.Pressure {
	if m.authz.authorizer == nil {
		return doc
	}
	starving := []operator.Starving{}
	for _, e := range doc.Starving {
		if m.mayViewFrameworkLocked(who, e.FrameworkID) {
			starving = append(starving, e)
		}
	}
	ios := []operator.InverseOffer{}
	for _, io := range doc.InverseOffers {
		if m.mayViewFrameworkLocked(who, io.FrameworkID) {
			ios = append(ios, io)
		}
	}
	doc.Starving, doc.InverseOffers = starving, ios
	return doc
}

// visibleTimelinesLocked leaves out of doc the executors of frameworks who
// may not view. The agents' availability stays: it is what every
// framework placing by it needs, and it names no framework. Caller holds
// m.mu.
func (m *Master) visibleTimelinesLocked(who auth.Subject, doc api.Timelines) api.Timelines {
	if m.authz.authorizer == nil {
		return doc
	}
	for i := range doc.Agents {
		a := &doc.Agents[i]
		if a.Executors == nil {
			continue
		}
		kept := []api.TimelineExecutor{}
		for _, x := range a.Executors {
			if m.mayViewFrameworkLocked(who, x.FrameworkID) {
				kept = append(kept, x)
			}
		}
		a.Executors = kept
	}
	return doc
}

// mayViewAllFrameworksLocked reports whether who may view every framework
// the master knows and any it no longer knows the user of (a gone one's,
// which a policy model may still remember). The policy models' state is
// each model's own JSON, which the master cannot filter piece by piece:
// it is shown whole to such a caller and withheld from others. Caller
// holds m.mu.
func (m *Master) mayViewAllFrameworksLocked(who auth.Subject) bool {
	if m.authz.authorizer == nil {
		return true
	}
	if m.authorize(who, auth.ViewFrameworks, "", true) != nil {
		return false
	}
	for id := range m.frameworks {
		if !m.mayViewFrameworkLocked(who, id) {
			return false
		}
	}
	return true
}
