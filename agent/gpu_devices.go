package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/allot-sched/allot/agent/nslaunch"
)

// GPUs inside an image: a container with a root filesystem of its own sees
// none of the host's /dev and none of its driver, so gpu/nvidia gives it
// its GPUs' device files and the control devices (nslaunch binds them into
// its /dev), the driver's tools and libraries read-only under
// /usr/local/nvidia (where Mesos's NVIDIA volume and the nvidia/cuda
// images put them), and the variables naming its GPUs. On the host's
// filesystem all of it is there already, and the devices cgroup
// (gpu_cgroup.go) decides what may be opened.

// nvidiaContainerDir is where the driver's files appear inside an image.
const nvidiaContainerDir = "/usr/local/nvidia"

// The driver's files an image gets: the tools, and the libraries that
// NVML and CUDA programs load (each with every versioned name the host
// has: libcuda.so, libcuda.so.1, libcuda.so.550.54.15).
var (
	nvidiaBinaries  = []string{"nvidia-smi", "nvidia-debugdump", "nvidia-persistenced", "nvidia-cuda-mps-control", "nvidia-cuda-mps-server"}
	nvidiaLibraries = []string{"libnvidia-ml.so", "libcuda.so", "libnvidia-ptxjitcompiler.so", "libnvidia-nvvm.so",
		"libnvidia-gpucomp.so", "libnvidia-fatbinaryloader.so", "libnvidia-opencl.so", "libnvidia-compiler.so"}
	// Where drivers install them, 64-bit library directories first (on
	// RHEL /usr/lib holds the 32-bit ones).
	nvidiaBinDirs = []string{"/usr/bin", "/usr/local/bin", "/usr/local/nvidia/bin", "/usr/sbin", "/bin", "/opt/nvidia/bin"}
	nvidiaLibDirs = []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64",
		"/lib/x86_64-linux-gnu", "/lib64", "/usr/lib", "/usr/local/nvidia/lib"}
)

// findDriverFiles lists the driver's files under root (the host's "/", or
// a fake tree) as read-only mounts into /usr/local/nvidia/{bin,lib64}: the
// first directory that has a binary or library gives all its names.
func findDriverFiles(root string) []nslaunch.Mount {
	var out []nslaunch.Mount
	add := func(hostDir, name, sub string) {
		src, err := filepath.EvalSymlinks(filepath.Join(root, hostDir, name))
		if err != nil {
			return
		}
		if st, err := os.Stat(src); err == nil && st.Mode().IsRegular() {
			out = append(out, nslaunch.Mount{Source: src, Target: filepath.Join(nvidiaContainerDir, sub, name), ReadOnly: true})
		}
	}
	for _, bin := range nvidiaBinaries {
		for _, d := range nvidiaBinDirs {
			if _, err := os.Stat(filepath.Join(root, d, bin)); err == nil {
				add(d, bin, "bin")
				break
			}
		}
	}
	for _, lib := range nvidiaLibraries {
		for _, d := range nvidiaLibDirs {
			names, _ := filepath.Glob(filepath.Join(root, d, lib+"*"))
			sort.Strings(names)
			for _, n := range names {
				add(d, filepath.Base(n), "lib64")
			}
			if len(names) > 0 {
				break
			}
		}
	}
	return out
}

// gpuSpec fills the GPU part of ex's container Spec: for a container with a
// root filesystem of its own that was given GPUs, their device files and
// the control devices, the driver's files, and the variables naming the
// GPUs (the built-in executor's environment stays outside an image).
func (a *Agent) gpuSpec(ex *executor, s *nslaunch.Spec) error {
	if a.gpu.pool == nil || s.Rootfs == "" {
		return nil
	}
	a.mu.Lock()
	idx := append([]int(nil), ex.gpus...)
	a.mu.Unlock()
	if len(idx) == 0 {
		return nil
	}
	sort.Ints(idx)
	d := a.gpu.dev
	for _, i := range idx {
		n, ok := d.gpus[i]
		if !ok {
			return fmt.Errorf("gpu/nvidia: GPU %d has no device file to give the container (%s)", i, d.why)
		}
		s.Devices = append(s.Devices, specDevice(n))
	}
	for _, n := range d.control {
		s.Devices = append(s.Devices, specDevice(n))
	}
	s.Mounts = append(s.Mounts, d.driver...)
	env := gpuEnv(a.gpusByIndex(idx), d.enforced())
	if len(d.driver) > 0 {
		env = append(env, withDir(s.Env, "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", nvidiaContainerDir+"/bin"),
			withDir(s.Env, "LD_LIBRARY_PATH", "", nvidiaContainerDir+"/lib64"))
	}
	s.Env = nslaunch.MergeEnv(s.Env, env)
	return nil
}

// specDevice is n as the container sees it: at /dev/<its name>.
func specDevice(n devNode) nslaunch.Device {
	return nslaunch.Device{Path: "/dev/" + filepath.Base(n.Path), HostPath: n.Path, Major: int64(n.Major), Minor: int64(n.Minor), Access: "rwm"}
}

// withDir is "key=value" with dir appended to env's value of key (or to
// def where env has none), unless it is there already.
func withDir(env []string, key, def, dir string) string {
	v := def
	for _, kv := range env {
		if val, ok := strings.CutPrefix(kv, key+"="); ok {
			v = val
		}
	}
	for _, p := range filepath.SplitList(v) {
		if p == dir {
			return key + "=" + v
		}
	}
	if v == "" {
		return key + "=" + dir
	}
	return key + "=" + v + ":" + dir
}

// releaseGPUDevices frees what gpuSpec set up for container cid: nothing
// of its own (the mounts go with the container's mount namespace); the
// GPUs and the devices cgroup go back in releaseGPUs, which every
// container's destruction calls, image or not.
func (a *Agent) releaseGPUDevices(cid string) {}
