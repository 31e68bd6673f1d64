package agent

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/allot-sched/allot/resources"
)

// GPU detection: the agent finds the machine's NVIDIA GPUs and advertises
// them as the scalar resource gpus. No cgo and no NVML binding: the
// driver's own nvidia-smi is asked first (it loads NVML itself), and where
// it is missing or fails, the device files the driver creates
// (/dev/nvidia<minor>, with /proc/driver/nvidia/gpus/<bus id>/information
// naming each one's minor number) are counted. Both sit behind gpuDetector
// so that tests give a fake nvidia-smi on PATH and a temp dir as the root.

// gpuInfo is one GPU: its index is what CUDA_VISIBLE_DEVICES and
// NVIDIA_VISIBLE_DEVICES name (nvidia-smi's index, or the device minor).
type gpuInfo struct {
	Index    int    `json:"index"`
	UUID     string `json:"uuid,omitempty"`
	Name     string `json:"name,omitempty"`
	MemoryMB int64  `json:"memory_mb,omitempty"`
	Device   string `json:"device,omitempty"` // /dev/nvidia<minor>, where known
}

// gpuDetector lists the machine's GPUs, and says how it found them.
type gpuDetector interface {
	detect() ([]gpuInfo, string, error)
}

// smiDetector runs nvidia-smi (found on PATH when bin is a bare name).
type smiDetector struct {
	bin     string
	timeout time.Duration
}

func (d smiDetector) detect() ([]gpuInfo, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, d.bin, "--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", d.bin, err)
	}
	gpus, err := parseSMI(out)
	return gpus, "nvidia-smi", err
}

// parseSMI reads nvidia-smi's CSV: "0, GPU-uuid, NVIDIA H100, 81559" per
// line (memory in MiB; a "MiB" suffix is tolerated).
func parseSMI(out []byte) ([]gpuInfo, error) {
	var gpus []gpuInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 4 {
			return nil, fmt.Errorf("nvidia-smi: want index, uuid, name, memory.total; got %q", line)
		}
		idx, err := strconv.Atoi(strings.TrimSpace(f[0]))
		if err != nil || idx < 0 {
			return nil, fmt.Errorf("nvidia-smi: bad index in %q", line)
		}
		mem, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f[3]), "MiB")), 10, 64)
		gpus = append(gpus, gpuInfo{Index: idx, UUID: strings.TrimSpace(f[1]), Name: strings.TrimSpace(f[2]),
			MemoryMB: mem, Device: fmt.Sprintf("/dev/nvidia%d", idx)})
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
	return gpus, nil
}

// devfsDetector counts /dev/nvidia<N> under root, keeping those the
// driver lists in /proc/driver/nvidia/gpus (when that directory exists: a
// stale device node without a GPU behind it is not a GPU).
type devfsDetector struct{ root string }

func (d devfsDetector) detect() ([]gpuInfo, string, error) {
	devs, _ := filepath.Glob(filepath.Join(d.root, "dev", "nvidia[0-9]*"))
	minors := map[int]string{}
	for _, p := range devs {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), "nvidia"))
		if err == nil {
			minors[n] = "/dev/" + filepath.Base(p)
		}
	}
	procDir := filepath.Join(d.root, "proc", "driver", "nvidia", "gpus")
	if infos, err := filepath.Glob(filepath.Join(procDir, "*", "information")); err == nil && len(infos) > 0 {
		listed := map[int]string{}
		for _, f := range infos {
			if m, name, ok := readProcGPU(f); ok {
				listed[m] = name
			}
		}
		var gpus []gpuInfo
		for m, name := range listed {
			if dev, ok := minors[m]; ok {
				gpus = append(gpus, gpuInfo{Index: m, Name: name, Device: dev})
			}
		}
		sort.Slice(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
		return gpus, "device files", nil
	}
	var gpus []gpuInfo
	for m, dev := range minors {
		gpus = append(gpus, gpuInfo{Index: m, Device: dev})
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
	return gpus, "device files", nil
}

// readProcGPU reads a driver information file's "Model:" and "Device
// Minor:" lines.
func readProcGPU(path string) (minor int, model string, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		switch strings.TrimSpace(k) {
		case "Model":
			model = strings.TrimSpace(v)
		case "Device Minor":
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return 0, "", false
			}
			minor, ok = n, true
		}
	}
	return minor, model, ok
}

// detectGPUs asks each detector in turn; the first that answers without
// an error wins, even with no GPUs (a driver that says "none" is believed).
func detectGPUs(ds ...gpuDetector) ([]gpuInfo, string) {
	var why []string
	for _, d := range ds {
		gpus, how, err := d.detect()
		if err == nil && (len(gpus) > 0 || how == "nvidia-smi") {
			return gpus, how
		}
		if err != nil {
			why = append(why, err.Error())
		}
	}
	if len(why) == 0 {
		return nil, "no NVIDIA GPUs found"
	}
	return nil, "no NVIDIA GPUs found (" + strings.Join(why, "; ") + ")"
}

// agentGPUs is what the agent found of GPUs, how, and gpu/nvidia's pool
// (nil without it).
type agentGPUs struct {
	found []gpuInfo
	how   string
	pool  *gpuPool
	dev   *gpuDevices // gpu/nvidia's device files and devices cgroup
}

// agentResources is detectResources with the detected GPUs applied.
func agentResources(cfg Config, mapped bool) (resources.Resources, string, agentGPUs, error) {
	var g agentGPUs
	total, static, err := detectResources(cfg.Resources, cfg.WorkDir)
	if err != nil {
		return total, static, g, fmt.Errorf("--resources: %w", err)
	}
	g.found, g.how = detectGPUs(smiDetector{bin: orDefault(cfg.NvidiaSMI, "nvidia-smi"), timeout: 10 * time.Second},
		devfsDetector{root: orDefault(cfg.GPUDeviceRoot, "/")})
	if mapped {
		g.pool = newGPUPool(g.found)
		g.dev = newGPUDevices(orDefault(cfg.CgroupsRoot, "/sys/fs/cgroup"), containerParent(cfg.WorkDir),
			orDefault(cfg.GPUDeviceRoot, "/"), g.found)
	}
	total, static, err = applyGPUs(total, static, g.found, mapped)
	if err != nil {
		return total, static, g, fmt.Errorf("--resources: %w", err)
	}
	return total, static, g, nil
}

// applyGPUs sets the gpus of total from what was detected: added where
// --resources names none; where it does, it must be whole and, when the
// agent maps devices to tasks (gpu/nvidia), no more than were found.
// Without gpu/nvidia an explicit gpus stays the opaque scalar it was.
func applyGPUs(total resources.Resources, static string, gpus []gpuInfo, mapped bool) (resources.Resources, string, error) {
	have := total.Scalar("gpus")
	if have == 0 {
		if len(gpus) == 0 {
			return total, static, nil
		}
		q := resources.Quantity(len(gpus)) * resources.Scale
		add := "gpus:" + strconv.Itoa(len(gpus))
		if static != "" {
			add = ";" + add
		}
		return total.WithScalar("gpus", q), static + add, nil
	}
	if !mapped {
		return total, static, nil
	}
	if have%resources.Scale != 0 {
		return total, static, fmt.Errorf("gpus:%s: GPUs are whole devices under gpu/nvidia", have)
	}
	if n := int(have / resources.Scale); n > len(gpus) {
		return total, static, fmt.Errorf("gpus:%d asked for, but only %d NVIDIA GPUs were detected", n, len(gpus))
	}
	return total, static, nil
}
