package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/allot-sched/allot/agent/nslaunch"
)

// An executor that runs as a task's user must be in every cgroup of its
// container before it runs an instruction of its own, and no file of those
// cgroups may be its user's: a cgroup.procs the user can write lets every
// process of that user move itself (or another of its processes) in or
// out, out of its own container's memory, cpu and pids limits and into
// another container's, or its GPUs. As root the executor joins through the
// isolators' sh wrappers (wrap), writing its own pid. As a user:
//
//   - cgroup v1 (the cgroups isolator's hierarchies, gpu/nvidia's devices
//     cgroup): a v1 cgroup is joined only by writing a pid, so the executor
//     is started through `allot container-launch` with a Spec that names
//     the cgroup.procs files; the launcher, still root, writes its own pid
//     into each, then drops to the user and execs the executor, keeping its
//     pid;
//   - cgroup v2: the agent clones the executor straight into its cgroup
//     (CLONE_INTO_CGROUP);
//   - posix without gpu/nvidia's cgroup: nothing to join.

// userCgroupProcs lists the cgroup.procs files that container cid's
// executor, running as a task's user, is put into by the launcher: every
// v1 hierarchy of the cgroups isolator and gpu/nvidia's devices cgroup.
func (a *Agent) userCgroupProcs(cid string) []string {
	var out []string
	if cg, ok := a.iso.(*cgroupsIsolator); ok && !cg.v2 {
		for _, d := range cg.leaves(cid) {
			out = append(out, filepath.Join(d, "cgroup.procs"))
		}
		sort.Strings(out)
	}
	if a.gpu.pool != nil && a.gpu.dev.enforced() {
		out = append(out, filepath.Join(a.gpu.dev.leaf(cid), "cgroup.procs"))
	}
	return out
}

// userContainedCommand is containedCommand's command for an executor that
// runs as lc.cred's user, its container prepared: through the launcher
// where cgroups must be joined (lc then holds the launch's pipes and files,
// and the launcher starts as root), else the executor itself as the user,
// on v2 cloned into its cgroup (the caller closes CgroupFD after start).
func (a *Agent) userContainedCommand(ex *executor, lc *containerLaunch) (*exec.Cmd, error) {
	if _, err := a.gpuDevicesPrepare(ex); err != nil {
		return nil, err
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	procs := a.userCgroupProcs(ex.containerID)
	if len(procs) == 0 {
		attr.Credential = lc.cred
		if cg, ok := a.iso.(*cgroupsIsolator); ok && cg.v2 {
			fd, err := cg.leafFD(ex.containerID)
			if err != nil {
				return nil, fmt.Errorf("cgroups isolator: container %s: %w", ex.containerID, err)
			}
			attr.UseCgroupFD, attr.CgroupFD = true, fd
		}
		cmd := exec.Command(lc.path, lc.argv[1:]...)
		cmd.Args[0] = lc.argv[0]
		cmd.SysProcAttr = attr
		return cmd, nil
	}
	c := lc.cred
	s := &nslaunch.Spec{Argv: append([]string{lc.path}, lc.argv[1:]...), Dir: ex.sandbox, Env: lc.env,
		User: &nslaunch.User{UID: c.Uid, GID: c.Gid, Groups: c.Groups}, Cgroups: procs}
	p, err := nslaunch.NewPipes(s)
	if err != nil {
		return nil, err
	}
	args := nslaunch.LaunchArgs(a.launcher())
	lc.path, lc.argv, lc.cred, lc.extraFiles, lc.pipes = args[0], args, nil, p.ExtraFiles(), p
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = attr
	return cmd, nil
}

// leafFD opens container id's v2 cgroup for CLONE_INTO_CGROUP.
func (c *cgroupsIsolator) leafFD(id string) (int, error) {
	return syscall.Open(c.dir("", id), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
}

// reclaim gives container id's cgroup.procs and tasks back to the agent's
// own user, where an earlier agent gave them to its executor's user (it
// did so on v1 before the launcher joined executors to their cgroups): a
// recovered container's user then can no longer move its processes.
func (c *cgroupsIsolator) reclaim(id string) {
	uid, gid := os.Geteuid(), os.Getegid()
	for _, d := range c.leaves(id) {
		for _, f := range []string{"cgroup.procs", "tasks"} {
			var st syscall.Stat_t
			p := filepath.Join(d, f)
			if syscall.Lstat(p, &st) == nil && int(st.Uid) != uid {
				os.Lchown(p, uid, gid)
			}
		}
	}
}
