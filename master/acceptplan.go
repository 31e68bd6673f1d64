package master

// ACCEPT's plan: every task of a call whose offers are valid is validated
// against the live state before anything changes; the tasks that cannot
// run are answered TASK_ERROR, the others launched by launchLocked
// (offers.go).

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/healthcheck"
	"github.com/allot-sched/allot/resources"
)

// planAcceptLocked plans an ACCEPT whose offers are valid
// (invalidOffersLocked, acceptdrop.go, answered the others): each task is
// checked against the live state and the offered resources before
// anything changes; a task that fails is refused (TASK_ERROR, as Mesos),
// the others launch. Only an operation allot does not carry out fails the
// whole call. launchLocked (offers.go) carries out the plan. Caller holds
// m.mu.
func (m *Master) planAcceptLocked(fw *framework, acc *scheduler.Call_Accept) (*acceptPlan, error) {
	p := m.acceptedOffersLocked(fw, acc)
	c := &taskChecker{fw: fw, a: p.agent, remaining: p.remaining, newIDs: map[string]bool{}, newExecutors: map[string]bool{}, role: p.role}
	c.resv = m.newAcceptResv(fw, p) // resvaccept.go
	var err error
	if p.launches, err = c.operations(acc.Operations); err != nil {
		return nil, err
	}
	p.remaining, p.refused = c.remaining, c.refused
	p.resv = c.resv
	p.filter = filterOf(acc.Filters)
	return p, nil
}

// acceptedOffersLocked sums the accepted offers, which invalidOffersLocked
// found to be fw's, distinct, allocated to one role and on one connected
// agent. Caller holds m.mu.
func (m *Master) acceptedOffersLocked(fw *framework, acc *scheduler.Call_Accept) *acceptPlan {
	p := &acceptPlan{}
	for _, oid := range acc.OfferIDs {
		o := m.frameworkOfferLocked(fw, oid.Value)
		p.role = m.offerRoleLocked(fw, o)
		p.offers = append(p.offers, o)
		p.remaining = p.remaining.Add(o.res)
		p.agent = m.agents[o.agent]
	}
	return p
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
	resv         *acceptResv   // reservation and volume operations (resvaccept.go)
	role         string        // the offers' allocation role: what a MULTI_ROLE task's resources must carry
}

// operations validates LAUNCH and LAUNCH_GROUP operations into launches;
// the tasks that fail are refused. A LAUNCH without tasks launches
// nothing, as in Mesos (the offers are then only declined). Under m.mu.
func (c *taskChecker) operations(ops []mesos.Offer_Operation) ([]plannedLaunch, error) {
	var plans []plannedLaunch
	for i := range ops {
		op := &ops[i]
		switch op.GetType() {
		case mesos.Offer_Operation_LAUNCH:
			if tasks := c.launch(op.GetLaunch().GetTaskInfos()); len(tasks) > 0 {
				plans = append(plans, plannedLaunch{tasks: tasks})
			}
		case mesos.Offer_Operation_LAUNCH_GROUP:
			lg := op.LaunchGroup
			if lg == nil || len(lg.TaskGroup.Tasks) == 0 || !c.group(lg) {
				continue
			}
			ex := lg.Executor
			plans = append(plans, plannedLaunch{tasks: lg.TaskGroup.Tasks, group: true, executor: &ex})
		default:
			if isResourceOperation(op.GetType()) {
				c.resourceOperation(op)
				continue
			}
			return nil, api.Errorf(http.StatusBadRequest, "ACCEPT: operation %s is not supported", op.GetType())
		}
	}
	return plans, nil
}

// launch checks the tasks of one LAUNCH and returns those that may run;
// each of the others is refused with REASON_TASK_INVALID and Mesos's
// message. Under m.mu.
func (c *taskChecker) launch(tasks []mesos.TaskInfo) []mesos.TaskInfo {
	var ok []mesos.TaskInfo
	for j := range tasks {
		t := &tasks[j]
		if msg := c.check(t, nil); msg != "" {
			c.refused = append(c.refused, refusedTask{id: t.TaskID, reason: mesos.REASON_TASK_INVALID, msg: msg})
			continue
		}
		ok = append(ok, *t)
	}
	return ok
}

// group checks a LAUNCH_GROUP whole: if one task fails, every task of the
// group is refused with REASON_TASK_GROUP_INVALID and nothing of the
// group is taken from the offers (Mesos launches a group whole or not at
// all). Under m.mu.
func (c *taskChecker) group(lg *mesos.Offer_Operation_LaunchGroup) bool {
	saved := c.save()
	for j := range lg.TaskGroup.Tasks {
		t := &lg.TaskGroup.Tasks[j]
		msg := ""
		if t.Executor != nil {
			msg = "'TaskInfo.executor' must not be set"
		} else {
			msg = c.check(t, &lg.Executor)
		}
		if msg != "" {
			c.restore(saved)
			for _, u := range lg.TaskGroup.Tasks {
				c.refused = append(c.refused, refusedTask{id: u.TaskID, reason: mesos.REASON_TASK_GROUP_INVALID,
					msg: "Task '" + t.TaskID.Value + "' is invalid: " + msg})
			}
			return false
		}
	}
	return true
}

// checkerState is what a task group's checks change, kept to undo them
// when one task of the group fails.
type checkerState struct {
	remaining            resources.Resources
	newIDs, newExecutors map[string]bool
	refused              int
}

func (c *taskChecker) save() checkerState {
	return checkerState{remaining: c.remaining, newIDs: maps.Clone(c.newIDs), newExecutors: maps.Clone(c.newExecutors), refused: len(c.refused)}
}

func (c *taskChecker) restore(s checkerState) {
	c.remaining, c.newIDs, c.newExecutors, c.refused = s.remaining, s.newIDs, s.newExecutors, c.refused[:s.refused]
}

// check validates one task (ex is its group's executor, nil for LAUNCH),
// in the order Mesos's master does, and takes what it needs from
// remaining; it returns why the task cannot run, in Mesos's words, or "".
// Under m.mu.
func (c *taskChecker) check(t *mesos.TaskInfo, ex *mesos.ExecutorInfo) string {
	agentID := c.a.rec.Id
	if err := validTaskID(t.TaskID.Value); err != nil {
		return err.Error()
	}
	if _, used := c.fw.tasks[t.TaskID.Value]; used || c.newIDs[t.TaskID.Value] {
		return "Task has duplicate ID: " + t.TaskID.Value
	}
	if t.AgentID.Value != agentID {
		return "Task uses invalid agent " + t.AgentID.Value + " while agent " + agentID + " is expected"
	}
	if err := healthcheck.Validate(t.HealthCheck); err != nil {
		return "Task uses invalid health check: " + err.Error()
	}
	if err := c.stampRole("task "+t.TaskID.Value, t.Resources); err != nil {
		return err.Error()
	}
	need, err := taskResources(t.Resources)
	if err != nil {
		return "Task uses invalid resources: " + err.Error()
	}
	if need.IsEmpty() {
		return "Task uses no resources"
	}
	if msg := api.UnsupportedContainer("Task", t.Container); msg != "" {
		return msg
	}
	if ex == nil && (t.Command == nil) == (t.Executor == nil) {
		return "Task should have at least one (but not both) of CommandInfo or ExecutorInfo present"
	}
	if ex == nil {
		ex = t.Executor
	}
	exNeed, msg := c.executor(ex)
	if msg != "" {
		return msg
	}
	need = need.Add(exNeed)
	if !c.remaining.Contains(need) {
		return fmt.Sprintf("Total resources %s required by task and its executor is more than available %s", need, c.remaining)
	}
	c.remaining = c.remaining.Sub(need)
	if err := c.resv.checkTaskExact(t); err != nil {
		return err.Error()
	}
	c.newIDs[t.TaskID.Value] = true
	if ex != nil {
		c.newExecutors[c.fw.id+"/"+ex.ExecutorID.Value] = true
	}
	return ""
}

// executor returns what executor ex needs on top of its task: its
// resources if it neither runs on the agent nor starts earlier in this
// call; or why it cannot run. Under m.mu.
func (c *taskChecker) executor(ex *mesos.ExecutorInfo) (resources.Resources, string) {
	if ex == nil {
		return resources.Resources{}, ""
	}
	if err := validTaskID(ex.ExecutorID.Value); err != nil {
		return resources.Resources{}, "Executor has an invalid ExecutorID: " + err.Error()
	}
	key := c.fw.id + "/" + ex.ExecutorID.Value
	if _, running := c.a.executors[key]; running || c.newExecutors[key] {
		return resources.Resources{}, ""
	}
	if msg := api.UnsupportedContainer("Executor", ex.Container); msg != "" {
		return resources.Resources{}, msg
	}
	if err := c.stampRole("executor "+ex.ExecutorID.Value, ex.Resources); err != nil {
		return resources.Resources{}, err.Error()
	}
	exRes, err := taskResources(ex.Resources)
	if err != nil {
		return resources.Resources{}, "Executor uses invalid resources: " + err.Error()
	}
	return exRes, ""
}

// validTaskID applies Mesos's rules for ids (common/validation.cpp), in
// its words.
func validTaskID(id string) error {
	switch {
	case id == "":
		return errors.New("ID must not be empty")
	case len(id) > 255:
		return errors.New("ID must not be greater than 255 characters")
	case id == "." || id == "..":
		return fmt.Errorf("'%s' is disallowed", id)
	case strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '/' || r == '\\' }):
		return fmt.Errorf("'%s' contains invalid characters", id)
	}
	return nil
}
