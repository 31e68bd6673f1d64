package master

import (
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
)

// Signals: wire data that informs allocation, turned into allocator events
// (DESIGN.md, "the seam"). Today that is REQUEST (a framework's per-task
// demand), the refuse filters of DECLINE and ACCEPT, agents' usage reports
// (turned into rates, shown in /state and given to the allocator with
// the Usage signal) and the job type FrameworkInfo label (the JobType signal).

// requestLocked declares the framework's per-task demand (characterized
// mode): the first request's resources are the task vector; its quantity
// may be given as a scalar resource named "tasks" (unlimited when absent).
// Caller holds m.mu.
//
// The first request may also carry an application demand (api.AppDemand,
// Prophet's executors and stage profile) as the pseudo-resource
// api.AppDemandResourceName; it goes to the allocator as an AppDemand signal and
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
	js, rest, err := api.SplitJobSize(rest)
	if err != nil {
		return api.Errorf(http.StatusBadRequest, "REQUEST: %v", err)
	}
	if app != nil {
		if err := m.appDemandLocked(fw, app); err != nil {
			return err
		}
	}
	if js != nil {
		if err := m.requestJobSizeLocked(fw, js); err != nil {
			return err
		}
	}
	if (app != nil || js != nil) && len(rest) == 0 {
		m.triggerAllocation()
		return nil
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
	if err := m.alloc.Observe(policy.AppDemand{Framework: fw.id, Demand: pd}); err != nil {
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
		err = m.alloc.Observe(policy.AppDemand{Framework: fw.id, Demand: pd})
	}
	if m.allocOK("set_app_demand", err, "framework_id", fw.id) {
		fw.app = app
	}
}

// usageLocked records an agent's usage report and, from it and the one
// before, the agent's rates over the interval between them (/state), which
// the allocator observes. Rates without a CPU measurement (an agent older
// than cpus_total_seconds) are shown but not observed: the co-location
// goodness would read u_cpu = 0 as an idle node. A report that forms no
// rate (same timestamp, counters reset by a reboot) becomes the baseline
// for the next. Caller holds m.mu.
func (m *Master) usageLocked(a *agentState, u *api.Usage) {
	id := a.rec.Id
	prev := m.usage[id]
	m.usage[id] = u
	if prev == nil {
		return
	}
	r, err := api.RatesBetween(prev, u)
	if err != nil {
		m.log.Debug().Err(err).Str("agent_id", id).Msg("usage report forms no rate")
		return
	}
	if m.usageRates == nil {
		m.usageRates = map[string]api.UsageRates{}
	}
	m.usageRates[id] = r
	if !r.CPUMeasured || !a.inAlloc {
		return
	}
	m.allocOK("observe_usage", m.alloc.Observe(policy.Usage{Agent: id, Rates: policy.NodeUsage{CPU: r.CPU, IOWait: r.IOWait,
		DiskReadMBps: r.DiskReadMBps, DiskWriteMBps: r.DiskWriteMBps, NetRxMBps: r.NetRxMBps, NetTxMBps: r.NetTxMBps}}),
		"agent_id", id)
}

// ratesForStateLocked is agent id's latest rates, nil before two reports.
// Caller holds m.mu.
func (m *Master) ratesForStateLocked(id string) *operator.Rates {
	r, ok := m.usageRates[id]
	if !ok {
		return nil
	}
	out := &operator.Rates{Seconds: r.Seconds, CPUMeasured: r.CPUMeasured, CPU: r.CPU, IOWait: r.IOWait,
		DiskReadMBps: r.DiskReadMBps, DiskWriteMBps: r.DiskWriteMBps, NetRxMBps: r.NetRxMBps,
		NetTxMBps: r.NetTxMBps, DiskBusy: r.DiskBusy}
	for _, e := range r.Executors {
		out.Executors = append(out.Executors, operator.ExecRates{FrameworkID: e.FrameworkID, ExecutorID: e.ExecutorID, Reset: e.Reset,
			CPUCores: e.CPUCores, DiskReadMBps: e.DiskReadMBps, DiskWriteMBps: e.DiskWriteMBps, NetMeasured: e.NetMeasured,
			NetRxMBps: e.NetRxMBps, NetTxMBps: e.NetTxMBps})
	}
	return out
}

// JobTypeLabel is the FrameworkInfo label naming a framework's job type,
// which the co-location bandit (--sorter bandit) learns per: a label so
// that unmodified mesos-go frameworks can set it, replicated with the
// FrameworkInfo in the registry. Absent or empty: untyped.
const JobTypeLabel = "allot.job_type"

// jobTypeLocked tells the allocator fw's job type from its FrameworkInfo,
// at SUBSCRIBE, UPDATE_FRAMEWORK and when a new leader rebuilds. Caller
// holds m.mu.
func (m *Master) jobTypeLocked(fw *framework) {
	m.allocOK("set_job_type", m.alloc.Observe(policy.JobType{Framework: fw.id, Type: jobTypeOf(&fw.info)}), "framework_id", fw.id)
}

// jobTypeOf reads the JobTypeLabel (the last one, if repeated).
func jobTypeOf(info *mesos.FrameworkInfo) string {
	typ := ""
	for _, l := range info.GetLabels().GetLabels() {
		if l.GetKey() == JobTypeLabel {
			typ = l.GetValue()
		}
	}
	return typ
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
