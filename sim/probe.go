package sim

import (
	allocpolicy "github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/sorter"
)

// Probing jobs (FSPY's probing queue, section III.C of the paper), when
// SizeOptions.ProbeShare > 0 under fspy. Each job gets a probe: a job of
// its own, in a framework of its own, submitted with it (same Submit and
// After), of one task of 1 cpu and ProbeMemMB for the probe delay: the
// paper's probing job runs one map and one reduce over a sample in uber
// mode, all in its AM's container. The probe's framework declares itself
// a probe (allocator.JobSize.Probe), so sorter.FSP serves it FIFO within
// the probing share and after everything else beyond it; when the probe
// finishes, the predictor is asked about its job (sizer.probe). Probes
// are left out of the run's JobStats, response times and predictions:
// they are fspy's cost, paid in the resources they hold, not jobs of the
// workload. Other policies run no probes.

// ProbeMemMB is a probe's container: YARN's MapReduce AM container
// (YARNAMMemMB), in which an uber-mode job runs.
const ProbeMemMB = YARNAMMemMB

// probePrefix starts a probe job's id and its framework's.
const probePrefix = "probe:"

// withProbes returns w with a probe job per job appended, and the policy
// with its probing share, if cfg asks for probes; w itself otherwise.
func withProbes(w *Workload, cfg Config) (*Workload, Policy) {
	f, ok := cfg.Policy.Sorter.(sorter.FSP)
	if !ok || f.Oracle || !(cfg.Sizes.ProbeShare > 0) {
		return w, cfg.Policy
	}
	f.ProbeShare = cfg.Sizes.ProbeShare
	p := cfg.Policy
	p.Sorter = f
	d := probeDelay(cfg.Sizes)
	out := &Workload{Name: w.Name, Nodes: w.Nodes, Jobs: make([]Job, 0, 2*len(w.Jobs))}
	out.Jobs = append(out.Jobs, w.Jobs...)
	for i := range w.Jobs {
		j := &w.Jobs[i]
		out.Jobs = append(out.Jobs, Job{ID: probePrefix + j.ID, Framework: probePrefix + j.ID, Role: j.Role, Submit: j.Submit, After: j.After,
			Stages: []Stage{{Groups: []Group{{Tasks: 1, Duration: d, Demand: Shape(1, ProbeMemMB)}}}}})
	}
	return out, p
}

// probeDelay is how long a probe job runs, seconds: SizeOptions.
// ProbeDelay, at least a millisecond (a task takes some time).
func probeDelay(o SizeOptions) float64 {
	if o.ProbeDelay == 0 {
		return DefaultProbeDelay
	}
	return max(o.ProbeDelay, 1e-3)
}

// linkProbes pairs probe jobs with the jobs they probe.
func (s *sizer) linkProbes(e *engine) {
	s.probeFor, s.probeOf = make([]int32, len(e.jobs)), make([]int32, len(e.jobs))
	ix := make(map[string]int32, len(e.jobs))
	for i := range e.jobs {
		s.probeFor[i], s.probeOf[i] = -1, -1
		ix[e.jobs[i].job.ID] = int32(i)
	}
	if !(e.cfg.Sizes.ProbeShare > 0) || s.oracle {
		return
	}
	for i := range e.jobs {
		id := e.jobs[i].job.ID
		if len(id) <= len(probePrefix) || id[:len(probePrefix)] != probePrefix {
			continue
		}
		if p, ok := ix[id[len(probePrefix):]]; ok {
			s.probeFor[i], s.probeOf[p] = p, int32(i)
		}
	}
}

// declareProbe declares probe job ji's framework a probe.
func (s *sizer) declareProbe(e *engine, ji int32) {
	fw := e.jobs[ji].fw
	s.head[fw] = ji
	must(e.al.Observe(allocpolicy.JobSize{Framework: e.fws[fw].id, Job: e.jobs[ji].job.ID, Probe: true, APB: ProbeMemMB}))
	e.markDirty()
}

// isProbe says whether job i is a probe (left out of the results).
func (s *sizer) isProbe(i int) bool { return s != nil && s.probeFor[i] >= 0 }
