package main

import (
	"strconv"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/resources"
)

// gpuSpec is allot run's --gpus as a resource spec suffix ("" for none; a
// negative count is left for resources.Parse to refuse).
func gpuSpec(n int) string {
	if n == 0 {
		return ""
	}
	return ";gpus:" + strconv.Itoa(n)
}

// runCapabilities declares GPU_RESOURCES only when the task needs GPUs:
// masters keep agents with GPUs from frameworks without it
// (--filter-gpu-resources), so a CPU-only allot run stays off them.
func runCapabilities(need resources.Resources) []mesos.FrameworkInfo_Capability {
	if need.Scalar("gpus") == 0 {
		return nil
	}
	return []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_GPU_RESOURCES}}
}
