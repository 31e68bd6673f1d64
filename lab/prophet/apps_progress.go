package prophet

import (
	"fmt"

	allocpolicy "github.com/allot-sched/allot/allocator/policy"
)

// Stage progress reports (beyond the paper; AppConfig.Progress): every
// Progress steps, and whenever an executor enters a stage, the simulator
// tells the allocator where each running executor of a gang-placed
// application is (allocator.Observe with a StageProgress: stage and fraction of
// its work done), as agents or drivers could report through the master.
// The timeline model re-anchors the executor's predicted profile on it,
// so a stage slowed by contention no longer shows as over on the
// timeline while it still runs.

// reportProgress sends this step's reports; it runs between advancing
// the executors and the next allocation, at the allocator's clock.
func (r *appRun) reportProgress() error {
	every := r.cfg.Progress
	if every <= 0 || !r.gang {
		return nil
	}
	tick := r.stepNo%every == 0
	for _, x := range r.execs {
		if !tick && x.stage == x.reported {
			continue
		}
		x.reported = x.stage
		st := r.apps[x.app].Stages[x.stage]
		done := 0.0
		if st.Work > 0 {
			done = min(max(1-x.left/st.Work, 0), 1)
		}
		if err := r.al.Observe(allocpolicy.StageProgress{Framework: r.apps[x.app].Name, Agent: agentName(x.agent), Stage: x.stage, Done: done}); err != nil {
			return fmt.Errorf("sim: stage progress: %w", err)
		}
		if p := r.apps[x.app].Predicted.Stages; x.stage < len(p) {
			// the same re-anchor as the model's, for the diagnostics
			s := p[x.stage]
			started := r.now - done*(s.End-s.Start).Seconds()
			x.anchor = started - s.Start.Seconds()
			r.mirrorReanchor(x, x.stage, started)
		}
	}
	return nil
}
