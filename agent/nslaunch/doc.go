// Package nslaunch is the container launcher: the last step between an
// agent (or the built-in command executor) and a contained process. The
// caller describes the container in a Spec (JSON) and starts the allot
// binary's hidden subcommand `allot container-launch` with it (Command);
// that process (Run) joins the cgroups the Spec names (writing its own pid
// into each cgroup.procs while still root), joins the network namespace
// the Spec names, enters a
// mount namespace of its own, bind-mounts what the Spec asks, pivots into
// the image's root filesystem with /proc and a minimal /dev, drops to the
// Spec's user and finally execs the containerized program, which thus keeps
// the launcher's pid, process group and cgroup: the caller's kill, wait and
// isolators reach it as they reach a plain child.
//
// A Spec with no Rootfs, Mounts, Devices, NetNS or Hostname changes nothing
// but the user and the working directory; callers run such a command
// directly instead (Needed). Each feature fills its own part of a Spec:
// the agent's image provisioner the Rootfs and its mounts, the CNI network
// isolator NetNS and Hostname, the GPU isolator Devices. An executor that
// runs as a task's user on cgroup v1 is started through the launcher with
// only Cgroups set (besides Argv, Env, Dir and User): a process cannot be
// put into a v1 cgroup from outside before it runs, and letting it write
// its own pid would need a cgroup.procs its user may write.
//
// Run needs root (CAP_SYS_ADMIN) for everything but exec; Check says what
// the host lacks for a mount namespace, so that an agent can refuse a
// container it cannot make instead of running the program on the host.
package nslaunch
