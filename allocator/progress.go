package allocator

import (
	"fmt"
	"math"
	"time"
)

// Stage progress (beyond the Prophet paper, issue 10). Prophet's timeline
// anchors an executor's predicted profile at its offer and never moves it;
// an executor slowed by contention then runs its real stages late, and
// after its predicted end the timeline shows as free the bandwidth it
// still uses (measured in the simulator: sim/apps_diag.go). An executor
// reporting where it is lets the model re-anchor its prediction on what
// it observed: ObserveStageProgress is that report, a pure event like
// ObserveUsage, which the simulator emits today and the master can emit
// once agents or drivers report stage progress.

// stageProgress is one ObserveStageProgress report.
type stageProgress struct {
	stage int
	done  float64
}

// ObserveStageProgress reports that framework's executor on agent is in
// its predicted profile's stage, done fraction of it (in [0, 1]) through,
// at the allocator's clock. The gang criteria's timeline model re-anchors
// the executor's whole profile so that the stage's predicted start lies
// done x its predicted duration before now (profile.Timeline.Reanchor);
// the rest of the prediction shifts with it. If the framework holds
// several executors on the agent, the oldest is meant. A report for an
// executor the model does not hold, or a stage its profile does not have,
// changes nothing; with no model the call only validates.
func (a *Allocator) ObserveStageProgress(framework, agent string, stage int, done float64) error {
	if _, err := a.framework(framework); err != nil {
		return fmt.Errorf("observe stage progress: %w", err)
	}
	if _, err := a.agent(agent); err != nil {
		return fmt.Errorf("observe stage progress: %w", err)
	}
	if stage < 0 {
		return fmt.Errorf("observe stage progress of %q on %q: stage %d < 0", framework, agent, stage)
	}
	if !(done >= 0 && done <= 1) {
		return fmt.Errorf("observe stage progress of %q on %q: done %v is not in [0, 1]", framework, agent, done)
	}
	if len(a.models) == 0 {
		return nil
	}
	a.tell(event{kind: evProgress, framework: framework, agent: agent, progress: stageProgress{stage, done}})
	return nil
}

// progress re-anchors fw's oldest executor on the agent; it reports
// whether the timeline changed.
func (ag *agentTL) progress(fw string, p stageProgress, at time.Time) bool {
	for i := range ag.execs {
		x := &ag.execs[i]
		if x.Framework != fw {
			continue
		}
		st := x.Profile.Stages
		if p.stage >= len(st) {
			return false
		}
		s := st[p.stage]
		started := at.UnixNano() - int64(math.Round(p.done*float64(s.End-s.Start)))
		anchor := started - int64(s.Start)
		if anchor == x.anchor() {
			return false
		}
		if ag.tl.Reanchor(x.Key, p.stage, time.Unix(0, started)) != nil {
			return false
		}
		x.Anchor, x.Anchored = anchor, true
		return true
	}
	return false
}

// anchor is the time x's profile is anchored at: its launch until a
// progress report moved it.
func (x *execRec) anchor() int64 {
	if x.Anchored {
		return x.Anchor
	}
	return x.Launch
}
