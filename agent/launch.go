package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	exec1 "github.com/mesos/mesos-go/api/v1/lib/executor"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
)

// launchExecutor fetches URIs into a fresh sandbox and starts the executor
// process in its own process group.
func (a *Agent) launchExecutor(ex *executor, uris []mesos.CommandInfo_URI) {
	fail := func(err error) {
		a.log.Error().Err(err).Str("executor_id", ex.id).Str("framework_id", ex.fw).Msg("executor launch failed")
		a.mu.Lock()
		defer a.mu.Unlock()
		ex.launching = false
		ex.setExitedLocked()
		for _, t := range ex.tasks {
			if !taskstate.IsTerminal(t.state) {
				a.enqueueUpdateLocked(ex, t, a.agentStatus(ex, t, mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED, err.Error()))
			}
		}
		a.cleanupLocked(ex)
		go a.destroyContainer(ex.containerID, 0)
	}
	if err := a.assignGPUs(ex); err != nil {
		fail(err)
		return
	}
	su, argv, cmdEnv, stdout, stderr, err := a.prepareSandbox(ex, uris)
	if err != nil {
		fail(err)
		return
	}
	defer stdout.Close()
	defer stderr.Close()
	path := argv[0]
	if !strings.Contains(path, "/") {
		if p := filepath.Join(ex.sandbox, path); fileExists(p) {
			path = p
		}
	}
	lc, err := a.prepareContainer(ex, path, argv, a.hostEnv(su), a.executorOwnEnv(ex, su, cmdEnv), su) // container_spec.go
	if err != nil {
		fail(err)
		return
	}
	cmd, err := a.containedCommand(ex, lc)
	if err != nil {
		fail(err)
		return
	}
	cmd.Dir = ex.sandbox
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = lc.env
	cmd.ExtraFiles = lc.extraFiles
	err = lc.start(cmd) // container_spec.go
	if fd := cmd.SysProcAttr.CgroupFD; cmd.SysProcAttr.UseCgroupFD {
		syscall.Close(fd)
	}
	if err != nil {
		fail(err)
		return
	}
	if err := a.iso.isolate(ex.containerID, cmd.Process.Pid); err != nil {
		a.log.Warn().Err(err).Str("container_id", ex.containerID).Msg("isolating executor")
	}
	a.gpuDevicesJoin(ex, cmd.Process.Pid) // gpu_cgroup.go
	a.mu.Lock()
	ex.pid, ex.launching = cmd.Process.Pid, false
	if ex.applied != ex.limits {
		a.setLimitsLocked(ex, true) // tasks joined while it was starting
	}
	a.checkpointLocked(ex)
	a.mu.Unlock()
	a.log.Info().Str("executor_id", ex.id).Str("framework_id", ex.fw).Int("pid", cmd.Process.Pid).Str("sandbox", ex.sandbox).Msg("executor started")
	a.killIfNotSubscribed(ex)
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
		}
		a.executorExited(ex, code)
	}()
}

// prepareSandbox makes ex's sandbox: the user to run as (an unknown one is
// an error for ex's tasks), the fetched URIs, stdout and stderr, all owned
// by that user. It returns the executor's argv and the environment its
// CommandInfo adds.
func (a *Agent) prepareSandbox(ex *executor, uris []mesos.CommandInfo_URI) (su *switchedUser, argv []string,
	env []mesos.Environment_Variable, stdout, stderr *os.File, err error) {
	if su, err = a.credentialFor(ex); err != nil {
		return
	}
	if err = os.MkdirAll(ex.sandbox, 0o755); err != nil {
		return
	}
	a.recordSandboxOwner(ex)
	a.mu.Lock()
	vols := linkedVolumesLocked(ex) // container_group.go
	a.mu.Unlock()
	uid, gid := -1, -1
	if su != nil {
		uid, gid = int(su.cred.Uid), int(su.cred.Gid)
	}
	// A container in an image has its volumes bound instead (container_image.go).
	if ex.container.GetMesos().GetImage() == nil {
		if err = a.linkVolumes(ex.sandbox, vols, uid, gid); err != nil {
			return
		}
	}
	if err = fetchAll(uris, ex.sandbox, a.hc); err != nil {
		err = fmt.Errorf("fetcher: %w", err)
		return
	}
	if argv, env, err = a.executorArgv(ex); err != nil {
		return
	}
	stdout, err1 := os.Create(filepath.Join(ex.sandbox, "stdout"))
	stderr, err2 := os.Create(filepath.Join(ex.sandbox, "stderr"))
	if err1 != nil || err2 != nil {
		stdout.Close()
		stderr.Close()
		err = fmt.Errorf("creating stdout/stderr in sandbox: %v %v", err1, err2)
		return
	}
	if su != nil {
		if err = chownTree(ex.sandbox, su.cred); err != nil {
			stdout.Close()
			stderr.Close()
			err = fmt.Errorf("giving the sandbox to uid %d: %w", su.cred.Uid, err)
		}
	}
	return
}

// killIfNotSubscribed kills ex if it has not subscribed within the
// registration timeout; its tasks then fail REASON_EXECUTOR_REGISTRATION_TIMEOUT.
func (a *Agent) killIfNotSubscribed(ex *executor) {
	a.clock().AfterFunc(a.cfg.RegistrationTimeout, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if ex.subscribed || ex.exited {
			return
		}
		a.log.Warn().Str("executor_id", ex.id).Str("framework_id", ex.fw).Dur("timeout", a.cfg.RegistrationTimeout).
			Msg("executor did not subscribe in time; killing it")
		// One shut down before it started never subscribes to hear so:
		// it is killed too, and its tasks stay KILLED.
		if !ex.killing {
			ex.registrationTimedOut = true
			ex.killing = true
		}
		go a.iso.kill(ex.containerID, ex.pid, syscall.SIGKILL)
	})
}

// executorArgv is the command line of ex's executor and the environment
// its CommandInfo adds.
func (a *Agent) executorArgv(ex *executor) ([]string, []mesos.Environment_Variable, error) {
	if ex.command {
		return a.cfg.ExecutorCommand, nil, nil
	}
	ci := ex.info.Command
	if ci == nil || ci.GetValue() == "" && len(ci.Arguments) == 0 {
		return nil, nil, fmt.Errorf("executor %s has no command", ex.id)
	}
	var argv []string
	if ci.GetShell() {
		argv = []string{"/bin/sh", "-c", ci.GetValue()}
	} else {
		argv = append([]string{ci.GetValue()}, ci.Arguments...)
		if len(ci.Arguments) > 0 {
			argv = append([]string{ci.GetValue()}, ci.Arguments[1:]...)
		}
	}
	var env []mesos.Environment_Variable
	if ci.Environment != nil {
		env = ci.Environment.Variables
	}
	return argv, env, nil
}

// containedCommand prepares ex's container with its current limits and
// returns the command that starts the executor (lc.path, with lc.argv[0]
// as its name) inside it, in a process group of its own, as lc.cred's
// user if that is not nil.
func (a *Agent) containedCommand(ex *executor, lc *containerLaunch) (*exec.Cmd, error) {
	a.mu.Lock()
	l := ex.limits
	a.mu.Unlock()
	err := a.iso.prepare(ex.containerID, l)
	a.mu.Lock()
	ex.applied = l
	a.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s isolator: preparing container %s: %w", a.iso.kind(), ex.containerID, err)
	}
	if lc.cred != nil {
		// A task's user must not join its cgroups itself (cgroup_join.go).
		return a.userContainedCommand(ex, lc)
	}
	path, argv := lc.path, lc.argv
	// gpu/nvidia's devices cgroup is joined innermost (gpu_cgroup.go).
	if path, argv, err = a.gpuDeviceWrap(ex, path, argv); err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	// A wrapper adds arguments in front; comparing w[0] with path would miss
	// it for an executor that is itself /bin/sh (a CommandInfo shell
	// command), which then ran unwrapped and forked its command before
	// the agent moved it into its container: the child stayed outside.
	if w := a.iso.wrap(ex.containerID, append([]string{path}, argv[1:]...)); len(w) > len(argv) {
		cmd = exec.Command(w[0], w[1:]...)
	} else {
		cmd = exec.Command(path, argv[1:]...)
		cmd.Args[0] = argv[0]
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// mesosDuration writes d the way Mesos does ("5secs", "250ms", "15mins").
func mesosDuration(d time.Duration) string {
	switch {
	case d%time.Minute == 0 && d >= time.Minute:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "mins"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "secs"
	default:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	}
}

// executorEnv is ex's environment: the agent's own (less its ALLOT_ and
// MESOS_ variables, and, for an executor switched to another user, less
// HOME, USER and LOGNAME, which are that user's), the MESOS_ variables of
// the executor API, and last what its CommandInfo sets (which wins: a
// framework may set HOME itself). The command executor hands it on to
// its tasks.
func (a *Agent) executorEnv(ex *executor, su *switchedUser, extra []mesos.Environment_Variable) []string {
	return append(a.hostEnv(su), a.executorOwnEnv(ex, su, extra)...)
}

// hostEnv is the part of an executor's environment that is the agent's
// own (what a container with an image of its own does not get).
func (a *Agent) hostEnv(su *switchedUser) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ALLOT_") || strings.HasPrefix(kv, "MESOS_") {
			continue
		}
		if k, _, _ := strings.Cut(kv, "="); su != nil && slices.Contains(userEnvKeys, k) {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// executorOwnEnv is what executorEnv sets for ex itself: its user's, the
// executor API's and its CommandInfo's variables.
func (a *Agent) executorOwnEnv(ex *executor, su *switchedUser, extra []mesos.Environment_Variable) []string {
	env := su.env()
	cp := "0"
	if ex.checkpoint {
		cp = "1"
	}
	env = append(env,
		"MESOS_FRAMEWORK_ID="+ex.fw,
		"MESOS_EXECUTOR_ID="+ex.id,
		"MESOS_DIRECTORY="+ex.sandbox,
		"MESOS_SANDBOX="+ex.sandbox,
		"MESOS_AGENT_ENDPOINT="+a.addr,
		"MESOS_SLAVE_ID="+a.id,
		"MESOS_AGENT_ID="+a.id,
		"MESOS_SLAVE_PID=slave(1)@"+a.addr,
		"MESOS_CONTAINER_ID="+ex.containerID,
		"MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD="+mesosDuration(a.cfg.ShutdownGrace),
		"MESOS_CHECKPOINT="+cp,
		"MESOS_HTTP_COMMAND_EXECUTOR=1",
	)
	if ex.checkpoint {
		env = append(env, "MESOS_RECOVERY_TIMEOUT=15mins", "MESOS_SUBSCRIPTION_BACKOFF_MAX=2secs")
	}
	for _, v := range extra {
		env = append(env, v.Name+"="+v.GetValue())
	}
	env = append(env, a.executorGPUEnv(ex)...)
	env = append(env, a.executorTokenEnv(ex)...)
	return append(env, a.throttleEnv()...)
}

// executorExited ends an executor run: its unfinished tasks fail (or are
// killed, if we were killing them) and the master learns the exit status.
func (a *Agent) executorExited(ex *executor, code int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ex.exited {
		return
	}
	ex.setExitedLocked()
	if ex.stream != nil {
		ex.stream.Close("executor exited")
	}
	a.log.Info().Str("executor_id", ex.id).Str("framework_id", ex.fw).Int("status", code).Msg("executor exited")
	if ex.limitation == nil && ex.pid > 0 {
		if lim := a.iso.limited(ex.containerID, ex.pid, ex.limits); lim != nil {
			ex.limitation = lim // the kernel killed the executor itself
		}
	}
	go a.destroyContainer(ex.containerID, ex.pid)
	for _, t := range ex.tasks {
		if taskstate.IsTerminal(t.state) {
			continue
		}
		if lim := ex.limitation; lim != nil {
			a.enqueueUpdateLocked(ex, t, a.agentStatus(ex, t, mesos.TASK_FAILED, lim.reason, lim.message))
		} else if ex.registrationTimedOut {
			a.enqueueUpdateLocked(ex, t, a.agentStatus(ex, t, mesos.TASK_FAILED, mesos.REASON_EXECUTOR_REGISTRATION_TIMEOUT,
				fmt.Sprintf("executor did not subscribe to the executor API within %v", a.cfg.RegistrationTimeout)))
		} else if ex.killing {
			a.enqueueUpdateLocked(ex, t, a.agentStatus(ex, t, mesos.TASK_KILLED, mesos.REASON_EXECUTOR_TERMINATED, "executor shut down"))
		} else {
			a.enqueueUpdateLocked(ex, t, a.agentStatus(ex, t, mesos.TASK_FAILED, mesos.REASON_EXECUTOR_TERMINATED,
				fmt.Sprintf("executor exited with status %d before the task ended", code)))
		}
	}
	if !ex.commandTask && !ex.forgotten {
		// As Mesos: frameworks hear of executors they named, not of the
		// command executor behind a plain command task.
		a.send(&api.AgentCall{Type: api.AgentCallType_EXECUTOR_EXITED, FrameworkId: ex.fw, ExecutorId: ex.id, ExitStatus: int32(code)})
	}
	a.cleanupLocked(ex)
}

// shutdownExecutor asks the executor to shut down; after the grace period
// every process of its container gets SIGTERM, and SIGKILL half a grace
// period later (the executor's own tree and groups under posix). Caller
// holds a.mu.
func (a *Agent) shutdownExecutor(ex *executor) {
	if ex.exited || ex.killing {
		return
	}
	ex.killing = true
	ex.queued = nil
	if ex.stream != nil {
		ex.stream.Send(&exec1.Event{Type: exec1.Event_SHUTDOWN})
	}
	grace, gone, clock := a.cfg.ShutdownGrace, ex.goneLocked(), a.clock()
	go func() {
		select {
		case <-gone:
			return
		case <-clock.After(grace):
		}
		a.signalExecutor(ex, syscall.SIGTERM)
		select {
		case <-gone:
			return
		case <-clock.After(grace / 2):
		}
		a.signalExecutor(ex, syscall.SIGKILL)
	}()
}

// setExitedLocked marks ex exited and wakes whoever waits on goneLocked.
// Caller holds a.mu.
func (ex *executor) setExitedLocked() {
	if ex.exited {
		return
	}
	ex.exited = true
	if ex.gone != nil {
		close(ex.gone)
	}
}

// goneLocked is closed once ex has exited. Caller holds a.mu.
func (ex *executor) goneLocked() <-chan struct{} {
	if ex.gone == nil {
		ex.gone = make(chan struct{})
		if ex.exited {
			close(ex.gone)
		}
	}
	return ex.gone
}

// signalExecutor sends sig to every process of ex's container while the
// executor runs (its pid is only known, and only its own, until it exited;
// an executor still starting is reached by killIfNotSubscribed). What
// outlives the executor, the container's destroy kills.
func (a *Agent) signalExecutor(ex *executor, sig syscall.Signal) {
	a.mu.Lock()
	cid, pid, gone := ex.containerID, ex.pid, ex.exited
	a.mu.Unlock()
	if !gone && pid > 0 {
		a.iso.kill(cid, pid, sig)
	}
}
