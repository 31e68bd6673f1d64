package sim

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	allocpolicy "github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/framework/predict/jobsize"
	"github.com/allot-sched/allot/internal/hashrand"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Job sizes for the size-based policies (fsp, fspy): the simulator's jobs
// declare them as policy.JobSize signals exactly as a master would
// after reading a framework's labels.
//
//   - fsp (sorter.FSP{Oracle: true}): at arrival every job declares its
//     true size (JobSize: MB x s at full speed).
//   - fspy (sorter.FSP{}): at arrival a job declares an unknown size with
//     the paper's initial APB (eq. 9; its AM's memory added when it has
//     one) and an infinite initial size, so it is served fairly; a probe
//     event ProbeDelay seconds later asks SizeOptions.Predictor, and if it
//     answers, the job declares the prediction (eq. 10 moves it to the
//     size-based queue). A predictor that cannot tell yet (a regression
//     with too little history) leaves the job of unknown size for good.
//     Without SizeOptions.ProbeShare the probe is a delay only and takes
//     no resources; with it, the probe is a job in the probing queue
//     (probe.go) and the prediction arrives when it finishes.
//   - A job with an AM (Job.AM, am.go) declares its memory as the AM of
//     JobSize and adds it to the APB (eq. 9: R_am + R_m x N_m), so its
//     virtual size shrinks at (virtual resource - AM) as VSC has it.
//   - A known size is declared with APB = the job's largest stage's
//     memory (tasks x container memory), capped at the cluster's memory:
//     what the job's configuration says before it runs. fsp and fspy use
//     the same APB, so they differ only in what they know of sizes.
//   - A framework declares its head job, the oldest it has not finished;
//     the next becomes the head when it finishes. SWIM jobs are each their
//     own framework.
//   - Every finished job's features and measured phase times go to the
//     predictor (Observe), so a regression refits after each job.

// SizeOptions say how jobs learn their sizes under fspy.
type SizeOptions struct {
	// Predictor names what predicts sizes at the probe (ParsePredictor):
	// "oracle" (or ""), true sizes behind the probe delay; "noisy:SIGMA",
	// true sizes times a log-normal error of SIGMA seeded by Config.Seed;
	// "regression", the paper's GLS models refitted after every job. Each
	// run builds its own, so runs never share what a predictor learned.
	Predictor string
	// History are earlier jobs the regression learns from before the run
	// (the paper fits its coefficients on history traces): their features
	// as a probe would report them, and their phase times.
	History []Job
	// ProbeDelay is how long after arrival the probe's prediction arrives,
	// seconds; 0 means DefaultProbeDelay, negative means at arrival.
	ProbeDelay float64
	// ProbeShare, if > 0, runs probes as jobs (fspy only; probe.go): each
	// job's probe is a job of its own, one container of ProbeMemMB and 1
	// cpu for the probe delay, in FSPY's probing queue with this share of
	// the cluster (sorter.FSP.ProbeShare), and the prediction arrives when
	// the probe finishes. 0: a probe is a delay and takes nothing.
	ProbeShare float64
	// ProbeNoise is the sigma of a log-normal sampling error on the
	// function times a probe measures (MapFuncSeconds, ReduceFuncSeconds),
	// per job and phase, seeded by Config.Seed: a probe reads a small
	// sample of the input. 0: a perfect probe.
	ProbeNoise float64
}

// DefaultProbeDelay is the probe delay: the paper's probes take "from a
// few seconds to tens of seconds".
const DefaultProbeDelay = 10.0

// sizer is the simulator's side of size declarations (nil for policies
// that use no sizes).
type sizer struct {
	oracle      bool
	opt         SizeOptions
	pred        jobsize.Predictor
	clusterMB   float64
	clusterCPUs float64
	// per job: the prediction (NaN until there is one)
	predicted []float64
	// per framework: the index of the job it declared, -1 if none
	head []int32
	// probes run as jobs (probe.go): per job, the job it probes (-1 for a
	// production job) and its probe (-1 if none)
	probeFor, probeOf []int32
}

func newSizer(e *engine) *sizer {
	f, ok := e.cfg.Policy.Sorter.(sorter.FSP)
	if !ok {
		return nil
	}
	s := &sizer{oracle: f.Oracle, opt: e.cfg.Sizes, clusterMB: e.total[resources.Mem].Units(), clusterCPUs: e.total[resources.CPUs].Units()}
	truth := jobsize.Oracle{}
	for i := range e.w.Jobs {
		truth[e.w.Jobs[i].ID] = JobSize(&e.w.Jobs[i])
	}
	var err error
	if s.pred, err = ParsePredictor(s.opt.Predictor, truth, e.cfg.Seed); err != nil {
		panic(err) // Run checked the spec
	}
	for i := range s.opt.History {
		if f, a, ok := SWIMFeatures(&s.opt.History[i]); ok {
			s.pred.Observe(s.noisy(e, f), a)
		}
	}
	s.predicted = make([]float64, len(e.jobs))
	for i := range s.predicted {
		s.predicted[i] = math.NaN()
		if s.oracle {
			s.predicted[i] = JobSize(e.jobs[i].job)
		}
	}
	s.head = make([]int32, len(e.fws))
	for i := range s.head {
		s.head[i] = -1
	}
	s.linkProbes(e)
	return s
}

// arrived declares job ji if it is its framework's head, and schedules
// its probe (fspy).
func (s *sizer) arrived(e *engine, ji int32) {
	if s.probeFor[ji] >= 0 {
		s.declareProbe(e, ji)
		return
	}
	if !s.oracle && s.probeOf[ji] < 0 {
		d := s.opt.ProbeDelay
		if d == 0 {
			d = DefaultProbeDelay
		}
		e.q.push(qItem{t: e.now + math.Max(0, d), kind: evProbe, ref: ji})
	}
	if fw := e.jobs[ji].fw; s.head[fw] < 0 {
		s.declare(e, fw, ji)
	}
}

// probe asks the predictor about job ji and declares the answer.
func (s *sizer) probe(e *engine, ji int32) {
	j := &e.jobs[ji]
	if j.done {
		return
	}
	if size, ok := s.pred.Predict(s.features(e, j.job)); ok && size > 0 && !math.IsInf(size, 0) {
		s.predicted[ji] = size
		if s.head[j.fw] == ji {
			s.declare(e, j.fw, ji)
		}
	}
}

// finished trains the predictor on job ji and declares its framework's
// next head job, if any.
func (s *sizer) finished(e *engine, ji int32) {
	if p := s.probeFor[ji]; p >= 0 {
		s.probe(e, p) // the probe's measurements are in
		return
	}
	j := &e.jobs[ji]
	if f, a, ok := SWIMFeatures(j.job); ok {
		s.pred.Observe(s.noisy(e, f), a)
	}
	if s.head[j.fw] != ji {
		return
	}
	s.head[j.fw] = -1
	for k := range e.jobs { // rare: frameworks with several jobs
		if o := &e.jobs[k]; o.fw == j.fw && o.arrived && !o.done {
			s.declare(e, j.fw, int32(k))
			return
		}
	}
}

func (s *sizer) declare(e *engine, fw int, ji int32) {
	s.head[fw] = ji
	j := e.jobs[ji].job
	d := allocpolicy.JobSize{Framework: e.fws[fw].id, Job: j.ID, AM: j.AM[resources.Mem].Units()}
	if p := s.predicted[ji]; !math.IsNaN(p) {
		d.Known, d.Size = true, p
		d.APB, d.APBCPUs = s.apb(j, false)
	} else {
		d.APB, d.APBCPUs = s.apb(j, true)
	}
	d.APB += d.AM
	d.APBCPUs += j.AM[resources.CPUs].Units()
	must(e.al.Observe(d))
	e.markDirty()
}

// apb is the bound a job declares, in memory and cpus: its first stage's
// (eq. 9's initial APB, R_m x N_m) before its size is known, its largest
// stage's (by memory) after; at most the cluster's, at least 1 MB. The
// cpus count only for a virtual cluster shared by DRF (sorter.FSP.DRF).
func (s *sizer) apb(j *Job, initial bool) (mb, cpus float64) {
	for si, st := range j.Stages {
		var m, c float64
		for _, g := range st.Groups {
			m += float64(g.Tasks) * g.Demand[resources.Mem].Units()
			c += float64(g.Tasks) * g.Demand[resources.CPUs].Units()
		}
		if m > mb {
			mb, cpus = m, c
		}
		if initial && si == 0 {
			break
		}
	}
	return math.Max(1, math.Min(mb, s.clusterMB)), math.Min(cpus, s.clusterCPUs)
}

// features is what the probe reports: SWIMFeatures with the probe's
// sampling error; for jobs not from SWIM, just the id (an oracle or noisy
// oracle still answers).
func (s *sizer) features(e *engine, j *Job) jobsize.JobFeatures {
	f, _, ok := SWIMFeatures(j)
	if !ok {
		return jobsize.JobFeatures{ID: j.ID}
	}
	return s.noisy(e, f)
}

func (s *sizer) noisy(e *engine, f jobsize.JobFeatures) jobsize.JobFeatures {
	if sg := s.opt.ProbeNoise; sg > 0 {
		f.MapFuncSeconds *= math.Exp(sg*hashrand.Normal(e.cfg.Seed, f.ID+"\x00probe-map") - sg*sg/2)
		f.ReduceFuncSeconds *= math.Exp(sg*hashrand.Normal(e.cfg.Seed, f.ID+"\x00probe-reduce") - sg*sg/2)
	}
	return f
}

// predictions returns the sizes predicted at probes, by job id (fspy).
func (s *sizer) predictions(e *engine) map[string]float64 {
	if s == nil || s.oracle {
		return nil
	}
	out := map[string]float64{}
	for i, p := range s.predicted {
		if !math.IsNaN(p) && s.probeFor[i] < 0 {
			out[e.jobs[i].job.ID] = p
		}
	}
	return out
}

// ParsePredictor builds the predictor spec names (see
// SizeOptions.Predictor) over the true sizes truth, seeded by seed.
func ParsePredictor(spec string, truth jobsize.Oracle, seed uint64) (jobsize.Predictor, error) {
	name, arg, hasArg := strings.Cut(strings.ToLower(strings.TrimSpace(spec)), ":")
	switch {
	case (name == "" || name == "oracle") && !hasArg:
		return truth, nil
	case name == "regression" && !hasArg:
		return jobsize.NewRegression(), nil
	case name == "noisy":
		sigma, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(sigma >= 0) || sigma > 5 {
			return nil, fmt.Errorf("predictor %q: noisy:SIGMA wants a sigma between 0 and 5", spec)
		}
		return jobsize.NewNoisy(truth, sigma, seed), nil
	}
	return nil, fmt.Errorf("unknown predictor %q: choose oracle, noisy:SIGMA or regression", spec)
}

// JobSize is a job's size as FSPY measures it: memory x time over all its
// tasks, MB x s (eq. 5), at full speed.
func JobSize(j *Job) float64 {
	var s float64
	for _, st := range j.Stages {
		for _, g := range st.Groups {
			s += float64(g.Tasks) * g.Duration * g.Demand[resources.Mem].Units()
		}
	}
	return s
}

// PredictionR2 is the R^2 of predicted against actual job sizes, pairing
// by job id over the jobs in both maps (jobs never predicted do not
// count); NaN with fewer than two pairs.
func PredictionR2(actual, predicted map[string]float64) float64 {
	ids := make([]string, 0, len(predicted))
	for id := range predicted {
		if _, ok := actual[id]; ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids) // a fixed order: the same sums, bit for bit
	a, p := make([]float64, len(ids)), make([]float64, len(ids))
	for i, id := range ids {
		a[i], p[i] = actual[id], predicted[id]
	}
	return jobsize.R2(a, p)
}
