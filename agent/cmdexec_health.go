package agent

import (
	"context"
	"fmt"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/healthcheck"
)

// healthKillGrace is how long a task failing its health checks gets
// between SIGTERM and SIGKILL when its KillPolicy names no grace period
// (Mesos's default kill policy: 3 s).
const healthKillGrace = 3 * time.Second

// startHealth runs t's health checks until t ends; env is the task's
// environment, which a COMMAND check runs in (in the sandbox).
func (ce *commandExecutor) startHealth(t *cmdTask, env []string) {
	hc := t.info.HealthCheck
	ctx, cancel := context.WithCancel(context.Background())
	ce.mu.Lock()
	t.stopHealth = cancel
	ce.mu.Unlock()
	chk := newHealthChecker(hc, proberInNetNS(newProber(hc, ce.cfg.Sandbox, env, t.spec), specNetNS(t.spec)), ce.clock, func(v healthVerdict) { ce.healthChanged(t, v) })
	ce.log.Info().Str("task_id", t.info.TaskID.Value).Str("check", healthcheck.Describe(hc)).Msg("health checks start")
	go chk.run(ctx)
}

// healthChanged reports a verdict as TASK_RUNNING with healthy set (as
// Mesos's executors do, reason REASON_TASK_HEALTH_CHECK_STATUS_UPDATED)
// and kills the task by its kill policy when the verdict says so. A task
// already being killed or ended reports nothing more.
func (ce *commandExecutor) healthChanged(t *cmdTask, v healthVerdict) {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	ce.mu.Lock()
	gone := t.killed || t.terminal
	ce.mu.Unlock()
	if gone {
		return
	}
	hc := t.info.HealthCheck
	policy := newHealthPolicy(hc)
	msg := healthcheck.Describe(hc) + " passed"
	if !v.healthy {
		msg = fmt.Sprintf("%s failed %d time(s) in a row (the task is killed at %d): %v", healthcheck.Describe(hc), v.failures, policy.maxFailures, v.err)
	}
	st := ce.status(t.info, mesos.TASK_RUNNING, msg, mesos.REASON_TASK_HEALTH_CHECK_STATUS_UPDATED.Enum())
	st.Healthy = &v.healthy
	ce.send(t.info, st)
	ce.log.Info().Str("task_id", t.info.TaskID.Value).Bool("healthy", v.healthy).Str("message", msg).Msg("health changed")
	if !v.kill {
		return
	}
	ce.mu.Lock()
	t.unhealthy = fmt.Sprintf("Task killed: %s failed %d consecutive times; last failure: %v", healthcheck.Describe(hc), v.failures, v.err)
	ce.mu.Unlock()
	grace := healthKillGrace
	if kp := t.info.KillPolicy; kp != nil && kp.GracePeriod != nil {
		grace = time.Duration(kp.GracePeriod.Nanoseconds)
	}
	ce.killHeld(t, grace)
}
