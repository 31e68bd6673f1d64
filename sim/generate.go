package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/allot-sched/allot/resources"
)

// OnlineSpec is the workload of the psdsf-online paper's Mesos experiment
// (Shan et al., section 3.3): two submission groups (Mesos roles), Pi and
// WordCount, each with Queues queues of JobsPerQueue Spark jobs; a queue
// submits its next job when the previous one finishes, so at most
// 2 x Queues jobs run at once. Each queue is one framework.
//
// A Spark job is modelled as TasksPerJob executor-sized tasks of
// TaskSeconds each: the paper's executors pull micro-tasks until the job's
// work is done, so a job given fewer executors runs proportionally longer,
// which rigid executor-sized chunks of work reproduce. Pi executors ask
// 2 cpus / 2 GiB, WordCount executors 1 cpu / 3.5 GiB, as in the paper.
// The paper gives no job sizes; the defaults (8 tasks of 30 s, +-20 %
// per job) make the total cpu and memory work exactly fill the cluster
// for the same time (5,000 s at 100 % of 36 cpus and 66 GiB), so that any
// packing loss shows in the makespan.
type OnlineSpec struct {
	Queues       int     // per group; default 5
	JobsPerQueue int     // default 50
	TasksPerJob  int     // default 8
	TaskSeconds  float64 // default 30
	Jitter       float64 // relative spread of a job's task duration; default 0.2, negative for none
	Seed         uint64
}

// Defaults fills the zero fields with the defaults above.
func (s *OnlineSpec) Defaults() {
	if s.Queues <= 0 {
		s.Queues = 5
	}
	if s.JobsPerQueue <= 0 {
		s.JobsPerQueue = 50
	}
	if s.TasksPerJob <= 0 {
		s.TasksPerJob = 8
	}
	if s.TaskSeconds <= 0 {
		s.TaskSeconds = 30
	}
	if s.Jitter == 0 {
		s.Jitter = 0.2
	}
	if s.Jitter < 0 {
		s.Jitter = 0
	}
}

// The executor shapes of the paper's two groups.
var (
	PiExecutor        = Shape(2, 2048)
	WordCountExecutor = Shape(1, 3584)
)

// OnlineJobs builds the psdsf-online jobs. Queues are interleaved (pi-1,
// wc-1, pi-2, ...) so that registration order, the allocator's last
// tie-break, favours neither group.
func OnlineJobs(spec OnlineSpec) []Job {
	spec.Defaults()
	rng := rand.New(rand.NewPCG(spec.Seed, 0x6f6e6c696e65))
	var jobs []Job
	groups := []struct {
		prefix, role string
		shape        resources.Vector
	}{{"pi", "pi", PiExecutor}, {"wc", "wordcount", WordCountExecutor}}
	for j := 1; j <= spec.JobsPerQueue; j++ {
		for q := 1; q <= spec.Queues; q++ {
			for _, g := range groups {
				fw := fmt.Sprintf("%s-%d", g.prefix, q)
				dur := spec.TaskSeconds * (1 + spec.Jitter*(2*rng.Float64()-1))
				dur = math.Max(1, math.Round(dur*10)/10)
				job := Job{
					ID: fmt.Sprintf("%s-%d", fw, j), Framework: fw, Role: g.role,
					Stages: []Stage{{Groups: []Group{{Tasks: spec.TasksPerJob, Duration: dur, Demand: g.shape}}}},
				}
				if j > 1 {
					job.After = fmt.Sprintf("%s-%d", fw, j-1)
				}
				jobs = append(jobs, job)
			}
		}
	}
	return jobs
}

// SyntheticSpec describes a random mixed workload in the spirit of the
// papers' simulations: Poisson arrivals, jobs of one to MaxStages stages,
// task counts and durations with long tails, and per-task demands drawn
// from CPU-heavy, memory-heavy, balanced and large shapes; with Bandwidth,
// some groups also stream from disk or the network (so the contention
// model has something to do).
type SyntheticSpec struct {
	Jobs             int     // default 100
	Frameworks       int     // default 8; jobs are dealt to them at random
	MeanInterarrival float64 // seconds; default 5
	MaxStages        int     // default 3
	MeanTasks        float64 // default 10
	MeanDuration     float64 // seconds; default 20
	Bandwidth        bool
	Seed             uint64
}

// SyntheticJobs draws a workload from spec; the same seed gives the same jobs.
func SyntheticJobs(spec SyntheticSpec) []Job {
	if spec.Jobs <= 0 {
		spec.Jobs = 100
	}
	if spec.Frameworks <= 0 {
		spec.Frameworks = 8
	}
	if spec.MeanInterarrival <= 0 {
		spec.MeanInterarrival = 5
	}
	if spec.MaxStages <= 0 {
		spec.MaxStages = 3
	}
	if spec.MeanTasks <= 0 {
		spec.MeanTasks = 10
	}
	if spec.MeanDuration <= 0 {
		spec.MeanDuration = 20
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x73796e7468))
	shapes := [][2]float64{{2, 2048}, {1, 3584}, {1, 1024}, {4, 8192}, {0.5, 512}}
	jobs := make([]Job, 0, spec.Jobs)
	t := 0.0
	for i := 0; i < spec.Jobs; i++ {
		t += math.Round(rng.ExpFloat64()*spec.MeanInterarrival*10) / 10
		j := Job{ID: fmt.Sprintf("j%d", i+1), Framework: fmt.Sprintf("fw%d", rng.IntN(spec.Frameworks)+1), Submit: t}
		for s := rng.IntN(spec.MaxStages) + 1; s > 0; s-- {
			var st Stage
			for g := rng.IntN(2) + 1; g > 0; g-- {
				sh := shapes[rng.IntN(len(shapes))]
				var more []float64
				if spec.Bandwidth && rng.IntN(2) == 0 {
					more = []float64{0, float64(10 * rng.IntN(6)), float64(10 * rng.IntN(4))}
				}
				st.Groups = append(st.Groups, Group{
					Tasks:    1 + int(rng.ExpFloat64()*spec.MeanTasks),
					Duration: math.Max(1, math.Round(rng.ExpFloat64()*spec.MeanDuration*10)/10),
					Demand:   Shape(sh[0], sh[1], more...),
				})
			}
			j.Stages = append(j.Stages, st)
		}
		jobs = append(jobs, j)
	}
	return jobs
}
