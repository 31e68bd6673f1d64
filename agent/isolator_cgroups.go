package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupsIsolator puts each executor in a container of its own under
// <root>/<controller>/allot/<work dir hash>/<container id> (v1: one
// directory per controller hierarchy) or <root>/allot/<hash>/<id> (v2: the
// unified hierarchy).
type cgroupsIsolator struct {
	v2       bool
	root     string
	parent   string            // allot/<hash>
	dirs     map[string]string // v1: controller -> mount; v2: "" -> root
	cpu, mem bool
	cfs      bool
}

var _ isolator = (*cgroupsIsolator)(nil)

// cfsPeriodUs is the CFS period for --cgroups-enable-cfs (Mesos's 100ms).
const cfsPeriodUs = 100000

// newCgroups detects the host's cgroup version and proves the parent can be
// created: v2 when root/cgroup.controllers exists, else v1 with the cpu,
// cpuacct, memory (and pids, if mounted) hierarchies under root.
func newCgroups(root, parent string, cpu, mem, cfs bool) (*cgroupsIsolator, error) {
	c := &cgroupsIsolator{root: root, parent: parent, cpu: cpu, mem: mem, cfs: cfs, dirs: map[string]string{}}
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		c.v2 = true
		c.dirs[""] = root
	} else {
		seen := map[string]bool{}
		for _, ctl := range []string{"cpu", "cpuacct", "memory", "pids"} {
			d, err := filepath.EvalSymlinks(filepath.Join(root, ctl))
			if err != nil {
				if ctl == "pids" {
					continue // old kernels: no pids limit
				}
				return nil, fmt.Errorf("no cgroup v1 %s hierarchy at %s and no cgroup v2 (%s/cgroup.controllers)", ctl, filepath.Join(root, ctl), root)
			}
			if !seen[d] { // cpu,cpuacct mounted together
				seen[d] = true
				c.dirs[ctl] = d
			}
		}
	}
	// Prove the parent can be made (and, on v2, given its controllers),
	// then take it away again: containers make it when they need it, and
	// an agent that never runs an executor leaves nothing behind.
	for _, d := range c.dirs {
		if err := os.MkdirAll(filepath.Join(d, parent), 0o755); err != nil {
			return nil, fmt.Errorf("%s not writable: %v", filepath.Join(d, parent), err)
		}
	}
	err := c.enableControllers()
	c.removeParent()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// enableControllers turns cpu, memory and pids on for the children of
// every level from the root to the parent (v2 only: a v1 hierarchy has its
// controller everywhere).
func (c *cgroupsIsolator) enableControllers() error {
	if !c.v2 {
		return nil
	}
	p := c.root
	for _, part := range strings.Split(c.parent, "/") {
		writeCg(filepath.Join(p, "cgroup.subtree_control"), "+cpu +memory +pids")
		p = filepath.Join(p, part)
	}
	if err := writeCg(filepath.Join(p, "cgroup.subtree_control"), "+cpu +memory +pids"); err != nil {
		return fmt.Errorf("enabling cpu, memory and pids controllers under %s: %v", p, err)
	}
	return nil
}

func (c *cgroupsIsolator) kind() string {
	if c.v2 {
		return "cgroups/v2"
	}
	return "cgroups/v1"
}

func writeCg(path, v string) error { return os.WriteFile(path, []byte(v), 0o644) }

func readCg(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

func readCgUint(path string) uint64 {
	n, _ := strconv.ParseUint(readCg(path), 10, 64)
	return n
}

// dir is the container's directory in the hierarchy holding ctl.
func (c *cgroupsIsolator) dir(ctl, id string) string {
	if c.v2 {
		return filepath.Join(c.root, c.parent, id)
	}
	d, ok := c.dirs[ctl]
	if !ok && ctl == "cpuacct" {
		d = c.dirs["cpu"] // mounted together
	}
	return filepath.Join(d, c.parent, id)
}

// leaves are the container's directories, one per hierarchy.
func (c *cgroupsIsolator) leaves(id string) []string {
	var out []string
	for _, d := range c.dirs {
		out = append(out, filepath.Join(d, c.parent, id))
	}
	return out
}

func (c *cgroupsIsolator) prepare(id string, l limits) error {
	for _, d := range c.leaves(id) {
		if err := os.MkdirAll(filepath.Dir(d), 0o755); err != nil {
			return err
		}
	}
	if err := c.enableControllers(); err != nil {
		return err
	}
	for _, d := range c.leaves(id) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	var errs []error
	shares := uint64(l.cpus * 1024)
	if shares < 2 {
		shares = 2
	}
	if c.v2 {
		d := c.dir("", id)
		if c.cpu {
			// runc's shares-to-weight mapping (1024 -> 39, linear).
			errs = append(errs, writeCg(filepath.Join(d, "cpu.weight"), strconv.FormatUint(1+(shares-2)*9999/262142, 10)))
			if c.cfs && l.cpus > 0 {
				errs = append(errs, writeCg(filepath.Join(d, "cpu.max"), fmt.Sprintf("%d %d", int64(l.cpus*cfsPeriodUs), cfsPeriodUs)))
			}
		}
		if c.mem && l.memBytes > 0 {
			errs = append(errs, writeCg(filepath.Join(d, "memory.max"), strconv.FormatUint(l.memBytes, 10)))
			writeCg(filepath.Join(d, "memory.swap.max"), "0") // absent without swap accounting
		}
		errs = append(errs, writeCg(filepath.Join(d, "pids.max"), strconv.Itoa(pidsMax)))
		return errors.Join(errs...)
	}
	if c.cpu {
		d := c.dir("cpu", id)
		errs = append(errs, writeCg(filepath.Join(d, "cpu.shares"), strconv.FormatUint(shares, 10)))
		if c.cfs && l.cpus > 0 {
			errs = append(errs, writeCg(filepath.Join(d, "cpu.cfs_period_us"), strconv.Itoa(cfsPeriodUs)),
				writeCg(filepath.Join(d, "cpu.cfs_quota_us"), strconv.FormatInt(int64(l.cpus*cfsPeriodUs), 10)))
		}
	}
	if c.mem && l.memBytes > 0 {
		d, v := c.dir("memory", id), strconv.FormatUint(l.memBytes, 10)
		// memsw (memory+swap) must stay >= the memory limit: raise it
		// first, set the limit, then set it equal, so swap cannot stand in
		// for memory. It is absent without swap accounting.
		writeCg(filepath.Join(d, "memory.memsw.limit_in_bytes"), "-1")
		errs = append(errs, writeCg(filepath.Join(d, "memory.limit_in_bytes"), v))
		writeCg(filepath.Join(d, "memory.memsw.limit_in_bytes"), v)
	}
	if _, ok := c.dirs["pids"]; ok {
		errs = append(errs, writeCg(filepath.Join(c.dir("pids", id), "pids.max"), strconv.Itoa(pidsMax)))
	}
	return errors.Join(errs...)
}

// wrap starts the executor through sh, which writes its own pid into every
// hierarchy's cgroup.procs and then execs the executor: nothing runs
// outside the container, not even for the instant after fork.
func (c *cgroupsIsolator) wrap(id string, argv []string) []string {
	var b strings.Builder
	for _, d := range c.leaves(id) {
		fmt.Fprintf(&b, "echo $$ > '%s/cgroup.procs' && ", d)
	}
	b.WriteString(`exec "$@"`)
	return append([]string{"/bin/sh", "-c", b.String(), "allot-container"}, argv...)
}

func (c *cgroupsIsolator) isolate(id string, pid int) error {
	var errs []error
	for _, d := range c.leaves(id) {
		if err := writeCg(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// usage takes CPU time and memory from the container's own counters (every
// process that ever ran in it, exact), disk I/O from /proc.
func (c *cgroupsIsolator) usage(id string, pid int) procStats {
	st := groupStats(pid)
	if c.v2 {
		d := c.dir("", id)
		kv := parseKV(readCg(filepath.Join(d, "cpu.stat")))
		st.CpusUserTimeSecs, st.CpusSysTimeSecs = float64(kv["user_usec"])/1e6, float64(kv["system_usec"])/1e6
		st.MemRSSBytes = parseKV(readCg(filepath.Join(d, "memory.stat")))["anon"]
		st.MemTotalBytes = readCgUint(filepath.Join(d, "memory.current"))
		st.MemLimitBytes = readCgUint(filepath.Join(d, "memory.max"))
		return st
	}
	kv := parseKV(readCg(filepath.Join(c.dir("cpuacct", id), "cpuacct.stat")))
	st.CpusUserTimeSecs, st.CpusSysTimeSecs = float64(kv["user"])/clockTicks, float64(kv["system"])/clockTicks
	md := c.dir("memory", id)
	st.MemRSSBytes = parseKV(readCg(filepath.Join(md, "memory.stat")))["total_rss"]
	st.MemTotalBytes = readCgUint(filepath.Join(md, "memory.usage_in_bytes"))
	st.MemLimitBytes = readCgUint(filepath.Join(md, "memory.limit_in_bytes"))
	return st
}

// cpuNanos is the container's total CPU time from its own counter.
func (c *cgroupsIsolator) cpuNanos(id string) uint64 {
	if c.v2 {
		return parseKV(readCg(filepath.Join(c.dir("", id), "cpu.stat")))["usage_usec"] * 1000
	}
	return readCgUint(filepath.Join(c.dir("cpuacct", id), "cpuacct.usage"))
}

// parseKV reads "key value" lines (cpu.stat, memory.stat, memory.events,
// memory.oom_control).
func parseKV(s string) map[string]uint64 {
	out := map[string]uint64{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 {
			n, _ := strconv.ParseUint(f[1], 10, 64)
			out[f[0]] = n
		}
	}
	return out
}

// limited reports an OOM kill in the container: v2 memory.events oom_kill,
// v1 memory.oom_control oom_kill (kernels 4.13 and later). The peak is the
// container's high-water mark.
func (c *cgroupsIsolator) limited(id string, _ int, l limits) *limitation {
	if !c.mem || l.memBytes == 0 {
		return nil
	}
	if c.v2 {
		d := c.dir("", id)
		if parseKV(readCg(filepath.Join(d, "memory.events")))["oom_kill"] == 0 {
			return nil
		}
		peak := readCgUint(filepath.Join(d, "memory.peak"))
		if peak == 0 {
			peak = readCgUint(filepath.Join(d, "memory.current"))
		}
		return memLimitation(readCgUint(filepath.Join(d, "memory.max")), peak, "OOM kill in cgroup v2 memory.events")
	}
	d := c.dir("memory", id)
	if parseKV(readCg(filepath.Join(d, "memory.oom_control")))["oom_kill"] == 0 {
		return nil
	}
	return memLimitation(readCgUint(filepath.Join(d, "memory.limit_in_bytes")), readCgUint(filepath.Join(d, "memory.max_usage_in_bytes")),
		"OOM kill in cgroup v1 memory.oom_control")
}

// kill signals every process in the container: every pid in each leaf's
// cgroup.procs, wherever it sits in the process tree (a task's children in
// groups of their own, orphans reparented to init) and whoever it runs as.
// On v2, SIGKILL goes through cgroup.kill where the kernel has it (5.14
// and later), which also catches a process forking meanwhile. The pid is
// not needed: the executor is in its container before the agent knows its
// pid (the wrapper joins before exec, and isolate runs before ex.pid is set).
func (c *cgroupsIsolator) kill(id string, _ int, sig syscall.Signal) {
	c.signalLeaves(c.leaves(id), sig)
}

func (c *cgroupsIsolator) signalLeaves(leaves []string, sig syscall.Signal) {
	for _, d := range leaves {
		if c.v2 && sig == syscall.SIGKILL && writeCg(filepath.Join(d, "cgroup.kill"), "1") == nil {
			continue
		}
		for _, p := range strings.Fields(readCg(filepath.Join(d, "cgroup.procs"))) {
			if pid, _ := strconv.Atoi(p); pid > 0 {
				syscall.Kill(pid, sig)
			}
		}
	}
}

// destroy kills every process left in the container and removes it.
func (c *cgroupsIsolator) destroy(id string, _ int) error {
	return c.removeLeaves(c.leaves(id))
}

// removeTimeout bounds removeLeaves. A cgroup cannot be removed while it
// has members, and SIGKILLed processes take a moment to leave: longer on a
// loaded host, or for a process freeing much memory, or one waiting in the
// kernel. Giving up after a few seconds left containers behind for good
// (nothing retries later), so it keeps killing and retrying for this long.
var removeTimeout = 60 * time.Second

func (c *cgroupsIsolator) removeLeaves(leaves []string) error {
	var err error
	pause := 10 * time.Millisecond
	for deadline := time.Now().Add(removeTimeout); ; {
		err = nil
		c.signalLeaves(leaves, syscall.SIGKILL)
		for _, d := range leaves {
			if e := syscall.Rmdir(d); e != nil && !errors.Is(e, syscall.ENOENT) {
				err = fmt.Errorf("removing %s: %w", d, e)
			}
		}
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
		if pause < time.Second {
			pause *= 2
		}
	}
}

// containers lists the container ids under the parent (any hierarchy).
func (c *cgroupsIsolator) containers() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range c.dirs {
		ents, _ := os.ReadDir(filepath.Join(d, c.parent))
		for _, e := range ents {
			if e.IsDir() && !seen[e.Name()] {
				seen[e.Name()] = true
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// removeParent removes this agent's parent cgroup when no container is
// left in it (an agent stopping with checkpointed executors alive keeps it).
func (c *cgroupsIsolator) removeParent() {
	for _, d := range c.dirs {
		syscall.Rmdir(filepath.Join(d, c.parent))
	}
}
