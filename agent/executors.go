package agent

import (
	"fmt"
	"net/http"
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

// executor is one executor run on this agent.
type executor struct {
	fw, id      string
	info        mesos.ExecutorInfo
	fwInfo      mesos.FrameworkInfo
	command     bool // the built-in executor (command tasks, task groups)
	commandTask bool // runs one command task (no ExecutorInfo was given)
	checkpoint  bool
	sandbox     string
	containerID string
	pid         int
	launching   bool
	subscribed  bool // has subscribed at least once
	exited      bool
	// gone is closed once exited is set (goneLocked makes it on demand).
	gone    chan struct{}
	killing bool // shut down or all tasks killed: tasks end KILLED
	// registrationTimedOut: killed for not subscribing; tasks end FAILED.
	registrationTimedOut bool
	stream               *api.Stream
	queued               []*exec1.Event // LAUNCH events waiting for SUBSCRIBE
	tasks                map[string]*agentTask
	// limits are its container's (executorLimits); limitation, once set,
	// is the limit it broke, and its tasks fail with it.
	limits     limits
	limitation *limitation
	applied    limits // what the container was last given
	resizing   bool   // a resize goroutine is applying limits
	// diskUsed is the sandbox's size at the last disk/du check; diskWarned:
	// its quota excess was logged (warn-only mode logs it once).
	diskUsed   uint64
	diskWarned bool
	// forgotten: the agent dropped it with its tasks (the master removed
	// the agent, removed.go); its exit is reported to no one.
	forgotten bool
}

// agentTask is a task and its status update stream: pending holds the
// updates not yet acknowledged; only the head is in flight, so a framework
// sees a task's updates in order.
type agentTask struct {
	info      mesos.TaskInfo
	state     mesos.TaskState
	latest    *mesos.TaskStatus
	pending   []*mesos.TaskStatus
	nextRetry time.Time
	backoff   time.Duration
	launched  bool
}

func exKey(fw, ex string) string { return fw + "/" + ex }

func (a *Agent) handleEvent(ev *api.AgentEvent) {
	switch ev.Type {
	case api.AgentEventType_PING:
	case api.AgentEventType_RUN:
		a.run(ev)
	case api.AgentEventType_KILL:
		a.killTask(ev.FrameworkId, ev.ExecutorId, ev.TaskId, time.Duration(ev.GraceNanos))
	case api.AgentEventType_SHUTDOWN_EXECUTOR:
		a.mu.Lock()
		if ex := a.executors[exKey(ev.FrameworkId, ev.ExecutorId)]; ex != nil {
			a.shutdownExecutor(ex)
		}
		a.mu.Unlock()
	case api.AgentEventType_SHUTDOWN_FRAMEWORK:
		a.mu.Lock()
		for _, ex := range a.executors {
			if ex.fw == ev.FrameworkId {
				a.shutdownExecutor(ex)
			}
		}
		delete(a.frameworks, ev.FrameworkId)
		a.mu.Unlock()
	case api.AgentEventType_ACKNOWLEDGE:
		a.acknowledged(ev.FrameworkId, ev.TaskId, ev.Uuid)
	case api.AgentEventType_FRAMEWORK_MESSAGE:
		a.mu.Lock()
		if ex := a.executors[exKey(ev.FrameworkId, ev.ExecutorId)]; ex != nil && ex.stream != nil {
			ex.stream.Send(&exec1.Event{Type: exec1.Event_MESSAGE, Message: &exec1.Event_Message{Data: ev.Data}})
		}
		a.mu.Unlock()
	default:
		a.log.Warn().Int32("type", int32(ev.Type)).Msg("unknown event from master")
	}
}

func (a *Agent) run(ev *api.AgentEvent) {
	var fwInfo mesos.FrameworkInfo
	if err := fwInfo.Unmarshal(ev.FrameworkInfo); err != nil {
		a.log.Error().Err(err).Msg("RUN with bad framework info")
		return
	}
	fwInfo.ID = &mesos.FrameworkID{Value: ev.FrameworkId}
	var (
		tasks       []mesos.TaskInfo
		exInfo      mesos.ExecutorInfo
		command     bool
		commandTask bool
		launch      *exec1.Event
	)
	switch {
	case len(ev.TaskGroup) > 0:
		var tg mesos.TaskGroupInfo
		if err := tg.Unmarshal(ev.TaskGroup); err != nil || exInfo.Unmarshal(ev.ExecutorInfo) != nil {
			a.log.Error().Msg("RUN with bad task group or executor info")
			return
		}
		tasks = tg.Tasks
		// The default executor is the built-in one.
		command = exInfo.GetType() == mesos.ExecutorInfo_DEFAULT || exInfo.Command == nil
		launch = &exec1.Event{Type: exec1.Event_LAUNCH_GROUP, LaunchGroup: &exec1.Event_LaunchGroup{TaskGroup: tg}}
	default:
		var ti mesos.TaskInfo
		if err := ti.Unmarshal(ev.Task); err != nil {
			a.log.Error().Err(err).Msg("RUN with bad task info")
			return
		}
		tasks = []mesos.TaskInfo{ti}
		if ti.Executor != nil {
			exInfo = *ti.Executor
		} else {
			command, commandTask = true, true
			exInfo = mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: ti.TaskID.Value},
				Name: strPtr("Command Executor (Task: " + ti.TaskID.Value + ")"), Source: strPtr(ti.TaskID.Value)}
		}
		launch = &exec1.Event{Type: exec1.Event_LAUNCH, Launch: &exec1.Event_Launch{Task: ti}}
	}
	exInfo.FrameworkID = &mesos.FrameworkID{Value: ev.FrameworkId}

	a.mu.Lock()
	defer a.mu.Unlock()
	a.frameworks[ev.FrameworkId] = &fwInfo
	key := exKey(ev.FrameworkId, exInfo.ExecutorID.Value)
	ex := a.executors[key]
	if ex != nil && (ex.exited || ex.killing) {
		// A new run of an executor id whose last run ended.
		for id, t := range ex.tasks {
			if len(t.pending) == 0 {
				delete(ex.tasks, id)
			}
		}
		if len(ex.tasks) > 0 {
			for _, ti := range tasks {
				a.newTaskFailed(ex, ti, mesos.TASK_FAILED, mesos.REASON_EXECUTOR_TERMINATED, "executor "+exInfo.ExecutorID.Value+" is still shutting down")
			}
			return
		}
		ex = nil
	}
	grown := ex != nil
	if ex == nil {
		ex = &executor{fw: ev.FrameworkId, id: exInfo.ExecutorID.Value, info: exInfo, fwInfo: fwInfo, command: command, commandTask: commandTask,
			checkpoint: fwInfo.GetCheckpoint(), containerID: string(hexID()), tasks: map[string]*agentTask{}, launching: true}
		ex.sandbox = filepath.Join(a.cfg.WorkDir, "slaves", orDefault(a.id, "unregistered"), "frameworks", ex.fw, "executors", ex.id, "runs", ex.containerID)
		a.executors[key] = ex
		var uris []mesos.CommandInfo_URI
		if command {
			for _, ti := range tasks {
				if ti.Command != nil {
					uris = append(uris, ti.Command.URIs...)
				}
			}
		} else if exInfo.Command != nil {
			uris = exInfo.Command.URIs
		}
		go a.launchExecutor(ex, uris)
	}
	for _, ti := range tasks {
		ex.tasks[ti.TaskID.Value] = &agentTask{info: ti, state: mesos.TASK_STAGING}
	}
	a.setLimitsLocked(ex, grown)
	if ex.stream != nil {
		ex.stream.Send(launch)
		for _, ti := range tasks {
			ex.tasks[ti.TaskID.Value].launched = true
		}
	} else {
		ex.queued = append(ex.queued, launch)
	}
	a.checkpointLocked(ex)
}

func strPtr(s string) *string { return &s }

func hexID() string {
	b := newUUID()
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

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
	cmd, err := a.containedCommand(ex, path, argv, su.credential())
	if err != nil {
		fail(err)
		return
	}
	cmd.Dir = ex.sandbox
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = a.executorEnv(ex, su, cmdEnv)
	err = cmd.Start()
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
// returns the command that starts the executor (path, with argv[0] as its
// name) inside it, in a process group of its own, as cred's user if cred
// is not nil.
func (a *Agent) containedCommand(ex *executor, path string, argv []string, cred *syscall.Credential) (*exec.Cmd, error) {
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
	attr := &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	wrap := true
	if cg, ok := a.iso.(*cgroupsIsolator); ok && cred != nil {
		// The executor enters its container as its own user: v1 lets it
		// write its pid once cgroup.procs is its own; v2 would need the
		// common ancestor's, so the agent clones it into the container.
		fd, err := cg.enterAs(ex.containerID, int(cred.Uid), int(cred.Gid))
		if err != nil {
			return nil, fmt.Errorf("cgroups isolator: container %s for uid %d: %w", ex.containerID, cred.Uid, err)
		}
		if fd >= 0 {
			attr.UseCgroupFD, attr.CgroupFD, wrap = true, fd, false
		}
	}
	var cmd *exec.Cmd
	// A wrapper adds arguments in front; comparing w[0] with path would miss
	// it for an executor that is itself /bin/sh (a CommandInfo shell
	// command), which then ran unwrapped and forked its command before
	// the agent moved it into its container: the child stayed outside.
	if w := a.iso.wrap(ex.containerID, append([]string{path}, argv[1:]...)); wrap && len(w) > len(argv) {
		cmd = exec.Command(w[0], w[1:]...)
	} else {
		cmd = exec.Command(path, argv[1:]...)
		cmd.Args[0] = argv[0]
	}
	cmd.SysProcAttr = attr
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
	env = append(env, su.env()...)
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

// cleanupLocked forgets an exited executor once every update of its tasks
// is acknowledged.
func (a *Agent) cleanupLocked(ex *executor) {
	if !ex.exited {
		a.checkpointLocked(ex)
		return
	}
	for id, t := range ex.tasks {
		if len(t.pending) == 0 && taskstate.IsTerminal(t.state) {
			delete(ex.tasks, id)
		}
	}
	if len(ex.tasks) == 0 {
		if a.executors[exKey(ex.fw, ex.id)] == ex {
			delete(a.executors, exKey(ex.fw, ex.id))
		}
		os.Remove(a.checkpointPath(ex))
		return
	}
	a.checkpointLocked(ex)
}

func (a *Agent) agentStatus(ex *executor, t *agentTask, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) *mesos.TaskStatus {
	now := float64(a.clock().Now().UnixNano()) / 1e9
	return &mesos.TaskStatus{TaskID: t.info.TaskID, State: state.Enum(), Source: mesos.SOURCE_AGENT.Enum(), Reason: reason.Enum(),
		Message: &msg, Timestamp: &now, ExecutorID: &mesos.ExecutorID{Value: ex.id}, UUID: newUUID()}
}

func (a *Agent) newTaskFailed(ex *executor, ti mesos.TaskInfo, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) {
	t := &agentTask{info: ti, state: mesos.TASK_STAGING}
	ex.tasks[ti.TaskID.Value] = t
	a.enqueueUpdateLocked(ex, t, a.agentStatus(ex, t, state, reason, msg))
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

func (a *Agent) killTask(fwID, exID, taskID string, grace time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var ex *executor
	if exID != "" {
		ex = a.executors[exKey(fwID, exID)]
	} else {
		ex = a.executors[exKey(fwID, taskID)]
	}
	if ex == nil {
		return
	}
	t := ex.tasks[taskID]
	if t == nil || taskstate.IsTerminal(t.state) {
		return
	}
	a.log.Debug().Str("task_id", taskID).Str("executor_id", ex.id).Bool("launched", t.launched).Bool("connected", ex.stream != nil).Msg("kill")
	if !t.launched {
		// Never reached the executor: kill it here.
		var q []*exec1.Event
		for _, ev := range ex.queued {
			if ev.Launch != nil && ev.Launch.Task.TaskID.Value == taskID {
				continue
			}
			q = append(q, ev)
		}
		ex.queued = q
		a.enqueueUpdateLocked(ex, t, a.agentStatus(ex, t, mesos.TASK_KILLED, mesos.REASON_TASK_KILLED_DURING_LAUNCH, "killed before launch"))
		return
	}
	ev := &exec1.Event{Type: exec1.Event_KILL, Kill: &exec1.Event_Kill{TaskID: t.info.TaskID}}
	if grace > 0 {
		ev.Kill.KillPolicy = &mesos.KillPolicy{GracePeriod: &mesos.DurationInfo{Nanoseconds: int64(grace)}}
	}
	if ex.stream != nil {
		ex.stream.Send(ev)
		return
	}
	if ex.exited {
		return
	}
	// Launched but the executor is not connected (it is re-subscribing after
	// an agent restart): deliver the kill when it is back.
	ex.queued = append(ex.queued, ev)
}

// enqueueUpdateLocked appends st to the task's update stream and sends it
// if it is the head.
func (a *Agent) enqueueUpdateLocked(ex *executor, t *agentTask, st *mesos.TaskStatus) {
	if len(st.UUID) == 0 {
		st.UUID = newUUID()
	}
	if a.id != "" {
		st.AgentID = &mesos.AgentID{Value: a.id}
	}
	if st.ExecutorID == nil {
		st.ExecutorID = &mesos.ExecutorID{Value: ex.id}
	}
	t.state, t.latest = st.GetState(), st
	t.pending = append(t.pending, st)
	if len(t.pending) == 1 {
		a.forwardLocked(ex, t, true)
	}
	a.checkpointLocked(ex)
}

func (a *Agent) forwardLocked(ex *executor, t *agentTask, fresh bool) {
	if fresh || t.backoff == 0 {
		t.backoff = time.Second
	} else if t.backoff < 32*time.Second {
		t.backoff *= 2
	}
	t.nextRetry = a.clock().Now().Add(t.backoff)
	if !a.connected {
		return
	}
	b, _ := t.pending[0].Marshal()
	a.send(&api.AgentCall{Type: api.AgentCallType_STATUS_UPDATE, FrameworkId: ex.fw, ExecutorId: ex.id, Status: b})
}

// retryLoop resends the head update of every task whose acknowledgement is
// overdue, with exponential backoff.
func (a *Agent) retryLoop() {
	clock := a.clock()
	for {
		select {
		case <-a.stop:
			return
		case <-clock.After(200 * time.Millisecond):
		}
		now := clock.Now()
		a.mu.Lock()
		if a.connected {
			for _, ex := range a.executors {
				for _, tk := range ex.tasks {
					if len(tk.pending) > 0 && now.After(tk.nextRetry) {
						a.forwardLocked(ex, tk, false)
					}
				}
			}
		}
		a.mu.Unlock()
	}
}

func (a *Agent) acknowledged(fwID, taskID string, uuid []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ex := range a.executors {
		if ex.fw != fwID {
			continue
		}
		t := ex.tasks[taskID]
		if t == nil || len(t.pending) == 0 || string(t.pending[0].UUID) != string(uuid) {
			continue
		}
		head := t.pending[0]
		t.pending = t.pending[1:]
		if head.GetSource() == mesos.SOURCE_EXECUTOR && ex.stream != nil {
			ex.stream.Send(&exec1.Event{Type: exec1.Event_ACKNOWLEDGED, Acknowledged: &exec1.Event_Acknowledged{TaskID: t.info.TaskID, UUID: uuid}})
		}
		if len(t.pending) > 0 {
			a.forwardLocked(ex, t, true)
		} else if taskstate.IsTerminal(t.state) {
			delete(ex.tasks, taskID)
			if ex.commandTask && len(ex.tasks) == 0 {
				// The command executor of a plain command task has nothing
				// left to do and exits by itself now; if it does not (it is
				// stuck, or an older one that missed this ack), it is shut
				// down, so that its container goes with it.
				a.shutdownExecutor(ex)
			}
		}
		a.cleanupLocked(ex)
		return
	}
}

// handleExecutor serves POST /api/v1/executor.
func (a *Agent) handleExecutor(w http.ResponseWriter, r *http.Request) {
	claims, ok := a.authenticateExecutor(w, r)
	if !ok {
		return
	}
	req, err := api.ReadRequest(w, r)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	var call exec1.Call
	if err := req.Decode(&call, "executor.Call"); err != nil {
		api.WriteError(w, err)
		return
	}
	if !a.authorizeExecutorCall(w, claims, &call) {
		return
	}
	key := exKey(call.FrameworkID.Value, call.ExecutorID.Value)
	switch call.Type {
	case exec1.Call_SUBSCRIBE:
		a.executorSubscribe(w, r, req, key, &call)
		return
	case exec1.Call_UPDATE:
		if call.Update == nil || call.Update.Status.TaskID.Value == "" {
			api.WriteError(w, api.Errorf(http.StatusBadRequest, "UPDATE call without update.status.task_id"))
			return
		}
		if len(call.Update.Status.UUID) == 0 {
			api.WriteError(w, api.Errorf(http.StatusBadRequest, "UPDATE call without update.status.uuid"))
			return
		}
		a.mu.Lock()
		ex := a.executors[key]
		if ex == nil {
			a.mu.Unlock()
			api.WriteError(w, api.Errorf(http.StatusBadRequest, "executor %s of framework %s is not running on this agent", call.ExecutorID.Value, call.FrameworkID.Value))
			return
		}
		t := ex.tasks[call.Update.Status.TaskID.Value]
		if t == nil {
			a.mu.Unlock()
			api.WriteError(w, api.Errorf(http.StatusBadRequest, "task %s is not known to executor %s", call.Update.Status.TaskID.Value, ex.id))
			return
		}
		st := call.Update.Status
		st.Source = mesos.SOURCE_EXECUTOR.Enum()
		st.ExecutorID = &mesos.ExecutorID{Value: ex.id}
		if st.Timestamp == nil {
			now := float64(a.clock().Now().UnixNano()) / 1e9
			st.Timestamp = &now
		}
		dup := false
		for _, p := range t.pending {
			if string(p.UUID) == string(st.UUID) {
				dup = true
			}
		}
		if !dup && !a.droppedAfterTerminalLocked(ex, t, &st) {
			a.enqueueUpdateLocked(ex, t, a.checkLimitOnEndLocked(ex, &st))
		}
		a.mu.Unlock()
	case exec1.Call_MESSAGE:
		if call.Message == nil {
			api.WriteError(w, api.Errorf(http.StatusBadRequest, "MESSAGE call without message"))
			return
		}
		a.send(&api.AgentCall{Type: api.AgentCallType_EXECUTOR_MESSAGE, FrameworkId: call.FrameworkID.Value, ExecutorId: call.ExecutorID.Value, Data: call.Message.Data})
	default:
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "unknown executor call type %d", call.Type))
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (a *Agent) executorSubscribe(w http.ResponseWriter, r *http.Request, req *api.Request, key string, call *exec1.Call) {
	a.mu.Lock()
	ex := a.executors[key]
	if ex == nil || ex.exited {
		a.mu.Unlock()
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "executor %s of framework %s is not running on this agent", call.ExecutorID.Value, call.FrameworkID.Value))
		return
	}
	if ex.stream != nil {
		ex.stream.Close("executor re-subscribed")
	}
	stream := api.NewStream(req.Out, 65536)
	ex.stream = stream
	ex.subscribed = true
	port := int32(0)
	if _, p, err := splitHostPort(a.addr); err == nil {
		port = int32(p)
	}
	ci := mesos.ContainerID{Value: ex.containerID}
	stream.Send(&exec1.Event{Type: exec1.Event_SUBSCRIBED, Subscribed: &exec1.Event_Subscribed{
		ExecutorInfo: ex.info, FrameworkInfo: ex.fwInfo, ContainerID: &ci,
		AgentInfo: mesos.AgentInfo{Hostname: a.cfg.Hostname, Port: &port, ID: &mesos.AgentID{Value: a.id}}}})
	known := map[string]bool{}
	if s := call.Subscribe; s != nil {
		for _, ti := range s.UnacknowledgedTasks {
			known[ti.TaskID.Value] = true
			if t := ex.tasks[ti.TaskID.Value]; t != nil {
				t.launched = true
			}
		}
		for _, u := range s.UnacknowledgedUpdates {
			t := ex.tasks[u.Status.TaskID.Value]
			if t == nil || len(u.Status.UUID) == 0 {
				continue
			}
			seen := t.latest != nil && string(t.latest.UUID) == string(u.Status.UUID)
			for _, p := range t.pending {
				seen = seen || string(p.UUID) == string(u.Status.UUID)
			}
			if !seen && !a.droppedAfterTerminalLocked(ex, t, &u.Status) {
				st := u.Status
				st.Source = mesos.SOURCE_EXECUTOR.Enum()
				a.enqueueUpdateLocked(ex, t, &st)
			}
		}
	}
	ex.queued = append(ex.queued, a.lostLaunchesLocked(ex, known)...)
	for _, ev := range ex.queued {
		if ev.Launch != nil && known[ev.Launch.Task.TaskID.Value] {
			continue
		}
		stream.Send(ev)
		if ev.Launch != nil {
			if t := ex.tasks[ev.Launch.Task.TaskID.Value]; t != nil {
				t.launched = true
			}
		}
		if ev.LaunchGroup != nil {
			for _, ti := range ev.LaunchGroup.TaskGroup.Tasks {
				if t := ex.tasks[ti.TaskID.Value]; t != nil {
					t.launched = true
				}
			}
		}
	}
	ex.queued = nil
	if ex.killing {
		stream.Send(&exec1.Event{Type: exec1.Event_SHUTDOWN})
	}
	a.mu.Unlock()
	a.log.Debug().Str("executor_id", ex.id).Str("framework_id", ex.fw).Msg("executor subscribed")
	stream.Serve(w, r, req.RecordIO, nil)
	a.mu.Lock()
	if ex.stream == stream {
		ex.stream = nil
	}
	a.mu.Unlock()
}

func splitHostPort(addr string) (string, int, error) {
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		return "", 0, fmt.Errorf("no port in %q", addr)
	}
	n, err := strconv.Atoi(addr[i+1:])
	return addr[:i], n, err
}
