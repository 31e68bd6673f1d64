package agent

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// gpu/nvidia (Mesos's isolator name): each container is given whole GPUs
// by index from the agent's pool when its executor starts, as many as the
// executor and its first tasks were allocated; the executor's environment
// names them (NVIDIA_VISIBLE_DEVICES for the NVIDIA container runtime,
// CUDA_VISIBLE_DEVICES for CUDA itself), the executor's checkpoint keeps
// them across an agent restart, and they return to the pool when the
// container is destroyed.
//
// On cgroup v1 the container's devices cgroup keeps it to its own GPUs'
// device files (gpu_cgroup.go); elsewhere the variables are all there is,
// and gpuDevices.why says so in the log and in /state.

// gpuPool hands out GPU indices to containers.
type gpuPool struct {
	mu    sync.Mutex
	gpus  []gpuInfo
	owner map[int]string // index -> container id
}

func newGPUPool(gpus []gpuInfo) *gpuPool {
	return &gpuPool{gpus: gpus, owner: map[int]string{}}
}

// assign gives container cid n free GPUs (the lowest indices), or none and
// an error naming what is short.
func (p *gpuPool) assign(cid string, n int) ([]int, error) {
	if n <= 0 {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var got []int
	for _, g := range p.gpus {
		if _, used := p.owner[g.Index]; !used {
			got = append(got, g.Index)
			if len(got) == n {
				break
			}
		}
	}
	if len(got) < n {
		return nil, fmt.Errorf("gpu/nvidia: %d GPUs asked for, %d of %d free", n, len(got), len(p.gpus))
	}
	for _, i := range got {
		p.owner[i] = cid
	}
	return got, nil
}

// claim marks indices as cid's again (a recovered executor's).
func (p *gpuPool) claim(cid string, idx []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, i := range idx {
		p.owner[i] = cid
	}
}

// free returns every GPU of cid to the pool.
func (p *gpuPool) free(cid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range p.owner {
		if c == cid {
			delete(p.owner, i)
		}
	}
}

// used is the assigned indices by container, for /state.
func (p *gpuPool) used() map[string][]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]int{}
	for i, c := range p.owner {
		out[c] = append(out[c], i)
	}
	for _, v := range out {
		sort.Ints(v)
	}
	return out
}

// gpusWanted is how many whole GPUs ex and its tasks were allocated; a
// fraction is an error (a GPU is not shared under gpu/nvidia).
func gpusWanted(ex *executor) (int, error) {
	var sum float64
	add := func(rs []mesos.Resource) {
		for _, r := range rs {
			if r.Name == "gpus" && r.GetType() == mesos.SCALAR && r.Scalar != nil {
				sum += r.Scalar.Value
			}
		}
	}
	add(ex.info.Resources)
	for _, t := range ex.tasks {
		add(t.info.Resources)
	}
	n := math.Round(sum)
	if math.Abs(sum-n) > 1e-6 {
		return 0, fmt.Errorf("gpu/nvidia: gpus:%g is not a whole number of GPUs", sum)
	}
	return int(n), nil
}

// gpuEnv is the environment naming gs. NVIDIA_VISIBLE_DEVICES takes the
// machine's indices (the NVIDIA runtime's meaning). CUDA numbers only the
// devices a process can open, so where the devices cgroup hides the others
// (renumbered) the machine's index 1 is CUDA's 0: CUDA_VISIBLE_DEVICES
// names UUIDs where known (right either way), else CUDA's own numbers.
// An executor given no GPU on an agent that has them gets an empty list:
// CUDA then sees none, instead of every GPU of the machine.
func gpuEnv(gs []gpuInfo, renumbered bool) []string {
	if len(gs) == 0 {
		// "void" is the NVIDIA runtime's word for no GPU; CUDA takes
		// an empty list as none.
		return []string{"NVIDIA_VISIBLE_DEVICES=void", "CUDA_VISIBLE_DEVICES="}
	}
	idx, cuda := make([]string, len(gs)), make([]string, len(gs))
	uuids := true
	for i, g := range gs {
		idx[i], cuda[i] = strconv.Itoa(g.Index), strconv.Itoa(g.Index)
		uuids = uuids && g.UUID != ""
	}
	for i, g := range gs {
		switch {
		case uuids:
			cuda[i] = g.UUID
		case renumbered:
			cuda[i] = strconv.Itoa(i)
		}
	}
	return []string{"NVIDIA_VISIBLE_DEVICES=" + strings.Join(idx, ","), "CUDA_VISIBLE_DEVICES=" + strings.Join(cuda, ",")}
}

// assignGPUs gives ex's container its GPUs before the executor starts.
// Caller does not hold a.mu.
func (a *Agent) assignGPUs(ex *executor) error {
	if a.gpu.pool == nil {
		return nil
	}
	a.mu.Lock()
	n, err := gpusWanted(ex)
	a.mu.Unlock()
	if err != nil {
		return err
	}
	idx, err := a.gpu.pool.assign(ex.containerID, n)
	if err != nil {
		return err
	}
	a.mu.Lock()
	ex.gpus = idx
	a.mu.Unlock()
	return nil
}

// executorGPUEnv is what executorEnv adds for GPUs (nothing without
// gpu/nvidia).
func (a *Agent) executorGPUEnv(ex *executor) []string {
	if a.gpu.pool == nil {
		return nil
	}
	return gpuEnv(a.gpusByIndex(ex.gpus), a.gpu.dev.enforced())
}

// gpusByIndex is what was detected of the GPUs idx, in idx's order.
func (a *Agent) gpusByIndex(idx []int) []gpuInfo {
	out := make([]gpuInfo, 0, len(idx))
	for _, i := range idx {
		g := gpuInfo{Index: i}
		for _, f := range a.gpu.found {
			if f.Index == i {
				g = f
			}
		}
		out = append(out, g)
	}
	return out
}

// recoverGPUs claims the GPUs of executors that survived a restart.
// Caller holds a.mu.
func (a *Agent) recoverGPUsLocked() {
	if a.gpu.pool == nil {
		return
	}
	for _, ex := range a.executors {
		if ex.pid > 0 && len(ex.gpus) > 0 {
			a.gpu.pool.claim(ex.containerID, ex.gpus)
		}
	}
}

// gpuState is what /state shows of GPUs.
func (a *Agent) gpuState() map[string]any {
	if a.gpu.pool == nil {
		return map[string]any{"isolation": "none", "detected": a.gpu.found, "detection": a.gpu.how}
	}
	return map[string]any{"isolation": "gpu/nvidia", "enforcement": a.gpu.dev.why, "devices_cgroup": a.gpu.dev.enforced(),
		"control_devices": a.gpu.dev.control, "detected": a.gpu.found, "detection": a.gpu.how, "assigned": a.gpu.pool.used()}
}

// logGPUs says at start what was found and how tasks are kept to theirs.
func (a *Agent) logGPUs() {
	e := a.log.Info().Int("gpus", len(a.gpu.found)).Str("detection", a.gpu.how)
	switch {
	case a.gpu.pool != nil:
		if !a.gpu.dev.enforced() {
			e = a.log.Warn().Int("gpus", len(a.gpu.found)).Str("detection", a.gpu.how)
		}
		e.Str("gpu_isolation", "gpu/nvidia").Str("enforcement", a.gpu.dev.why).Msg("GPUs")
	case len(a.gpu.found) > 0:
		e.Str("gpu_isolation", "none").Msg("GPUs advertised but not assigned to tasks: add gpu/nvidia to --isolation")
	default:
		e.Msg("GPUs")
	}
}
