package main

import (
	"flag"
	"time"
)

// isolationFlags are allot agent's flags for isolators: the families, disk
// quotas, cgroups and GPUs (docs/isolation.md, docs/gpus.md).
type isolationFlags struct {
	isolation, cgRoot, gpuRoot, smi string
	diskWatch                       time.Duration
	enforceDisk, cfs                bool
}

func addIsolationFlags(fs *flag.FlagSet) *isolationFlags {
	f := &isolationFlags{}
	fs.StringVar(&f.isolation, "isolation", "auto", "`isolators`: auto (cgroups when /sys/fs/cgroup is writable, else posix), cgroups/cpu,cgroups/mem (one cgroup v1 or v2 container per executor: cpu shares, memory limit with OOM kill, pids limit) or posix/cpu,posix/mem (usage sampled from /proc, an executor over its memory killed); add disk/du to any of them for sandbox disk quotas (not in auto), gpu/nvidia to give each task only the GPUs it was allocated (e.g. auto,gpu/nvidia; docs/gpus.md), and filesystem/linux,docker/runtime to run tasks in container images (auto includes them where the agent can make mount namespaces; docs/containers.md)")
	fs.DurationVar(&f.diskWatch, "container-disk-watch-interval", 15*time.Second, "with disk/du isolation, measure each executor's sandbox this often")
	fs.BoolVar(&f.enforceDisk, "enforce-container-disk-quota", true, "with disk/du isolation, kill an executor whose sandbox passes its disk allocation (false: only log it and count it in /state)")
	fs.BoolVar(&f.cfs, "cgroups-enable-cfs", false, "with cgroups isolation, also cap each executor's CPU time at its cpus (CFS quota), not only weight it")
	fs.StringVar(&f.gpuRoot, "gpu-device-root", "/", "`dir` under which GPU detection looks for dev/nvidia<N> and proc/driver/nvidia/gpus when nvidia-smi cannot answer (tests give a fake tree)")
	fs.StringVar(&f.smi, "nvidia-smi", "nvidia-smi", "`path` of the nvidia-smi asked first to detect GPUs (a bare name is looked up on PATH)")
	fs.StringVar(&f.cgRoot, "cgroups-root", "/sys/fs/cgroup", "`dir` where the cgroup hierarchies are mounted")
	return f
}
