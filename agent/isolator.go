package agent

import (
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"
	"syscall"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// An isolator confines each executor (with every task it runs and every
// process they fork) to what was allocated to it. The agent calls, per
// container (one per executor run):
//
//	prepare  before the executor starts, and again when tasks join it (the
//	         limits only grow while the container lives);
//	wrap     to rewrite the executor's argv so that the process enters its
//	         container before it runs its command (every child follows);
//	isolate  with the started pid (idempotent; a second guard);
//	usage    for /monitor/statistics and the usage reports;
//	limited  to learn whether the container broke a limit (an OOM kill);
//	kill     to signal every process of the container, not the executor
//	         alone (pid must be the live executor's);
//	destroy  to kill what is left in it and remove it when the executor ends.
type isolator interface {
	kind() string
	prepare(id string, l limits) error
	wrap(id string, argv []string) []string
	isolate(id string, pid int) error
	usage(id string, pid int) procStats
	limited(id string, pid int, l limits) *limitation
	kill(id string, pid int, sig syscall.Signal)
	destroy(id string, pid int) error
}

// limits are what a container may use.
type limits struct {
	cpus      float64
	memBytes  uint64 // 0: no memory limit
	diskBytes uint64 // the sandbox's quota under disk/du; 0: none
}

// limitation is a limit a container broke; the agent fails its tasks with it.
type limitation struct {
	reason  mesos.TaskStatus_Reason
	message string
}

// Executor overhead added to what the tasks were allocated: the built-in
// command executor (a Go process) needs about 12 MB of its own, and the
// sh that wraps a command task a little more. Mesos adds 0.1 cpus and 32 MB
// for its command executor; allot adds the same memory, and no cpus (shares
// are relative, so a constant offset would only blur the ratio).
const executorOverheadMem = 32 << 20

// pidsMax is the container's pids limit: generous for real work, but a fork
// bomb stops there instead of at the host's limit.
const pidsMax = 4096

// executorLimits sums the resources of an executor and its live tasks.
func executorLimits(ex *executor) limits {
	var l limits
	add := func(rs []mesos.Resource) {
		for _, r := range rs {
			if r.GetType() != mesos.SCALAR || r.Scalar == nil {
				continue
			}
			switch r.Name {
			case "cpus":
				l.cpus += r.Scalar.Value
			case "mem":
				l.memBytes += uint64(r.Scalar.Value * (1 << 20))
			case "disk":
				l.diskBytes += uint64(r.Scalar.Value * (1 << 20))
			}
		}
	}
	add(ex.info.Resources)
	for _, t := range ex.tasks {
		add(t.info.Resources)
	}
	if l.memBytes > 0 {
		l.memBytes += executorOverheadMem
	}
	return l
}

// isolation is what --isolation asked for.
type isolation struct {
	auto     bool // "" or "auto": cgroups when writable, else posix
	cgroups  bool
	cpu, mem bool
	disk     bool // disk/du: sandbox quotas, beside either family
	gpu      bool // gpu/nvidia: GPUs assigned per container (gpu_isolator.go)
	// filesystem/linux and docker/runtime: container images (auto
	// includes both where the host can; container_image.go)
	fsLinux, dockerRuntime bool
}

// parseIsolation reads --isolation: "auto" (or empty), or a comma-separated
// list of cgroups/cpu, cgroups/mem, posix/cpu, posix/mem ("cgroups" and
// "posix" alone mean both of theirs), plus disk/du, which goes with either
// family, and gpu/nvidia, filesystem/linux and docker/runtime, likewise
// ("auto,gpu/nvidia" keeps auto's choice). Mixing cgroups and posix is an error. "auto" does not include
// disk/du (as Mesos's default isolation does not): walking every sandbox
// costs I/O, and it starts killing tasks that ran before, so it is asked for.
func parseIsolation(s string) (isolation, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "auto" {
		return isolation{auto: true, cpu: true, mem: true}, nil
	}
	var iso isolation
	fams := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		switch strings.TrimSpace(part) {
		case "disk/du":
			iso.disk = true
			continue
		case "gpu/nvidia":
			iso.gpu = true
			continue
		case "filesystem/linux":
			iso.fsLinux = true
			continue
		case "docker/runtime":
			iso.dockerRuntime = true
			continue
		case "auto":
			iso.auto, iso.cpu, iso.mem = true, true, true
			continue
		}
		fam, res, _ := strings.Cut(strings.TrimSpace(part), "/")
		if fam != "cgroups" && fam != "posix" {
			return iso, fmt.Errorf("--isolation: unknown isolator %q (want cgroups/cpu, cgroups/mem, posix/cpu, posix/mem, disk/du, gpu/nvidia, filesystem/linux, docker/runtime)", part)
		}
		fams[fam] = true
		switch res {
		case "":
			iso.cpu, iso.mem = true, true
		case "cpu":
			iso.cpu = true
		case "mem":
			iso.mem = true
		default:
			return iso, fmt.Errorf("--isolation: unknown resource in %q", part)
		}
	}
	if len(fams) > 1 {
		return iso, errors.New("--isolation: cgroups and posix isolators cannot be mixed")
	}
	if iso.auto && len(fams) > 0 {
		return iso, errors.New("--isolation: auto picks cgroups or posix itself; name neither beside it")
	}
	iso.cgroups = fams["cgroups"]
	return iso, nil
}

// newIsolator picks the isolator for want and says why.
func newIsolator(want isolation, root, workDir string, cfs bool) (isolator, string, error) {
	if !want.cgroups && !want.auto {
		return &posixIsolator{mem: want.mem}, "posix isolation requested by --isolation", nil
	}
	cg, err := newCgroups(root, containerParent(workDir), want.cpu, want.mem, cfs)
	if err == nil {
		return cg, cg.kind() + " writable at " + root, nil
	}
	if want.auto {
		return &posixIsolator{mem: want.mem}, "cgroups not usable (" + err.Error() + "); posix fallback", nil
	}
	return nil, "", fmt.Errorf("--isolation=cgroups: %w", err)
}

// containerParent is the cgroup every container of this agent lives under:
// allot/<hash of the work dir>. The work dir, not the agent id, names it
// because the id changes when an agent re-registers as new, while the work
// dir is what a restarted agent recovers from; stale containers of a dead
// run are found by it.
func containerParent(workDir string) string {
	abs, err := filepath.Abs(workDir)
	if err != nil {
		abs = workDir
	}
	h := fnv.New32a()
	h.Write([]byte(abs))
	return filepath.Join("allot", fmt.Sprintf("w%08x", h.Sum32()))
}

// posixIsolator confines nothing; it samples /proc and reports an executor
// whose resident memory passes its limit (the agent then kills it).
type posixIsolator struct{ mem bool }

var _ isolator = (*posixIsolator)(nil)

func (p *posixIsolator) kind() string                          { return "posix" }
func (p *posixIsolator) prepare(string, limits) error          { return nil }
func (p *posixIsolator) wrap(_ string, argv []string) []string { return argv }
func (p *posixIsolator) isolate(string, int) error             { return nil }
func (p *posixIsolator) usage(_ string, pid int) procStats     { return groupStats(pid) }
func (p *posixIsolator) destroy(string, int) error             { return nil }

// kill signals the executor's process tree as /proc shows it, and every
// process group in it (a task's command runs in a group of its own): a
// process that left the tree (reparented to init) is out of reach, which
// is what containers are for.
func (p *posixIsolator) kill(_ string, pid int, sig syscall.Signal) {
	if pid > 0 {
		killTree(pid, sig)
	}
}

func (p *posixIsolator) limited(_ string, pid int, l limits) *limitation {
	if !p.mem || l.memBytes == 0 || pid <= 0 {
		return nil
	}
	if rss := groupStats(pid).MemRSSBytes; rss > l.memBytes {
		return memLimitation(l.memBytes, rss, "resident set sampled from /proc")
	}
	return nil
}

func memLimitation(limit, peak uint64, how string) *limitation {
	return &limitation{reason: mesos.REASON_CONTAINER_LIMITATION_MEMORY,
		message: fmt.Sprintf("Memory limit exceeded: limit %d MB, peak %d MB (%s)", limit>>20, peak>>20, how)}
}
