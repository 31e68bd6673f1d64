package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/allot-sched/allot/agent/nslaunch"
)

// gpu/nvidia's device files: on cgroup v1 each container gets a directory
// of its own in the devices hierarchy, joined by the executor before it
// execs (as the cgroups isolator's wrapper joins cpu and memory; for a
// task's user, the launcher joins both, cgroup_join.go), whose
// list denies every GPU device node of the machine but the container's
// own. Mesos's gpu/nvidia needs its cgroups/devices isolator, which denies
// every device but a short default list; allot has no cgroups/devices and
// restricts the GPUs alone: the list is deny-all, then every block device
// and every character major but the GPUs', then the NVIDIA control
// devices and the container's GPUs by major:minor. Read back from
// devices.list, that is the container's allow-list as the kernel keeps it.
//
// cgroup v2 has no devices files: a BPF program attached to the cgroup
// decides, and loading one without cgo or a new dependency is work of its
// own, so there the agent says plainly that device files are not
// restricted, in its log and in /state.

// charMajors is one more than the highest character device major Linux
// hands out (CHRDEV_MAJOR_MAX): "every major but the GPUs'" is spelled
// out one major at a time, since a devices list cannot say "all but".
const charMajors = 512

// nvidiaControlDevices are the driver's device files that every container
// on a GPU agent may open (Mesos allows nvidiactl, nvidia-uvm and
// nvidia-uvm-tools; nvidia-modeset shares the GPUs' major, so without it
// here it would be denied with them): nvidia-smi and CUDA need them even
// to say that no GPU is there.
var nvidiaControlDevices = []string{"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"}

// devNode is a character device file and its number.
type devNode struct {
	Path         string `json:"path"` // on the host, under --gpu-device-root
	Major, Minor uint32 `json:"-"`
}

func (d devNode) rule() string { return fmt.Sprintf("c %d:%d rwm", d.Major, d.Minor) }

// gpuDevices is what gpu/nvidia knows of the GPUs' device files and the
// devices cgroup; dir is "" where nothing is enforced, and why says so.
type gpuDevices struct {
	dir     string           // <devices hierarchy>/<container parent>
	why     string           // what is (not) enforced, for the log and /state
	gpus    map[int]devNode  // by GPU index
	control []devNode        // the control devices present
	majors  map[uint32]bool  // the GPUs' majors: only these are narrowed
	driver  []nslaunch.Mount // the driver's files an image gets (gpu_devices.go)
}

// charDevice stats path and returns its number if it is a character device.
func charDevice(path string) (devNode, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return devNode{}, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
		return devNode{}, fmt.Errorf("%s is not a character device", path)
	}
	rdev := uint64(st.Rdev)
	major := uint32((rdev>>8)&0xfff) | uint32((rdev>>32)&^0xfff)
	minor := uint32(rdev&0xff) | uint32((rdev>>12)&^0xff)
	return devNode{Path: path, Major: major, Minor: minor}, nil
}

// newGPUDevices finds the device files of gpus under devRoot and the
// devices hierarchy under cgRoot, and proves parent can be made there.
func newGPUDevices(cgRoot, parent, devRoot string, gpus []gpuInfo) *gpuDevices {
	g := &gpuDevices{gpus: map[int]devNode{}, majors: map[uint32]bool{}, driver: findDriverFiles(devRoot)}
	for _, name := range nvidiaControlDevices {
		if n, err := charDevice(filepath.Join(devRoot, "dev", name)); err == nil {
			g.control = append(g.control, n)
		}
	}
	for _, gi := range gpus {
		n, err := charDevice(filepath.Join(devRoot, gpuDevicePath(gi)))
		if err != nil {
			g.why = fmt.Sprintf("environment only: GPU %d has no device file (%v); /dev/nvidia* not restricted", gi.Index, err)
			return g
		}
		g.gpus[gi.Index], g.majors[n.Major] = n, true
	}
	// Every GPU device file of the machine, even one not detected (or
	// left out by --resources), is narrowed with the rest.
	others, _ := filepath.Glob(filepath.Join(devRoot, "dev", "nvidia[0-9]*"))
	for _, p := range others {
		if n, err := charDevice(p); err == nil {
			g.majors[n.Major] = true
		}
	}
	if _, err := os.Stat(filepath.Join(cgRoot, "cgroup.controllers")); err == nil {
		g.why = "environment only: cgroup v2 has no devices list and the BPF device program is not implemented; /dev/nvidia* not restricted"
		return g
	}
	hier, err := filepath.EvalSymlinks(filepath.Join(cgRoot, "devices"))
	if err == nil {
		_, err = os.Stat(filepath.Join(hier, "devices.allow"))
	}
	if err != nil {
		g.why = fmt.Sprintf("environment only: no cgroup v1 devices hierarchy at %s; /dev/nvidia* not restricted", filepath.Join(cgRoot, "devices"))
		return g
	}
	dir := filepath.Join(hier, parent)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		g.why = fmt.Sprintf("environment only: %s not writable (%v); /dev/nvidia* not restricted", dir, err)
		return g
	}
	syscall.Rmdir(dir) // made again by the first container
	g.dir = dir
	g.why = "devices cgroup (v1): a container opens only its own GPUs' /dev/nvidia<N> and the control devices"
	return g
}

// gpuDevicePath is where a GPU's device file is on the host.
func gpuDevicePath(g gpuInfo) string {
	if g.Device != "" {
		return g.Device
	}
	return "/dev/nvidia" + strconv.Itoa(g.Index)
}

// enforced reports whether containers are kept to their device files.
func (g *gpuDevices) enforced() bool { return g != nil && g.dir != "" }

// leaf is container cid's directory in the devices hierarchy.
func (g *gpuDevices) leaf(cid string) string { return filepath.Join(g.dir, cid) }

// rules is the allow-list of a container given the GPUs idx, in the order
// it is written (after "a" to devices.deny).
func (g *gpuDevices) rules(idx []int) []string {
	out := []string{"b *:* rwm"}
	for m := uint32(0); m < charMajors; m++ {
		if !g.majors[m] {
			out = append(out, fmt.Sprintf("c %d:* rwm", m))
		}
	}
	for _, n := range g.control {
		out = append(out, n.rule())
	}
	sorted := append([]int(nil), idx...)
	sort.Ints(sorted)
	for _, i := range sorted {
		if n, ok := g.gpus[i]; ok {
			out = append(out, n.rule())
		}
	}
	return out
}

// prepare makes cid's devices cgroup allowing the GPUs idx and no other.
func (g *gpuDevices) prepare(cid string, idx []int) error {
	d := g.leaf(cid)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return fmt.Errorf("gpu/nvidia: devices cgroup: %w", err)
	}
	if err := writeCg(filepath.Join(d, "devices.deny"), "a"); err != nil {
		return fmt.Errorf("gpu/nvidia: %s: denying all: %w", d, err)
	}
	f, err := os.OpenFile(filepath.Join(d, "devices.allow"), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("gpu/nvidia: %w", err)
	}
	defer f.Close()
	for _, r := range g.rules(idx) {
		if _, err := f.WriteString(r); err != nil { // the kernel takes one rule a write
			return fmt.Errorf("gpu/nvidia: %s: allowing %q: %w", d, r, err)
		}
	}
	return nil
}

// wrap has argv join cid's devices cgroup before it execs, so that
// nothing of the container opens a device file first; it is for an
// executor that runs as root, which may write its own pid. One that runs
// as a task's user joins through the launcher instead (cgroup_join.go):
// the cgroup's cgroup.procs stays root's, since were it the user's, any
// process of that user could move into this container's cgroup, and its
// GPUs.
func (g *gpuDevices) wrap(cid string, argv []string) []string {
	script := fmt.Sprintf("echo $$ > '%s/cgroup.procs' && exec \"$@\"", g.leaf(cid))
	return append([]string{"/bin/sh", "-c", script, "allot-gpu-devices"}, argv...)
}

// join moves pid (the wrapper, or the executor it became) into cid's
// devices cgroup: a second guard, the executor being there already.
func (g *gpuDevices) join(cid string, pid int) error {
	err := writeCg(filepath.Join(g.leaf(cid), "cgroup.procs"), strconv.Itoa(pid))
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("gpu/nvidia: moving pid %d into %s: %w", pid, g.leaf(cid), err)
	}
	return nil
}

// destroy kills what is left in cid's devices cgroup (the container is
// over) and removes it, and the parent when no container is left.
func (g *gpuDevices) destroy(cid string) error {
	d := g.leaf(cid)
	var err error
	for deadline := time.Now().Add(removeTimeout); ; time.Sleep(10 * time.Millisecond) {
		for _, p := range strings.Fields(readCg(filepath.Join(d, "cgroup.procs"))) {
			if pid, _ := strconv.Atoi(p); pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		err = syscall.Rmdir(d)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			syscall.Rmdir(g.dir)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("removing %s: %w", d, err)
		}
	}
}

// containers lists the container ids with a devices cgroup.
func (g *gpuDevices) containers() []string {
	ents, _ := os.ReadDir(g.dir)
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// gpuDevicesPrepare makes ex's devices cgroup, allowing ex's GPUs; false
// where gpu/nvidia enforces nothing.
func (a *Agent) gpuDevicesPrepare(ex *executor) (bool, error) {
	if a.gpu.pool == nil || !a.gpu.dev.enforced() {
		return false, nil
	}
	a.mu.Lock()
	idx := append([]int(nil), ex.gpus...)
	a.mu.Unlock()
	return true, a.gpu.dev.prepare(ex.containerID, idx)
}

// gpuDeviceWrap makes ex's devices cgroup and returns path and argv
// rewritten to join it first (unchanged where gpu/nvidia enforces
// nothing), for an executor that runs as root.
func (a *Agent) gpuDeviceWrap(ex *executor, path string, argv []string) (string, []string, error) {
	if ok, err := a.gpuDevicesPrepare(ex); !ok || err != nil {
		return path, argv, err
	}
	w := a.gpu.dev.wrap(ex.containerID, append([]string{path}, argv[1:]...))
	return w[0], w, nil
}

// gpuDevicesJoin moves ex's started executor (pid) into its devices
// cgroup once more, a second guard after its wrapper or the launcher; a
// failure kills it. Called right after the start.
func (a *Agent) gpuDevicesJoin(ex *executor, pid int) {
	if a.gpu.pool == nil || !a.gpu.dev.enforced() {
		return
	}
	if err := a.gpu.dev.join(ex.containerID, pid); err != nil {
		a.log.Error().Err(err).Str("container_id", ex.containerID).Msg("killing the executor")
		a.iso.kill(ex.containerID, pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// releaseGPUs gives container cid's GPUs back and removes its devices
// cgroup.
func (a *Agent) releaseGPUs(cid string) {
	if a.gpu.pool == nil {
		return
	}
	a.gpu.pool.free(cid)
	if a.gpu.dev.enforced() {
		if err := a.gpu.dev.destroy(cid); err != nil {
			a.log.Warn().Err(err).Str("container_id", cid).Msg("devices cgroup not removed")
		}
	}
}

// removeStaleGPUDevices removes the devices cgroups of containers that are
// not live (a run that is over left them).
func (a *Agent) removeStaleGPUDevices(live map[string]bool) {
	if a.gpu.pool == nil || !a.gpu.dev.enforced() {
		return
	}
	for _, id := range a.gpu.dev.containers() {
		if !live[id] {
			a.releaseGPUs(id)
		}
	}
}
