package agent

import (
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/taskstate"
)

// This file joins the isolator to the executor life cycle: limits are
// checked on a timer and whenever an executor reports a task ended (an OOM
// kill of a task's process is usually seen first that way), a broken limit
// kills the whole container, and containers are removed with their
// executors, or at start when a previous run left them behind.

// limitInterval is how often limits are checked. cgroups only need it to
// notice an OOM kill the kernel already did; posix must catch the excess
// itself, so it samples too.
func (a *Agent) limitInterval() time.Duration {
	if _, ok := a.iso.(*cgroupsIsolator); ok {
		return 250 * time.Millisecond
	}
	return 500 * time.Millisecond
}

func (a *Agent) limitLoop() {
	t := time.NewTicker(a.limitInterval())
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		type check struct {
			ex  *executor
			cid string
			pid int
			l   limits
		}
		var list []check
		a.mu.Lock()
		for _, ex := range a.executors {
			if ex.pid > 0 && !ex.exited && ex.limitation == nil {
				list = append(list, check{ex, ex.containerID, ex.pid, ex.limits})
			}
		}
		a.mu.Unlock()
		for _, c := range list {
			if lim := a.iso.limited(c.cid, c.pid, c.l); lim != nil {
				a.mu.Lock()
				a.limitedLocked(c.ex, lim)
				a.mu.Unlock()
			}
		}
	}
}

// limitedLocked records the limit ex broke and kills its container; its
// tasks then end TASK_FAILED with the limitation's reason (executorExited).
func (a *Agent) limitedLocked(ex *executor, lim *limitation) {
	if ex.limitation != nil || ex.exited {
		return
	}
	ex.limitation = lim
	a.log.Warn().Str("executor_id", ex.id).Str("framework_id", ex.fw).Str("container_id", ex.containerID).
		Str("reason", lim.reason.String()).Msg(lim.message)
	pid, cid := ex.pid, ex.containerID
	go func() {
		a.iso.kill(cid, pid, syscall.SIGKILL)
		a.destroyContainer(cid, pid)
	}()
}

// checkLimitOnEndLocked is called with a terminal update from an executor:
// if its container broke a limit, the update is replaced by the agent's
// (SOURCE_AGENT, the limitation's reason), keeping its uuid so that a
// resend from the executor is still recognised as the same update.
func (a *Agent) checkLimitOnEndLocked(ex *executor, st *mesos.TaskStatus) *mesos.TaskStatus {
	if !taskstate.IsTerminal(st.GetState()) || st.GetState() == mesos.TASK_FINISHED {
		return st
	}
	if ex.limitation == nil {
		if lim := a.iso.limited(ex.containerID, ex.pid, ex.limits); lim != nil {
			a.limitedLocked(ex, lim)
		}
	}
	if ex.limitation == nil {
		return st
	}
	t := ex.tasks[st.TaskID.Value]
	out := a.agentStatus(ex, t, mesos.TASK_FAILED, ex.limitation.reason, ex.limitation.message)
	out.UUID = st.UUID
	return out
}

func (a *Agent) destroyContainer(cid string, pid int) {
	defer a.releaseGPUs(cid) // gpu_cgroup.go
	if err := a.iso.destroy(cid, pid); err != nil {
		a.log.Warn().Err(err).Str("container_id", cid).Msg("container not removed")
	}
	a.releaseContainer(cid) // container_spec.go
}

// recoverContainers runs after recover: recovered executors keep their
// containers (and limits); any other container under this work dir's parent
// belongs to a run that is over and is killed and removed.
func (a *Agent) recoverContainers() {
	a.recoverNetworks() // container_network.go
	a.mu.Lock()
	live := map[string]bool{}
	for _, ex := range a.executors {
		ex.limits = executorLimits(ex)
		if ex.pid > 0 {
			live[ex.containerID] = true
		}
	}
	a.recoverGPUsLocked()
	a.mu.Unlock()
	a.removeStaleGPUDevices(live) // gpu_cgroup.go
	a.recoverContainerDirs(live)  // container_spec.go
	cg, ok := a.iso.(*cgroupsIsolator)
	if !ok {
		return
	}
	for _, id := range cg.containers() {
		if live[id] {
			cg.reclaim(id) // cgroup_join.go
		} else {
			a.log.Info().Str("container_id", id).Msg("removing a stale container of an earlier run")
			a.destroyContainer(id, 0)
		}
	}
	cg.removeParent() // kept while recovered containers live in it
}

// setLimitsLocked recomputes ex's limits after tasks joined it and, for a
// running executor, has its container follow. The memory limit never
// shrinks while the container lives (as Mesos: lowering it could OOM-kill a
// task that is only freeing memory); cpu shares follow both ways. One
// goroutine per executor applies the latest limits, so that a burst of
// launches costs a few writes, in order, and none under a.mu.
func (a *Agent) setLimitsLocked(ex *executor, running bool) {
	l := executorLimits(ex)
	if l.memBytes < ex.limits.memBytes {
		l.memBytes = ex.limits.memBytes
	}
	ex.limits = l
	if !running || ex.resizing {
		return
	}
	ex.resizing = true
	go func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		for ex.applied != ex.limits && !ex.exited && !ex.launching {
			l, cid := ex.limits, ex.containerID
			a.mu.Unlock()
			err := a.iso.prepare(cid, l)
			a.mu.Lock()
			ex.applied = l
			if err != nil {
				a.log.Warn().Err(err).Str("container_id", cid).Msg("updating container limits")
			}
		}
		ex.resizing = false
	}()
}
