package agent

import (
	"fmt"
	"os"
	"path/filepath"
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
	gpus       []int // GPU indices under gpu/nvidia (gpu_isolator.go)
	// forgotten: the agent dropped it with its tasks (the master removed
	// the agent, removed.go); its exit is reported to no one.
	forgotten bool
	// container is the ContainerInfo its container is made from, and
	// containerCommand the command run in it (container_spec.go).
	container        *mesos.ContainerInfo
	containerCommand *mesos.CommandInfo
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

// handleEvent dispatches one event from the master to the executor,
// framework or task it names.
func (a *Agent) handleEvent(ev *api.AgentEvent) {
	switch ev.Type {
	case api.AgentEventType_PING:
		a.answerPing()
	case api.AgentEventType_CHECKPOINT_RESOURCES:
		a.checkpointResources(ev)
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

// runOrder is a RUN event decoded: the framework, the tasks, the executor
// that runs them, and the event that launches them on it.
type runOrder struct {
	fwInfo      mesos.FrameworkInfo
	tasks       []mesos.TaskInfo
	exInfo      mesos.ExecutorInfo
	command     bool // the built-in executor runs the tasks
	commandTask bool // one command task, its executor made up here
	launch      *exec1.Event
}

// decodeRun reads a RUN event; one that does not decode is logged and
// dropped (false).
func (a *Agent) decodeRun(ev *api.AgentEvent) (*runOrder, bool) {
	o := &runOrder{}
	if err := o.fwInfo.Unmarshal(ev.FrameworkInfo); err != nil {
		a.log.Error().Err(err).Msg("RUN with bad framework info")
		return nil, false
	}
	o.fwInfo.ID = &mesos.FrameworkID{Value: ev.FrameworkId}
	switch {
	case len(ev.TaskGroup) > 0:
		var tg mesos.TaskGroupInfo
		if err := tg.Unmarshal(ev.TaskGroup); err != nil || o.exInfo.Unmarshal(ev.ExecutorInfo) != nil {
			a.log.Error().Msg("RUN with bad task group or executor info")
			return nil, false
		}
		o.tasks = tg.Tasks
		// The default executor is the built-in one.
		o.command = o.exInfo.GetType() == mesos.ExecutorInfo_DEFAULT || o.exInfo.Command == nil
		o.launch = &exec1.Event{Type: exec1.Event_LAUNCH_GROUP, LaunchGroup: &exec1.Event_LaunchGroup{TaskGroup: tg}}
	default:
		var ti mesos.TaskInfo
		if err := ti.Unmarshal(ev.Task); err != nil {
			a.log.Error().Err(err).Msg("RUN with bad task info")
			return nil, false
		}
		o.tasks = []mesos.TaskInfo{ti}
		if ti.Executor != nil {
			o.exInfo = *ti.Executor
		} else {
			o.command, o.commandTask = true, true
			o.exInfo = mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: ti.TaskID.Value},
				Name: strPtr("Command Executor (Task: " + ti.TaskID.Value + ")"), Source: strPtr(ti.TaskID.Value)}
		}
		o.launch = &exec1.Event{Type: exec1.Event_LAUNCH, Launch: &exec1.Event_Launch{Task: ti}}
	}
	o.exInfo.FrameworkID = &mesos.FrameworkID{Value: ev.FrameworkId}
	return o, true
}

// run starts a RUN event's tasks: on their executor if it runs (or is
// starting), else on a new run of it, launched here.
func (a *Agent) run(ev *api.AgentEvent) {
	o, ok := a.decodeRun(ev)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.frameworks[ev.FrameworkId] = &o.fwInfo
	key := exKey(ev.FrameworkId, o.exInfo.ExecutorID.Value)
	if a.refuseUnsupportedLocked(key, o) { // containers.go
		return
	}
	ex := a.executors[key]
	if ex != nil && (ex.exited || ex.killing) {
		// A new run of an executor id whose last run ended.
		for id, t := range ex.tasks {
			if len(t.pending) == 0 {
				delete(ex.tasks, id)
			}
		}
		if len(ex.tasks) > 0 {
			for _, ti := range o.tasks {
				a.newTaskFailed(ex, ti, mesos.TASK_FAILED, mesos.REASON_EXECUTOR_TERMINATED, "executor "+o.exInfo.ExecutorID.Value+" is still shutting down")
			}
			return
		}
		ex = nil
	}
	grown := ex != nil
	if ex == nil {
		ex = a.newExecutorLocked(key, ev.FrameworkId, o)
	}
	if grown && !ex.launching && !a.linkTaskVolumesLocked(ex, o) {
		return
	}
	for _, ti := range o.tasks {
		ex.tasks[ti.TaskID.Value] = &agentTask{info: ti, state: mesos.TASK_STAGING}
	}
	a.setLimitsLocked(ex, grown)
	if a.holdGroupLocked(ex, o) { // container_group.go: images first
		a.checkpointLocked(ex)
		return
	}
	if ex.stream != nil {
		ex.stream.Send(o.launch)
		for _, ti := range o.tasks {
			ex.tasks[ti.TaskID.Value].launched = true
		}
	} else {
		ex.queued = append(ex.queued, o.launch)
	}
	a.checkpointLocked(ex)
}

// newExecutorLocked records a new run of o's executor under key, in a
// fresh container and sandbox, and launches it with the URIs it (or, for
// the built-in executor, each of its tasks) fetches. Caller holds a.mu.
func (a *Agent) newExecutorLocked(key, fw string, o *runOrder) *executor {
	ex := &executor{fw: fw, id: o.exInfo.ExecutorID.Value, info: o.exInfo, fwInfo: o.fwInfo, command: o.command, commandTask: o.commandTask,
		checkpoint: o.fwInfo.GetCheckpoint(), containerID: string(hexID()), tasks: map[string]*agentTask{}, launching: true}
	ex.container, ex.containerCommand = containerOf(o)
	ex.sandbox = filepath.Join(a.cfg.WorkDir, "slaves", orDefault(a.id, "unregistered"), "frameworks", ex.fw, "executors", ex.id, "runs", ex.containerID)
	a.executors[key] = ex
	var uris []mesos.CommandInfo_URI
	if o.command {
		for _, ti := range o.tasks {
			if ti.Command != nil {
				uris = append(uris, ti.Command.URIs...)
			}
		}
	} else if o.exInfo.Command != nil {
		uris = o.exInfo.Command.URIs
	}
	go a.launchExecutor(ex, uris)
	return ex
}

func strPtr(s string) *string { return &s }

func hexID() string {
	b := newUUID()
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
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

// killTask kills a task: one its executor has not been handed yet ends
// here, KILLED; the others are the executor's to kill, now or when it
// subscribes again.
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
