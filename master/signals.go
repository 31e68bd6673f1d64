package master

import (
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
)

// Signals: wire data that informs allocation, turned into allocator events
// (DESIGN.md, "the seam"). Today that is REQUEST (a framework's per-task
// demand), the refuse filters of DECLINE and ACCEPT, and agents' usage
// reports (kept for /state, not yet given to the allocator). FrameworkInfo
// labels (job size, job type) belong here too.

// requestLocked declares the framework's per-task demand (characterized
// mode): the first request's resources are the task vector; its quantity
// may be given as a scalar resource named "tasks" (unlimited when absent).
// Caller holds m.mu.
//
// The first request may also carry an application demand (api.AppDemand,
// Prophet's executors and stage profile) as the pseudo-resource
// api.AppDemandResourceName; it goes to the allocator's SetAppDemand and
// into the framework's registry record, so a new leader has it too. A
// request with an application demand and no other resources declares no
// per-task demand.
func (m *Master) requestLocked(fw *framework, rq *scheduler.Call_Request) error {
	if len(rq.Requests) == 0 {
		return m.alloc.SetDemand(fw.id, allocator.Demand{})
	}
	app, rest, err := api.SplitAppDemand(rq.Requests[0].Resources)
	if err != nil {
		return api.Errorf(http.StatusBadRequest, "REQUEST: %v", err)
	}
	if app != nil {
		if err := m.appDemandLocked(fw, app); err != nil {
			return err
		}
		if len(rest) == 0 {
			m.triggerAllocation()
			return nil
		}
	}
	var d allocator.Demand
	d.Tasks = -1
	var list []mesos.Resource
	for _, res := range rest {
		if res.Name == "tasks" && res.GetType() == mesos.SCALAR {
			d.Tasks = int(res.GetScalar().GetValue())
			continue
		}
		list = append(list, res)
	}
	r, err := taskResources(list)
	if err != nil {
		return api.Errorf(http.StatusBadRequest, "REQUEST: %v", err)
	}
	d.Task = r
	if err := m.alloc.SetDemand(fw.id, d); err != nil {
		return api.Errorf(http.StatusBadRequest, "REQUEST: %v", err)
	}
	m.triggerAllocation()
	return nil
}

// appDemandLocked validates an application demand, gives it to the
// allocator and replicates it with the framework. Errors name the field
// (`REQUEST: allot.app_demand: stages[1].end: ...`). Caller holds m.mu.
func (m *Master) appDemandLocked(fw *framework, app *api.AppDemand) error {
	pd, err := app.ToProfile()
	if err != nil {
		return api.Errorf(http.StatusBadRequest, "REQUEST: %s: %v", api.AppDemandResourceName, err)
	}
	if err := m.alloc.SetAppDemand(fw.id, pd); err != nil {
		return api.Errorf(http.StatusBadRequest, "REQUEST: %s: %v", api.AppDemandResourceName, err)
	}
	fw.app = app
	m.rep.propose(&api.Command{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: m.frameworkRecordLocked(fw)})
	return nil
}

// restoreAppDemandLocked gives a recovered framework's replicated
// application demand back to the allocator. A demand the allocator refuses
// now (the sorter was switched to one that does not place applications)
// is logged, counted and dropped; the framework may declare again. Caller
// holds m.mu.
func (m *Master) restoreAppDemandLocked(fw *framework, app *api.AppDemand) {
	if app == nil {
		return
	}
	pd, err := app.ToProfile()
	if err == nil {
		err = m.alloc.SetAppDemand(fw.id, pd)
	}
	if m.allocOK("set_app_demand", err, "framework_id", fw.id) {
		fw.app = app
	}
}

// usageLocked records an agent's usage report. Caller holds m.mu.
func (m *Master) usageLocked(a *agentState, u *api.Usage) {
	m.usage[a.rec.Id] = u
}

// filterOf is the allocator filter a DECLINE or ACCEPT asks for:
// refuse_seconds, Mesos's default 5 s when absent.
func filterOf(f *mesos.Filters) *allocator.Filter {
	rs := allocator.DefaultRefuseSeconds
	if f != nil && f.RefuseSeconds != nil {
		rs = *f.RefuseSeconds
	}
	return &allocator.Filter{RefuseSeconds: rs}
}
