package agent

import "github.com/allot-sched/allot/agent/nslaunch"

// gpuSpec fills the device part of ex's container Spec: the device files
// of the GPUs assigned to it. Nothing yet: GPUs are named to the
// container by environment only (gpu_isolator.go).
func (a *Agent) gpuSpec(ex *executor, s *nslaunch.Spec) error { return nil }

// releaseGPUDevices frees what gpuSpec set up for container cid.
func (a *Agent) releaseGPUDevices(cid string) {}
