package master

import (
	"errors"
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/resources"
)

// Authorization. Config.Authorizer (the --acls file)
// is asked at each point where the master knows both who is calling and
// what the call is about:
//
//	SUBSCRIBE                     register_frameworks, each role       scheduler.go subscribe -> authorizeSubscribe
//	ACCEPT: LAUNCH, LAUNCH_GROUP  run_tasks, the task's user           applyCallLocked -> authorizeLaunchesLocked
//	TEARDOWN (scheduler)          teardown_frameworks, its principal   applyCallLocked -> authorizeCallLocked
//	TEARDOWN (operator)           teardown_frameworks                  operatorCallAs -> operatorTeardown
//	POST /api/v1/allot/kill       kill_tasks, the framework's principal handleKillTask -> killTaskAs
//	UPDATE_WEIGHTS                update_weights, each role            operatorCallAs
//	MARK_AGENT_GONE               mark_agents_gone, the agent id       operatorCallAs
//	UPDATE/SET/REMOVE_QUOTA, /quota update_quota, each role              operatorCallAs -> rolesOperatorCall
//	GET_QUOTA, GET_ROLES, /roles  view_roles, each role (filter)       quotaStatus, rolesLocked
//	GET_FRAMEWORKS/TASKS/STATE    view_frameworks, view_tasks (filter) operatorCallAs -> filterResponseLocked
//	/state                        view_frameworks, view_tasks (filter) handleState -> visibleStateLocked
//	/pressure, /state's pressure  view_frameworks (filter)             handlePressure, handleState -> visiblePressureLocked
//	/timelines                    view_frameworks (filter executors)   handleTimelines -> visibleTimelinesLocked
//	/explain                      view_frameworks (403)                handleExplain
//	GET policy view               view_frameworks (withhold models)    handlePolicy -> policyView -> mayViewAllFrameworksLocked
//	/files/*                      access_sandboxes, executor's user    handleFilesProxy -> allowSandbox
//	POST sorter                   update_sorter                        handleSorterSwitch -> allowHTTP
//	raft peers, snapshots         manage_raft                          handleRaftChange, handleRestore, handleSnapshot
//
// A scheduler's calls after SUBSCRIBE act as the principal that subscribed
// (framework.subject), as Mesos authorizes a framework's launches by its
// registered principal. The subject is never read from FrameworkInfo: a
// client can write any principal there.

// authzState is the master's authorizer and its denial counter.
type authzState struct {
	authorizer auth.Authorizer // nil: permissive, no ACLs
	denials    *prometheus.CounterVec
}

// initAuthz sets up authorization from cfg and says at start which mode
// the master runs in: an operator must be able to see that a master without
// --acls lets every caller do everything.
func (m *Master) initAuthz() {
	m.authz.authorizer = m.cfg.Authorizer
	m.authz.denials = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "allot_master_authz_denials_total",
		Help: "Calls and objects the ACLs denied (view filtering included), by ACL action."}, []string{"action"})
	m.m.reg.MustRegister(m.authz.denials)
	if m.authz.authorizer == nil {
		m.log.Warn().Msg("authorization: no --acls given, so every caller may do everything (permissive, as Mesos without ACLs)")
		return
	}
	ev := m.log.Info()
	if s, ok := m.authz.authorizer.(interface{ Summary() string }); ok {
		ev = ev.Str("acls", s.Summary())
	}
	ev.Msg("authorization: ACLs in force")
}

// authorize asks the authorizer and turns a denial into a 403 that names
// the ACL; it logs and counts the denial. quiet (view filtering, asked for
// every object on every poll) only counts.
func (m *Master) authorize(who auth.Subject, act auth.Action, object string, quiet bool) error {
	if m.authz.authorizer == nil {
		return nil
	}
	err := m.authz.authorizer.Authorize(who, act, object)
	if err == nil {
		return nil
	}
	m.authz.denials.WithLabelValues(string(act)).Inc()
	if !quiet {
		ev := m.log.Warn().Str("action", string(act)).Str("object", object).Bool("authenticated", who.Authenticated).Str("principal", who.Principal)
		var de *auth.DeniedError
		if errors.As(err, &de) {
			ev = ev.Str("acl", de.ACL)
		}
		ev.Msg("authorization denied")
	}
	return denied(err)
}

// denied is a denial as an HTTP answer.
func denied(err error) error { return api.Errorf(http.StatusForbidden, "%v", err) }

// allowHTTP authorizes an HTTP request's caller and answers 403 if denied.
func (m *Master) allowHTTP(w http.ResponseWriter, r *http.Request, act auth.Action, object string) bool {
	if err := m.authorize(auth.SubjectFrom(r.Context()), act, object, false); err != nil {
		api.WriteError(w, err)
		return false
	}
	return true
}

// frameworkRoles is every role a FrameworkInfo asks for: register_frameworks
// is checked for each, as Mesos checks each role of a MULTI_ROLE framework.
func frameworkRoles(info *mesos.FrameworkInfo) []string {
	probe := &framework{}
	probe.setInfo(*info)
	if probe.multiRole && len(info.Roles) > 0 {
		return info.Roles
	}
	return []string{probe.role}
}

// authorizeSubscribe checks a SUBSCRIBE before anything is admitted.
func (m *Master) authorizeSubscribe(who auth.Subject, info *mesos.FrameworkInfo) error {
	for _, role := range frameworkRoles(info) {
		if err := m.authorize(who, auth.RegisterFrameworks, role, false); err != nil {
			return err
		}
	}
	return nil
}

// setSubjectLocked records who subscribed framework id: its later calls
// (launches, its own TEARDOWN) are authorized as that subject, and an
// operator's TEARDOWN names it as the framework's principal. Caller holds
// m.mu.
func (m *Master) setSubjectLocked(id string, who auth.Subject) {
	if fw := m.frameworks[id]; fw != nil {
		fw.subject = who
	}
}

// subjectPrincipal is the object of teardown_frameworks for fw: the
// principal it authenticated with, or none.
func (fw *framework) subjectPrincipal() string {
	if !fw.subject.Authenticated {
		return ""
	}
	return fw.subject.Principal
}

// authorizeCallLocked checks a subscribed framework's call that needs an
// ACL before it runs (ACCEPT is filtered task by task instead, in
// authorizeLaunchesLocked). Caller holds m.mu.
func (m *Master) authorizeCallLocked(fw *framework, call *scheduler.Call) error {
	if call.Type == scheduler.Call_TEARDOWN {
		return m.authorize(fw.subject, auth.TeardownFrameworks, fw.subjectPrincipal(), false)
	}
	return nil
}

// taskUser is the Unix user a task runs as: its command's user, else its
// executor's, else the framework's (as the agent picks it).
func taskUser(fwInfo *mesos.FrameworkInfo, t *mesos.TaskInfo, ex *mesos.ExecutorInfo) string {
	if u := t.GetCommand().GetUser(); u != "" {
		return u
	}
	if ex == nil {
		ex = t.Executor
	}
	if u := ex.GetCommand().GetUser(); u != "" {
		return u
	}
	if fwInfo == nil {
		return ""
	}
	return fwInfo.User
}

// deniedTask is a task run_tasks refused, with the denial.
type deniedTask struct {
	task *mesos.TaskInfo
	err  error
}

// authorizeLaunchesLocked returns acc without the launches run_tasks
// denies, and those tasks: as in Mesos, a denied task fails alone
// (TASK_ERROR) while the call's other tasks launch. A LAUNCH_GROUP is all
// or nothing, so one denied task denies its group. Caller holds m.mu.
func (m *Master) authorizeLaunchesLocked(fw *framework, acc *scheduler.Call_Accept) (*scheduler.Call_Accept, []deniedTask) {
	if m.authz.authorizer == nil || acc == nil {
		return acc, nil
	}
	out := *acc
	out.Operations = nil
	var refused []deniedTask
	for _, op := range acc.Operations {
		switch {
		case op.GetType() == mesos.Offer_Operation_LAUNCH && op.Launch != nil:
			var keep []mesos.TaskInfo
			for i := range op.Launch.TaskInfos {
				t := &op.Launch.TaskInfos[i]
				if err := m.authorize(fw.subject, auth.RunTasks, taskUser(&fw.info, t, nil), false); err != nil {
					refused = append(refused, deniedTask{t, err})
					continue
				}
				keep = append(keep, *t)
			}
			op.Launch = &mesos.Offer_Operation_Launch{TaskInfos: keep}
		case op.GetType() == mesos.Offer_Operation_LAUNCH_GROUP && op.LaunchGroup != nil:
			if errs := m.authorizeGroupLocked(fw, op.LaunchGroup); errs != nil {
				refused = append(refused, errs...)
				continue
			}
		}
		out.Operations = append(out.Operations, op)
	}
	return &out, refused
}

// authorizeGroupLocked checks every task of a group (and its executor's
// user); if one is denied, every task of the group is returned as denied
// with that reason. Caller holds m.mu.
func (m *Master) authorizeGroupLocked(fw *framework, lg *mesos.Offer_Operation_LaunchGroup) []deniedTask {
	users := []string{taskUser(&fw.info, &mesos.TaskInfo{}, &lg.Executor)}
	for i := range lg.TaskGroup.Tasks {
		users = append(users, taskUser(&fw.info, &lg.TaskGroup.Tasks[i], &lg.Executor))
	}
	for _, u := range users {
		if err := m.authorize(fw.subject, auth.RunTasks, u, false); err != nil {
			out := make([]deniedTask, 0, len(lg.TaskGroup.Tasks))
			for i := range lg.TaskGroup.Tasks {
				out = append(out, deniedTask{&lg.TaskGroup.Tasks[i], err})
			}
			return out
		}
	}
	return nil
}

// taskErrorsLocked tells fw its denied tasks failed: TASK_ERROR, reason
// TASK_UNAUTHORIZED, with the denial (which names the ACL) as message.
// They were never launched, so nothing else records them. Caller holds
// m.mu.
func (m *Master) taskErrorsLocked(fw *framework, refused []deniedTask) {
	now := float64(m.clock.Now().UnixNano()) / 1e9
	for _, d := range refused {
		msg := d.err.Error()
		st := mesos.TaskStatus{TaskID: d.task.TaskID, State: mesos.TASK_ERROR.Enum(), AgentID: &d.task.AgentID,
			Source: mesos.SOURCE_MASTER.Enum(), Reason: mesos.REASON_TASK_UNAUTHORIZED.Enum(), Message: &msg, Timestamp: &now}
		m.m.statusUpdates.WithLabelValues(mesos.TASK_ERROR.String()).Inc()
		m.taskEndCountLocked(mesos.TASK_ERROR)
		m.sendFrameworkLocked(fw, &schedEvent{Type: evUpdate, Update: &scheduler.Event_Update{Status: st}})
	}
}

// acceptLocked is ACCEPT: invalid offers fail its tasks (acceptdrop.go);
// otherwise the launches run_tasks allows are planned and carried out and
// the denied tasks fail with TASK_ERROR. Caller holds m.mu.
func (m *Master) acceptLocked(fw *framework, acc *scheduler.Call_Accept) error {
	if m.invalidOffersLocked(fw, acc) {
		return nil
	}
	allowed, refused := m.authorizeLaunchesLocked(fw, acc)
	p, err := m.planAcceptLocked(fw, allowed)
	if err != nil {
		return err
	}
	m.launchLocked(fw, p)
	m.taskErrorsLocked(fw, refused)
	return nil
}

// unreservedIfEmpty is role "" as the allocator names it.
func unreservedIfEmpty(role string) string {
	if role == "" {
		return resources.Unreserved
	}
	return role
}

// operatorCallAs is operatorCall for caller who: it authorizes the calls
// that change something and leaves out of the answers of GET_FRAMEWORKS,
// GET_TASKS and GET_STATE what who may not view. Takes m.mu.
func (m *Master) operatorCallAs(who auth.Subject, call *mmaster.Call) (*mmaster.Response, error) {
	switch call.Type {
	case mmaster.Call_UPDATE_WEIGHTS:
		for _, wi := range call.GetUpdateWeights().GetWeightInfos() {
			if err := m.authorize(who, auth.UpdateWeights, unreservedIfEmpty(wi.GetRole()), false); err != nil {
				return nil, err
			}
		}
	case mmaster.Call_TEARDOWN:
		return nil, m.operatorTeardown(who, call.Teardown)
	case mmaster.Call_MARK_AGENT_GONE:
		if err := m.authorize(who, auth.MarkAgentsGone, call.GetMarkAgentGone().GetAgentID().Value, false); err != nil {
			return nil, err
		}
	case mmaster.Call_RESERVE_RESOURCES, mmaster.Call_UNRESERVE_RESOURCES, mmaster.Call_CREATE_VOLUMES,
		mmaster.Call_DESTROY_VOLUMES, mmaster.Call_GROW_VOLUME, mmaster.Call_SHRINK_VOLUME:
		return m.operatorResources(who, call) // resvops.go
	case mmaster.Call_GET_OPERATIONS:
		return m.getOperations(who), nil // opfeedback.go
	}
	if isMaintenanceCall(call.Type) {
		return m.maintenanceCallAs(who, call) // maintenance.go: authorized machine by machine, agent by agent
	}
	if resp, ok, err := m.rolesOperatorCall(who, call); ok {
		return resp, err
	}
	resp, err := m.operatorCall(call)
	if err != nil || resp == nil || m.authz.authorizer == nil {
		return resp, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.filterResponseLocked(who, resp)
	return resp, nil
}

// operatorTeardown is the operator API's TEARDOWN: who must be allowed to
// tear down the framework's principal. Takes m.mu.
func (m *Master) operatorTeardown(who auth.Subject, td *mmaster.Call_Teardown) error {
	if td == nil || td.FrameworkID.Value == "" {
		return api.Errorf(http.StatusBadRequest, "TEARDOWN call without teardown.framework_id")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	fw := m.frameworks[td.FrameworkID.Value]
	if fw == nil {
		return api.Errorf(http.StatusNotFound, "TEARDOWN: framework %s is not known to this master", td.FrameworkID.Value)
	}
	if err := m.authorize(who, auth.TeardownFrameworks, fw.subjectPrincipal(), false); err != nil {
		return err
	}
	m.removeFrameworkLocked(fw, "operator TEARDOWN")
	return nil
}
