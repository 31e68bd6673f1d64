package master

// ACCEPT's plan: the offers and every task of the call are validated against
// the live state before anything changes, so a rejected ACCEPT leaves its
// offers outstanding; launchLocked (offers.go) carries the plan out.

import (
	"fmt"
	"net/http"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/resources"
)

// planAcceptLocked validates an ACCEPT completely before anything changes,
// so a rejected call leaves the offers outstanding and the framework can
// retry; launchLocked (offers.go) carries out the plan. Caller holds m.mu.
func (m *Master) planAcceptLocked(fw *framework, acc *scheduler.Call_Accept) (*acceptPlan, error) {
	p, err := m.acceptedOffersLocked(fw, acc)
	if err != nil {
		return nil, err
	}
	c := &taskChecker{fw: fw, a: p.agent, remaining: p.remaining, newIDs: map[string]bool{}, newExecutors: map[string]bool{}, role: p.role}
	if p.launches, err = c.operations(acc.Operations); err != nil {
		return nil, err
	}
	p.remaining, p.refused = c.remaining, c.refused
	p.filter = filterOf(acc.Filters)
	return p, nil
}

// acceptedOffersLocked checks that the accepted offers are the framework's,
// distinct, on one connected agent, and sums them. Caller holds m.mu.
func (m *Master) acceptedOffersLocked(fw *framework, acc *scheduler.Call_Accept) (*acceptPlan, error) {
	p := &acceptPlan{}
	var agentID string
	seen := map[string]bool{}
	for _, oid := range acc.OfferIDs {
		o := m.frameworkOfferLocked(fw, oid.Value)
		if o == nil {
			return nil, api.Errorf(http.StatusBadRequest, "ACCEPT: offer %q does not exist or was rescinded", oid.Value)
		}
		if seen[oid.Value] {
			return nil, api.Errorf(http.StatusBadRequest, "ACCEPT: offer %q is listed twice", oid.Value)
		}
		seen[oid.Value] = true
		if agentID != "" && o.agent != agentID {
			return nil, api.Errorf(http.StatusBadRequest, "ACCEPT: offers %v are on different agents", acc.OfferIDs)
		}
		agentID = o.agent
		if err := p.sameRole(fw, o); err != nil {
			return nil, err
		}
		p.offers = append(p.offers, o)
		p.remaining = p.remaining.Add(o.res)
	}
	p.agent = m.agents[agentID]
	if p.agent == nil || p.agent.stream == nil {
		return nil, api.Errorf(http.StatusBadRequest, "ACCEPT: agent %s of the offer is gone", agentID)
	}
	return p, nil
}

// taskChecker validates the tasks of one ACCEPT against the offered
// resources, taking each task's (and each new executor's) share from
// remaining. It reads live state: use it under m.mu.
type taskChecker struct {
	fw           *framework
	a            *agentState
	remaining    resources.Resources
	newIDs       map[string]bool
	newExecutors map[string]bool
	refused      []refusedTask // answered TASK_ERROR instead of launched
	role         string        // the offers' allocation role: what a MULTI_ROLE task's resources must carry
}

// operations validates LAUNCH and LAUNCH_GROUP operations into launches.
// Under m.mu.
func (c *taskChecker) operations(ops []mesos.Offer_Operation) ([]plannedLaunch, error) {
	var plans []plannedLaunch
	for i := range ops {
		op := &ops[i]
		switch op.GetType() {
		case mesos.Offer_Operation_LAUNCH:
			if op.Launch == nil {
				return nil, api.Errorf(http.StatusBadRequest, "ACCEPT: LAUNCH operation without launch")
			}
			refused := healthRefusals(op.Launch.TaskInfos, false)
			c.refused = append(c.refused, refused...)
			tasks := withoutRefused(op.Launch.TaskInfos, refused)
			for j := range tasks {
				if err := c.check(&tasks[j], nil); err != nil {
					return nil, err
				}
			}
			if len(tasks) > 0 {
				plans = append(plans, plannedLaunch{tasks: tasks})
			}
		case mesos.Offer_Operation_LAUNCH_GROUP:
			lg := op.LaunchGroup
			if lg == nil || len(lg.TaskGroup.Tasks) == 0 {
				return nil, api.Errorf(http.StatusBadRequest, "ACCEPT: LAUNCH_GROUP operation without tasks")
			}
			if refused := healthRefusals(lg.TaskGroup.Tasks, true); len(refused) > 0 {
				c.refused = append(c.refused, refused...)
				continue
			}
			for j := range lg.TaskGroup.Tasks {
				t := &lg.TaskGroup.Tasks[j]
				if t.Executor != nil {
					return nil, api.Errorf(http.StatusBadRequest, "ACCEPT: LAUNCH_GROUP task %q must not carry its own executor", t.TaskID.Value)
				}
				if err := c.check(t, &lg.Executor); err != nil {
					return nil, err
				}
			}
			ex := lg.Executor
			plans = append(plans, plannedLaunch{tasks: lg.TaskGroup.Tasks, group: true, executor: &ex})
		default:
			return nil, api.Errorf(http.StatusBadRequest, "ACCEPT: operation %s is not supported yet (only LAUNCH and LAUNCH_GROUP)", op.GetType())
		}
	}
	return plans, nil
}

// check validates one task (ex is its group's executor, nil for LAUNCH)
// and takes what it needs from remaining. Under m.mu.
func (c *taskChecker) check(t *mesos.TaskInfo, ex *mesos.ExecutorInfo) error {
	agentID := c.a.rec.Id
	if err := validTaskID(t.TaskID.Value); err != nil {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: %v", err)
	}
	if _, used := c.fw.tasks[t.TaskID.Value]; used || c.newIDs[t.TaskID.Value] {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: task id %q is already in use by framework %s", t.TaskID.Value, c.fw.id)
	}
	c.newIDs[t.TaskID.Value] = true
	if t.AgentID.Value != agentID {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q names agent %q but the offer is on agent %q", t.TaskID.Value, t.AgentID.Value, agentID)
	}
	if ex == nil && t.Command == nil && t.Executor == nil {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q has neither command nor executor", t.TaskID.Value)
	}
	if ex == nil && t.Command != nil && t.Executor != nil {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q has both command and executor; give one", t.TaskID.Value)
	}
	if err := c.stampRole("task "+t.TaskID.Value, t.Resources); err != nil {
		return err
	}
	need, err := taskResources(t.Resources)
	if err != nil {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q: %v", t.TaskID.Value, err)
	}
	if need.IsEmpty() {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q uses no resources", t.TaskID.Value)
	}
	if ex == nil {
		ex = t.Executor
	}
	exNeed, err := c.executor(t, ex)
	if err != nil {
		return err
	}
	need = need.Add(exNeed)
	if !c.remaining.Contains(need) {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q needs %s (with any new executor) but only %s remains of the offered resources",
			t.TaskID.Value, need, c.remaining)
	}
	c.remaining = c.remaining.Sub(need)
	return nil
}

// executor returns what task t's executor ex needs on top of the task: its
// resources if it neither runs on the agent nor starts earlier in this call.
// Under m.mu.
func (c *taskChecker) executor(t *mesos.TaskInfo, ex *mesos.ExecutorInfo) (resources.Resources, error) {
	if ex == nil {
		return resources.Resources{}, nil
	}
	if ex.ExecutorID.Value == "" {
		return resources.Resources{}, api.Errorf(http.StatusBadRequest, "ACCEPT: task %q: executor has no executor_id", t.TaskID.Value)
	}
	key := c.fw.id + "/" + ex.ExecutorID.Value
	if _, running := c.a.executors[key]; running || c.newExecutors[key] {
		return resources.Resources{}, nil
	}
	if err := c.stampRole("executor "+ex.ExecutorID.Value, ex.Resources); err != nil {
		return resources.Resources{}, err
	}
	exRes, err := taskResources(ex.Resources)
	if err != nil {
		return resources.Resources{}, api.Errorf(http.StatusBadRequest, "ACCEPT: executor %q: %v", ex.ExecutorID.Value, err)
	}
	c.newExecutors[key] = true
	return exRes, nil
}
func validTaskID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("task_id is empty")
	case id == "." || id == "..":
		return fmt.Errorf("task_id %q is not allowed", id)
	case strings.ContainsAny(id, "/\x00"):
		return fmt.Errorf("task_id %q contains '/' or NUL", id)
	}
	return nil
}
