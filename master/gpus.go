package master

import (
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/allocator"
)

// GPU filtering (Mesos's --filter_gpu_resources, on by default): a
// framework that did not declare the GPU_RESOURCES capability is offered
// nothing of an agent that has GPUs, so that a CPU-only job cannot fill a
// GPU machine and leave its GPUs unreachable. Mesos decides this inside
// its allocator; allot decides it where offers are made, and hands such a
// decision back to the allocator with a filter, so the agent's resources
// go to other frameworks in the meantime.

// gpuFilterSeconds is how long a filtered framework is not offered that
// agent again. Long, because the answer cannot change until the framework
// re-subscribes or revives (which clears filters and asks again).
const gpuFilterSeconds = 300

// gpuFilteredLocked reports whether d must not be offered to fw because
// fw lacks GPU_RESOURCES and the agent a has GPUs; if so, d's resources
// have gone back to the allocator. Caller holds m.mu.
func (m *Master) gpuFilteredLocked(fw *framework, a *agentState, d allocator.Offer) bool {
	if m.cfg.NoFilterGPUResources || a.total.Scalar("gpus") == 0 ||
		frameworkCapable(fw, mesos.FrameworkInfo_Capability_GPU_RESOURCES) {
		return false
	}
	m.allocOK("recover", m.recoverAs(d.Framework, d.Agent, d.Role, d.Resources, &allocator.Filter{RefuseSeconds: gpuFilterSeconds}),
		"framework_id", d.Framework, "agent_id", d.Agent)
	m.m.gpuFiltered.Inc()
	if e := m.log.Debug(); e.Enabled() {
		e.Str("framework_id", fw.id).Str("agent_id", d.Agent).Msg("agent has GPUs and framework lacks GPU_RESOURCES; not offered")
	}
	return true
}

// gpuUnplacedLocked rewords a Filtered placement reason whose filters are
// this file's: when every agent with room that refused fw has GPUs and fw
// lacks GPU_RESOURCES, the allocator's "declined with a filter" would
// blame the framework for a decision the master made. Caller holds m.mu.
func (m *Master) gpuUnplacedLocked(u *allocator.Unplaced) {
	if u.Kind != allocator.Filtered || len(u.Agents) == 0 || m.cfg.NoFilterGPUResources {
		return
	}
	fw, ok := m.frameworks[u.Framework]
	if !ok || frameworkCapable(fw, mesos.FrameworkInfo_Capability_GPU_RESOURCES) {
		return
	}
	for _, id := range u.Agents {
		if a, ok := m.agents[id]; !ok || a.total.Scalar("gpus") == 0 {
			return
		}
	}
	n := fmt.Sprintf("%d agents", len(u.Agents))
	if len(u.Agents) == 1 {
		n = "1 agent"
	}
	u.Dimension = "gpus"
	u.Message = fmt.Sprintf("the agents with room (%s) have GPUs and the framework lacks the GPU_RESOURCES capability: "+
		"the master offers an agent with GPUs only to frameworks that declare it (--filter-gpu-resources; allot run --gpus declares it)", n)
}
