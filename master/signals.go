package master

import (
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
)

// request declares the framework's per-task demand (characterized mode):
// the first request's resources are the task vector; its quantity may be
// given as a scalar resource named "tasks" (unlimited when absent).
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
