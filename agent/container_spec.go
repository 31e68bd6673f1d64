package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/agent/nslaunch"
)

// Containers that need more than a process: a root filesystem from an
// image, a network namespace, device files. The agent describes each such
// container in an nslaunch.Spec, filled by one function per feature, each
// in its own file:
//
//	imageSpec    container_image.go    the image's rootfs, its mounts, argv, env
//	networkSpec  container_network.go  the network namespace and host name
//	gpuSpec      gpu_devices.go        the GPUs' device files
//
// and launched through `allot container-launch` (Config.LauncherCommand).
// A custom executor whose ExecutorInfo.container asks for one runs entirely
// in it. The built-in command executor runs on the host and runs its
// task's command through the launcher with the Spec the agent wrote for it
// (containerSpecEnv), as Mesos's command executor runs a task in its
// rootfs. A container that asks for none of it gets no Spec and starts
// exactly as before. When the container is destroyed, each feature's
// release hook frees what its Spec part holds (releaseContainer).

// containerSpecEnv names, in the built-in command executor's environment,
// the file holding its task's Spec.
const containerSpecEnv = "ALLOT_CONTAINER_SPEC"

// containerOf is the ContainerInfo o's container is made from and the
// command run in it: the task's for a command task (its executor is made
// up here), else the executor's.
func containerOf(o *runOrder) (*mesos.ContainerInfo, *mesos.CommandInfo) {
	if o.commandTask && len(o.tasks) == 1 {
		return o.tasks[0].Container, o.tasks[0].Command
	}
	return o.exInfo.Container, o.exInfo.Command
}

// containerSpec is the Spec of ex's container around argv (the program as
// it would run on the host, in the sandbox, as su), or nil when no feature
// asks for more than a process. The features add their own variables to
// Spec.Env; hostEnv (the agent's) and ownEnv (the executor's) are merged
// around them here. A command task's Spec has neither: its executor adds
// its own when it runs the task.
func (a *Agent) containerSpec(ex *executor, argv, hostEnv, ownEnv []string, su *switchedUser) (*nslaunch.Spec, error) {
	s := &nslaunch.Spec{Argv: argv, Dir: ex.sandbox}
	if su != nil {
		s.User = &nslaunch.User{UID: su.cred.Uid, GID: su.cred.Gid, Groups: su.cred.Groups}
	}
	for _, fill := range []func(*executor, *nslaunch.Spec) error{a.imageSpec, a.networkSpec, a.gpuSpec} {
		if err := fill(ex, s); err != nil {
			return nil, err
		}
	}
	if !s.Needed() {
		return nil, nil
	}
	if s.Rootfs != "" && s.NetNS == "" {
		s.Mounts = append(s.Mounts, hostNetworkFiles()...)
	}
	// The features' variables (an image's) give way to the executor's own;
	// in an image, the agent's own environment stays outside, and the
	// sandbox is where the container sees it.
	if s.Rootfs == "" {
		s.Env = nslaunch.MergeEnv(hostEnv, s.Env, ownEnv)
	} else {
		s.Env = nslaunch.MergeEnv(s.Env, ownEnv, []string{"MESOS_SANDBOX=" + nslaunch.SandboxPath})
	}
	return s, nil
}

// releaseContainer frees what the features' Spec parts hold for container
// cid (a mounted rootfs, a network attachment, devices). Every hook is
// idempotent: a container may be destroyed more than once.
func (a *Agent) releaseContainer(cid string) {
	a.releaseGroupTasks(cid) // container_group.go
	a.releaseImage(cid)
	a.releaseLayerBase(cid)
	a.releaseNetwork(cid)
	a.releaseGPUDevices(cid)
	dir := a.containerDir(cid)
	os.Remove(filepath.Join(dir, "task.json"))
	os.Remove(dir) // only once every feature has emptied it
}

// recoverContainerDirs runs at start, after recovery: the runtime files of
// a container that lives on (live) are kept and its image layers held;
// those of any other were left by a run that is over and are released.
func (a *Agent) recoverContainerDirs(live map[string]bool) {
	entries, _ := os.ReadDir(filepath.Join(a.cfg.WorkDir, "containers"))
	for _, e := range entries {
		if live[e.Name()] {
			a.adoptImage(e.Name())
			a.adoptGroupTasks(e.Name())
			continue
		}
		a.log.Info().Str("container_id", e.Name()).Msg("releasing a stale container of an earlier run")
		a.releaseContainer(e.Name())
	}
}

// containerDir is where the agent keeps container cid's runtime files (its
// task's Spec, its rootfs mount point): under the work dir, outside the
// sandbox, which the task can write.
func (a *Agent) containerDir(cid string) string {
	return filepath.Join(a.cfg.WorkDir, "containers", cid)
}

// launcher is the command that runs `allot container-launch`.
func (a *Agent) launcher() []string {
	if len(a.cfg.LauncherCommand) > 0 {
		return a.cfg.LauncherCommand
	}
	return []string{a.cfg.ExecutorCommand[0], "container-launch"}
}

// writeTaskSpec writes the Spec of a command task's container for its
// command executor and returns the environment entry naming it.
func (a *Agent) writeTaskSpec(ex *executor, s *nslaunch.Spec) (string, error) {
	dir := a.containerDir(ex.containerID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "task.json")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	err = s.Encode(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("writing the task's container spec: %w", err)
	}
	return containerSpecEnv + "=" + p, nil
}

// containerLaunch is how launchExecutor starts ex: the program (path, with
// argv[0] as its name), its environment and user, and, when it goes
// through the launcher, the launch's pipes.
type containerLaunch struct {
	path       string
	argv, env  []string
	cred       *syscall.Credential
	extraFiles []*os.File
	pipes      *nslaunch.Pipes
}

// prepareContainer decides how ex starts. A command task whose container
// has a Spec gets it written for its command executor, which then runs as
// the agent's user (root: it must make the task's namespaces) and drops
// the task to su in the launcher. A task group's executor gets its group's
// directory (prepareGroup) and, when the group has containers, runs as the
// agent's user for the same reason. A custom executor with a Spec is
// itself started through the launcher. Anything else starts as before.
func (a *Agent) prepareContainer(ex *executor, path string, argv, hostEnv, ownEnv []string, su *switchedUser) (*containerLaunch, error) {
	lc := &containerLaunch{path: path, argv: argv, env: append(append([]string(nil), hostEnv...), ownEnv...), cred: su.credential()}
	if ex.command && !ex.commandTask {
		entry, asAgent, err := a.prepareGroup(ex, su) // container_group.go
		if err != nil {
			return nil, err
		}
		lc.env = append(lc.env, entry)
		if asAgent {
			lc.cred = nil
		}
		return lc, nil
	}
	if ex.container == nil {
		return lc, nil
	}
	if ex.command {
		if ex.containerCommand == nil {
			return lc, nil
		}
		s, err := a.containerSpec(ex, commandArgv(ex.containerCommand), nil, nil, su)
		if s == nil || err != nil {
			return lc, err
		}
		entry, err := a.writeTaskSpec(ex, s)
		if err != nil {
			return nil, err
		}
		lc.env, lc.cred = append(lc.env, entry), nil
		return lc, nil
	}
	s, err := a.containerSpec(ex, append([]string{path}, argv[1:]...), hostEnv, ownEnv, su)
	if s == nil || err != nil {
		return lc, err
	}
	p, err := nslaunch.NewPipes(s)
	if err != nil {
		return nil, err
	}
	args := nslaunch.LaunchArgs(a.launcher())
	lc.path, lc.argv, lc.cred, lc.extraFiles, lc.pipes = args[0], args, nil, p.ExtraFiles(), p
	return lc, nil
}

// start starts cmd; through the launcher, it also sends the Spec and waits
// for the launcher to exec the executor, returning the launcher's failure
// if it could not (the launcher, which then exits, is reaped).
func (lc *containerLaunch) start(cmd *exec.Cmd) error {
	err := cmd.Start()
	if lerr := lc.pipes.Started(err); err == nil && lerr != nil {
		cmd.Wait()
		return lerr
	}
	return err
}

// commandArgv is what a CommandInfo runs on the host: "/bin/sh -c value"
// for a shell command, else value with arguments[1:] (arguments[0] is the
// program's name, as Mesos has it).
func commandArgv(ci *mesos.CommandInfo) []string {
	if ci.GetShell() {
		return []string{"/bin/sh", "-c", ci.GetValue()}
	}
	argv := []string{ci.GetValue()}
	if len(ci.Arguments) > 1 {
		argv = append(argv, ci.Arguments[1:]...)
	}
	return argv
}

// hostNetworkFiles are the host's name-resolution files, bound read-only
// into a container that has its own rootfs but the host's network, as
// Mesos does: the image's own would name another network.
func hostNetworkFiles() []nslaunch.Mount {
	var out []nslaunch.Mount
	for _, f := range []string{"/etc/hosts", "/etc/resolv.conf", "/etc/hostname"} {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
			out = append(out, nslaunch.Mount{Source: f, Target: f, ReadOnly: true})
		}
	}
	return out
}
