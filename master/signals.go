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
func (m *Master) requestLocked(fw *framework, rq *scheduler.Call_Request) error {
	if len(rq.Requests) == 0 {
		return m.alloc.SetDemand(fw.id, allocator.Demand{})
	}
	var d allocator.Demand
	d.Tasks = -1
	var list []mesos.Resource
	for _, res := range rq.Requests[0].Resources {
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
