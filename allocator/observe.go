package allocator

import (
	"fmt"
	"math"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/allocator/policy/prophet"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Observe takes one report for the policies (policy.Signal): it checks
// the framework or agent the report names and what it carries, applies
// what the allocator itself keeps of it, and forwards it to the policy
// models as an event. An invalid report is refused whatever the policy,
// so a framework learns of its mistake before switching sorters; a valid
// one that no model reads changes nothing.
func (a *Allocator) Observe(s policy.Signal) error {
	switch s := s.(type) {
	case policy.AppDemand:
		return a.setAppDemand(s.Framework, s.Demand)
	case policy.JobSize:
		return a.setJobSize(s)
	case policy.JobType:
		return a.setJobType(s.Framework, s.Type)
	case policy.Usage:
		return a.observeUsage(s.Agent, s.Rates)
	case policy.CoProgress:
		return a.observeCoProgress(s.Agent, s.Progress)
	case policy.StageProgress:
		return a.observeStageProgress(s)
	}
	return fmt.Errorf("observe: unknown signal %T", s)
}

// setAppDemand declares framework's application: E executors of cpus/mem
// each, following d.Profile from their launch. From then on only the gang
// path serves the framework: one gang of E executor-sized offers on
// distinct agents, after which it gets nothing until it declares again
// (a framework whose gang was declined declares again to ask anew). The
// zero AppDemand withdraws the declaration. It needs a gang criterion
// (prophet, tetris-peak).
func (a *Allocator) setAppDemand(framework string, d profile.AppDemand) error {
	if d.Executors == 0 && d.Cpus == 0 && d.Mem == 0 && len(d.Profile.Stages) == 0 {
		return a.clearAppDemand(framework)
	}
	f, err := a.framework(framework)
	if err != nil {
		return fmt.Errorf("set app demand: %w", err)
	}
	if _, ok := a.crit.(sorter.Gang); !ok {
		return fmt.Errorf("set app demand for %q: sorter %q does not place applications; use prophet or tetris-peak", framework, a.crit.Name())
	}
	if err := d.Validate(); err != nil {
		return fmt.Errorf("set app demand for %q: %w", framework, err)
	}
	c := prophet.CloneDemand(d)
	a.leaveSets(f)
	f.app = &c
	a.frameworkChanged(f)
	a.tell(policy.Event{Kind: policy.AppDemandSet, Framework: framework, App: &c})
	return nil
}

// clearAppDemand withdraws framework's application demand: it is served by
// its declared task demand or whole agents again, and its pending gang, if
// any, is forgotten. Executors already placed stay on their timelines until
// their resources are recovered.
func (a *Allocator) clearAppDemand(framework string) error {
	f, err := a.framework(framework)
	if err != nil {
		return fmt.Errorf("clear app demand: %w", err)
	}
	a.leaveSets(f)
	f.app = nil
	a.frameworkChanged(f)
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.AppDemandSet, Framework: framework})
	}
	return nil
}

// setJobSize declares a framework's head job to the size-based policies.
// The declaration takes effect at the allocator's clock now: the job
// enters FSP's virtual fair cluster (or, for the same job name, gets its
// new size by the paper's eq. 10).
func (a *Allocator) setJobSize(s policy.JobSize) error {
	if _, err := a.framework(s.Framework); err != nil {
		return fmt.Errorf("set job size: %w", err)
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("set job size for %q: %w", s.Framework, err)
	}
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.JobSizeSet, Framework: s.Framework, Size: s})
	}
	return nil
}

// setJobType names framework's job type. Without a bandit it changes
// nothing but still checks the framework.
func (a *Allocator) setJobType(framework, typ string) error {
	if _, err := a.framework(framework); err != nil {
		return fmt.Errorf("set job type: %w", err)
	}
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.JobTypeSet, Framework: framework, JobType: typ})
	}
	return nil
}

// observeUsage adds to an agent's measured usage the agent's advertised
// disk_bw and net_bw (the goodness's r_max and w_max) and the frameworks
// holding resources there, and forwards it to the models.
func (a *Allocator) observeUsage(agent string, u policy.NodeUsage) error {
	ag, err := a.agent(agent)
	if err != nil {
		return fmt.Errorf("observe usage: %w", err)
	}
	if err := u.Validate(); err != nil {
		return fmt.Errorf("observe usage of %q: %w", agent, err)
	}
	if len(a.models) == 0 {
		return nil
	}
	nu := &sorter.NodeUsage{CPU: u.CPU, IOWait: u.IOWait,
		DiskReadMBps: u.DiskReadMBps, DiskWriteMBps: u.DiskWriteMBps,
		NetRxMBps: u.NetRxMBps, NetTxMBps: u.NetTxMBps,
		DiskBW: ag.total.Scalars[resources.DiskBW].Units(), NetBW: ag.total.Scalars[resources.NetBW].Units()}
	a.tell(policy.Event{Kind: policy.UsageObserved, Agent: agent, Usage: nu, Holders: a.holderIDs(ag)})
	return nil
}

// observeCoProgress forwards the co-location's progress on an agent
// (RewardProgress) with the frameworks holding resources there.
func (a *Allocator) observeCoProgress(agent string, progress float64) error {
	ag, err := a.agent(agent)
	if err != nil {
		return fmt.Errorf("observe progress: %w", err)
	}
	if math.IsNaN(progress) || math.IsInf(progress, 0) || progress < 0 {
		return fmt.Errorf("observe progress of %q: %v must be a finite number >= 0", agent, progress)
	}
	if len(a.models) == 0 {
		return nil
	}
	a.tell(policy.Event{Kind: policy.CoProgressObserved, Agent: agent, CoProgress: progress, Holders: a.holderIDs(ag)})
	return nil
}

// holderIDs lists the frameworks holding resources on ag.
func (a *Allocator) holderIDs(ag *agent) []string {
	holders := make([]string, 0, len(ag.holds))
	for _, h := range ag.holds {
		holders = append(holders, a.fws[h.fw].id)
	}
	return holders
}

// observeStageProgress checks a stage progress report and forwards it:
// the gang criteria's timeline model re-anchors the executor's whole
// profile so that the stage's predicted start lies done x its predicted
// duration before now (profile.Timeline.Reanchor); the rest of the
// prediction shifts with it. A report for an executor the model does not
// hold, or a stage its profile does not have, changes nothing; with no
// model the call only validates.
func (a *Allocator) observeStageProgress(p policy.StageProgress) error {
	framework, agent := p.Framework, p.Agent
	if _, err := a.framework(framework); err != nil {
		return fmt.Errorf("observe stage progress: %w", err)
	}
	if _, err := a.agent(agent); err != nil {
		return fmt.Errorf("observe stage progress: %w", err)
	}
	if p.Stage < 0 {
		return fmt.Errorf("observe stage progress of %q on %q: stage %d < 0", framework, agent, p.Stage)
	}
	if !(p.Done >= 0 && p.Done <= 1) {
		return fmt.Errorf("observe stage progress of %q on %q: done %v is not in [0, 1]", framework, agent, p.Done)
	}
	if len(a.models) == 0 {
		return nil
	}
	a.tell(policy.Event{Kind: policy.StageProgressObserved, Framework: framework, Agent: agent, Progress: p})
	return nil
}
