package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	exec1 "github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpexec"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/agent/nslaunch"
	"github.com/allot-sched/allot/api/healthcheck"
	"github.com/allot-sched/allot/internal/tlsconf"
)

// RunCommandExecutor is the built-in executor that `allot executor` runs:
// it runs command tasks (shell and argv forms) and task groups as child
// processes, reports TASK_RUNNING and a terminal state with the exit status
// in the message ("Command exited with status N"), handles KILL with SIGTERM
// then SIGKILL after the grace period, and exits once every terminal update
// is acknowledged. It speaks the executor API through mesos-go's client,
// exactly as a custom executor would, and re-subscribes after an agent
// restart when the framework checkpoints.
func RunCommandExecutor(log zerolog.Logger) error {
	return runCommandExecutor(log, wallClock{}, execHooks{})
}

// execHooks let a test order its fake agent's moves after the executor's
// steps; nil fields are not called.
type execHooks struct {
	// handled is called once each event from the agent has been handled.
	handled func(exec1.Event_Type)
	// ended is called once a task's terminal update has been answered and
	// the task counts as terminal.
	ended func(taskID string)
}

func runCommandExecutor(log zerolog.Logger, clock Clock, hooks execHooks) error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	cli := httpcli.New(append([]httpcli.Opt{
		// Plain HTTP even when the agent speaks TLS: it serves its own
		// host's executors in plaintext (agent/tls.go).
		httpcli.Endpoint(tlsconf.URL(false, cfg.AgentEndpoint, executorPath)),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(httpcli.Timeout(10 * time.Second))),
	}, ExecutorTokenOpts()...)...)
	opts := exec1.CallOptions{calls.Framework(cfg.FrameworkID), calls.Executor(cfg.ExecutorID)}
	ce := &commandExecutor{
		log:        log,
		cfg:        cfg,
		clock:      clock,
		hooks:      hooks,
		sender:     calls.SenderWith(httpexec.NewSender(cli.Send), opts...),
		tasks:      map[string]*cmdTask{},
		unacked:    map[string]exec1.Call_Update{},
		unackTasks: map[string]mesos.TaskInfo{},
	}
	ce.quitCtx, ce.quit = context.WithCancel(context.Background())
	subscriber := calls.SenderWith(httpexec.NewSender(cli.Send, httpcli.Close(true)), opts...)
	disconnected := clock.Now()
	backoff := 100 * time.Millisecond
	for {
		ce.mu.Lock()
		sub := calls.Subscribe(ce.unackedTaskList(), ce.unackedUpdateList())
		ce.mu.Unlock()
		ctx, cancel := context.WithCancel(context.Background())
		resp, err := subscriber.Send(ctx, calls.NonStreaming(sub))
		if err == nil {
			backoff = 100 * time.Millisecond
			stopOnQuit := context.AfterFunc(ce.quitCtx, cancel)
			err = ce.eventLoop(resp)
			stopOnQuit()
			resp.Close()
			disconnected = clock.Now()
		}
		cancel()
		if ce.done() {
			return nil
		}
		log.Warn().Err(err).Msg("disconnected from agent")
		if !cfg.Checkpoint || clock.Now().Sub(disconnected) > cfg.RecoveryTimeout {
			ce.killAll(0)
			return fmt.Errorf("lost the agent: %v", err)
		}
		<-clock.After(backoff)
		if backoff < cfg.SubscriptionBackoffMax {
			backoff *= 2
		}
	}
}

type commandExecutor struct {
	log    zerolog.Logger
	cfg    config.Config
	sender calls.Sender
	clock  Clock
	hooks  execHooks

	mu         sync.Mutex
	tasks      map[string]*cmdTask
	unacked    map[string]exec1.Call_Update // by uuid
	unackTasks map[string]mesos.TaskInfo
	shutdown   bool
	// killingState: the framework declared TASK_KILLING_STATE, so a kill
	// is reported TASK_KILLING before the task ends.
	killingState bool
	// quitCtx ends when the executor is done (quit). The last terminal
	// update can be acknowledged on the event stream before the executor
	// has read its own UPDATE call's answer: then it is done only after the
	// event was handled, while the event loop waits for another event that
	// may never come. Ending quitCtx cancels the subscription, which wakes
	// the loop wherever it waits.
	quitCtx context.Context
	quit    context.CancelFunc
}

type cmdTask struct {
	info     mesos.TaskInfo
	cmd      *exec.Cmd
	spec     *nslaunch.Spec // its container's, when it runs in one
	terminal bool
	// ended is closed when terminal is set: a kill's grace ends early.
	ended  chan struct{}
	killed bool
	// unhealthy is why the health checker killed the task ("" if it did
	// not); stopHealth ends its checker.
	unhealthy  string
	stopHealth context.CancelFunc
	// sendMu orders a task's health updates before its terminal one: a
	// check's TASK_RUNNING never follows the task's end.
	sendMu sync.Mutex
}

func (ce *commandExecutor) done() bool { return ce.quitCtx.Err() != nil }

func (ce *commandExecutor) unackedTaskList() (out []mesos.TaskInfo) {
	for _, t := range ce.unackTasks {
		out = append(out, t)
	}
	return
}

func (ce *commandExecutor) unackedUpdateList() (out []exec1.Call_Update) {
	for _, u := range ce.unacked {
		out = append(out, u)
	}
	return
}

func (ce *commandExecutor) eventLoop(resp mesos.Response) error {
	for !ce.done() {
		var e exec1.Event
		if err := resp.Decode(&e); err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		switch e.Type {
		case exec1.Event_SUBSCRIBED:
			ce.mu.Lock()
			ce.killingState = hasCapability(&e.Subscribed.FrameworkInfo, mesos.FrameworkInfo_Capability_TASK_KILLING_STATE)
			ce.mu.Unlock()
		case exec1.Event_LAUNCH:
			ce.launch(e.Launch.Task)
		case exec1.Event_LAUNCH_GROUP:
			for _, t := range e.LaunchGroup.TaskGroup.Tasks {
				ce.launch(t)
			}
		case exec1.Event_KILL:
			grace := ce.cfg.ExecutorShutdownGracePeriod
			if kp := e.Kill.KillPolicy; kp != nil && kp.GracePeriod != nil {
				grace = time.Duration(kp.GracePeriod.Nanoseconds)
			}
			ce.kill(e.Kill.TaskID.Value, grace)
		case exec1.Event_ACKNOWLEDGED:
			ce.mu.Lock()
			delete(ce.unacked, string(e.Acknowledged.UUID))
			delete(ce.unackTasks, e.Acknowledged.TaskID.Value)
			ce.maybeQuitLocked()
			ce.mu.Unlock()
		case exec1.Event_SHUTDOWN:
			ce.mu.Lock()
			ce.shutdown = true
			ce.mu.Unlock()
			ce.killAll(ce.cfg.ExecutorShutdownGracePeriod / 2)
		case exec1.Event_MESSAGE, exec1.Event_HEARTBEAT:
		case exec1.Event_ERROR:
			ce.log.Error().Str("message", e.Error.Message).Msg("agent sent ERROR")
		}
		if ce.hooks.handled != nil {
			ce.hooks.handled(e.Type)
		}
	}
	return nil
}

// maybeQuitLocked ends the executor once every task is terminal and every
// update acknowledged (or on SHUTDOWN once tasks are down).
func (ce *commandExecutor) maybeQuitLocked() {
	if len(ce.tasks) == 0 && !ce.shutdown {
		return
	}
	for _, t := range ce.tasks {
		if !t.terminal {
			return
		}
	}
	if len(ce.unacked) == 0 || ce.shutdown {
		ce.quit()
	}
}

func (ce *commandExecutor) update(ti mesos.TaskInfo, state mesos.TaskState, msg string, reason *mesos.TaskStatus_Reason) {
	ce.send(ti, ce.status(ti, state, msg, reason))
}

func (ce *commandExecutor) status(ti mesos.TaskInfo, state mesos.TaskState, msg string, reason *mesos.TaskStatus_Reason) mesos.TaskStatus {
	now := float64(ce.clock.Now().UnixNano()) / 1e9
	st := mesos.TaskStatus{TaskID: ti.TaskID, State: state.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(),
		ExecutorID: &mesos.ExecutorID{Value: ce.cfg.ExecutorID}, Timestamp: &now, UUID: newUUID(), Reason: reason}
	if msg != "" {
		st.Message = &msg
	}
	return st
}

func (ce *commandExecutor) send(ti mesos.TaskInfo, st mesos.TaskStatus) {
	upd := calls.Update(st)
	ce.mu.Lock()
	ce.unacked[string(st.UUID)] = *upd.Update
	ce.mu.Unlock()
	resp, err := ce.sender.Send(context.Background(), calls.NonStreaming(upd))
	if resp != nil {
		resp.Close()
	}
	if err != nil {
		// Kept in unacked: the next SUBSCRIBE carries it.
		ce.log.Warn().Err(err).Str("task_id", ti.TaskID.Value).Msg("sending update failed")
	}
}

func (ce *commandExecutor) launch(ti mesos.TaskInfo) {
	ce.mu.Lock()
	if _, dup := ce.tasks[ti.TaskID.Value]; dup {
		ce.mu.Unlock()
		return
	}
	t := &cmdTask{info: ti, ended: make(chan struct{})}
	ce.tasks[ti.TaskID.Value] = t
	ce.unackTasks[ti.TaskID.Value] = ti
	ce.mu.Unlock()
	ci := ti.Command
	// In an image, an empty command runs the image's entrypoint or cmd
	// (the agent's Spec has it).
	if ci == nil || (ci.GetValue() == "" && len(ci.Arguments) == 0 && !taskHasSpec(ti.TaskID.Value)) {
		ce.finish(t, mesos.TASK_FAILED, "task has no command", mesos.REASON_COMMAND_EXECUTOR_FAILED.Enum())
		return
	}
	// The master refuses these; an agent of another make might not.
	if err := healthcheck.Validate(ti.HealthCheck); err != nil {
		ce.finish(t, mesos.TASK_ERROR, "task uses an invalid health check: "+err.Error(), mesos.REASON_TASK_INVALID.Enum())
		return
	}
	cmd, pipes, spec, err := ce.taskCommand(ti) // cmdexec_container.go
	t.spec = spec
	if err != nil {
		ce.finish(t, mesos.TASK_FAILED, "failed to prepare the command: "+err.Error(), mesos.REASON_COMMAND_EXECUTOR_FAILED.Enum())
		return
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Dir = ce.cfg.Sandbox
	// Its own group, so a kill reaches the task's children too; and killed
	// with us if we are killed (Pdeathsig follows the forking thread, which
	// the Go runtime keeps while we run).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	if lerr := pipes.Started(err); err == nil && lerr != nil {
		cmd.Wait() // the launcher exits once it has said why
		ce.finish(t, mesos.TASK_FAILED, "Failed to launch the task's container: "+lerr.Error(), mesos.REASON_CONTAINER_LAUNCH_FAILED.Enum())
		return
	}
	if err != nil {
		ce.finish(t, mesos.TASK_FAILED, startFailure(cmd.Dir, err), mesos.REASON_COMMAND_EXECUTOR_FAILED.Enum())
		return
	}
	ce.mu.Lock()
	t.cmd = cmd
	ce.mu.Unlock()
	ce.update(ti, mesos.TASK_RUNNING, "", nil)
	if ti.HealthCheck != nil {
		ce.startHealth(t, cmd.Env)
	}
	go ce.await(t, cmd)
}

// await waits for t's command to end and reports how: killed by its health
// checks, killed, finished or failed.
func (ce *commandExecutor) await(t *cmdTask, cmd *exec.Cmd) {
	err := cmd.Wait()
	ce.mu.Lock()
	if t.stopHealth != nil {
		t.stopHealth()
	}
	ce.mu.Unlock()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	ce.mu.Lock()
	killed, unhealthy := t.killed, t.unhealthy
	ce.mu.Unlock()
	if killed || unhealthy != "" {
		// The command is gone; what it started in its group and that
		// ignored SIGTERM goes too, rather than outliving its task (the
		// group's id stays taken while any member lives, so this cannot
		// reach a stranger).
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	switch {
	case unhealthy != "":
		st := ce.status(t.info, mesos.TASK_KILLED, fmt.Sprintf("%s (command terminated with status %d)", unhealthy, code),
			mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED.Enum())
		st.Healthy = new(bool)
		ce.finishStatus(t, st)
	case killed:
		ce.finish(t, mesos.TASK_KILLED, fmt.Sprintf("Command terminated with status %d", code), nil)
	case code == 0:
		ce.finish(t, mesos.TASK_FINISHED, "Command exited with status 0", nil)
	default:
		ce.finish(t, mesos.TASK_FAILED, fmt.Sprintf("Command exited with status %d", code), mesos.REASON_COMMAND_EXECUTOR_FAILED.Enum())
	}
}

func (ce *commandExecutor) finish(t *cmdTask, state mesos.TaskState, msg string, reason *mesos.TaskStatus_Reason) {
	ce.finishStatus(t, ce.status(t.info, state, msg, reason))
}

func (ce *commandExecutor) finishStatus(t *cmdTask, st mesos.TaskStatus) {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	ce.send(t.info, st)
	ce.mu.Lock()
	if !t.terminal {
		t.terminal = true
		close(t.ended)
	}
	ce.maybeQuitLocked()
	ce.mu.Unlock()
	if ce.hooks.ended != nil {
		ce.hooks.ended(t.info.TaskID.Value)
	}
}

// kill kills task id by its kill policy (grace before SIGKILL).
func (ce *commandExecutor) kill(id string, grace time.Duration) {
	ce.mu.Lock()
	t := ce.tasks[id]
	ce.mu.Unlock()
	if t == nil {
		return
	}
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	ce.killHeld(t, grace)
}

// killHeld is kill with t.sendMu held: SIGTERM to the task's process
// group, SIGKILL after grace unless it ended. The first kill of a running
// task first reports TASK_KILLING to a framework that declared
// TASK_KILLING_STATE, as Mesos's command executor does, so the framework
// learns the kill began (a grace period can be long).
func (ce *commandExecutor) killHeld(t *cmdTask, grace time.Duration) {
	ce.mu.Lock()
	if t.terminal {
		ce.mu.Unlock()
		return
	}
	// A later kill (SHUTDOWN after KILL) signals again, with its own
	// grace, but is not reported again.
	first := !t.killed
	t.killed = true
	cmd, killing := t.cmd, ce.killingState && first
	ce.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	if killing {
		ce.update(t.info, mesos.TASK_KILLING, "", nil)
	}
	pid := cmd.Process.Pid
	syscall.Kill(-pid, syscall.SIGTERM)
	go func() {
		select {
		case <-t.ended:
		case <-ce.clock.After(grace):
			syscall.Kill(-pid, syscall.SIGKILL)
		}
	}()
}

func (ce *commandExecutor) killAll(grace time.Duration) {
	ce.mu.Lock()
	var ids []string
	for id, t := range ce.tasks {
		if !t.terminal {
			ids = append(ids, id)
		}
	}
	ce.maybeQuitLocked()
	ce.mu.Unlock()
	for _, id := range ids {
		ce.kill(id, grace)
	}
}

// hasCapability reports whether the framework declared capability c.
func hasCapability(info *mesos.FrameworkInfo, c mesos.FrameworkInfo_Capability_Type) bool {
	for _, have := range info.Capabilities {
		if have.GetType() == c {
			return true
		}
	}
	return false
}
