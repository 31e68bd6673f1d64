package prophet

import (
	"math"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
)

// Stage progress (beyond the Prophet paper). Prophet's timeline
// anchors an executor's predicted profile at its offer and never moves it;
// an executor slowed by contention then runs its real stages late, and
// after its predicted end the timeline shows as free the bandwidth it
// still uses (measured in the simulator: sim/apps_diag.go). An executor
// reporting where it is lets the model re-anchor its prediction on what
// it observed: the StageProgress signal is that report, a pure event like
// the Usage signal, which the simulator emits today and the master can emit
// once agents or drivers report stage progress.

// progress re-anchors fw's oldest executor on the agent; it reports
// whether the timeline changed.
func (ag *Agent) progress(fw string, p policy.StageProgress, at time.Time) bool {
	for i := range ag.execs {
		x := &ag.execs[i]
		if x.Framework != fw {
			continue
		}
		st := x.Profile.Stages
		if p.Stage >= len(st) {
			return false
		}
		s := st[p.Stage]
		started := at.UnixNano() - int64(math.Round(p.Done*float64(s.End-s.Start)))
		anchor := started - int64(s.Start)
		if anchor == x.anchor() {
			return false
		}
		if ag.TL.Reanchor(x.Key, p.Stage, time.Unix(0, started)) != nil {
			return false
		}
		x.Anchor, x.Anchored = anchor, true
		return true
	}
	return false
}

// anchor is the time x's profile is anchored at: its launch until a
// progress report moved it.
func (x *Executor) anchor() int64 {
	if x.Anchored {
		return x.Anchor
	}
	return x.Launch
}
