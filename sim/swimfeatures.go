package sim

import "github.com/allot-sched/allot/framework/predict/jobsize"

// The rates and containers of the SWIM MapReduce model (sim/trace derives
// a job's tasks from its bytes with them; SWIMFeatures reads them back).
const (
	SWIMMapRate     = 20e6 // map input, bytes per second
	SWIMShuffleRate = 10e6 // reduce fetch, bytes per second
	SWIMOutputRate  = 20e6 // reduce output, bytes per second
	SWIMMapMemMB    = 1024
	SWIMReduceMemMB = 2048
	BytesPerMB      = 1e6
)

// SWIMFeatures returns what FSPY's predictor is given for a job read from a
// SWIM trace, and what the job will measure when it finishes. The features
// are those a perfect probe would report under the SWIM model (sim/trace):
// function times are the byte-proportional parts of the task times (the
// job's cost factors included, the 5 s per-task startup not), map output is
// the shuffle, reduce output the output; SWIM has no record counts, so
// those are 0 and the regression drops their terms. A simulated probe adds
// its own sampling error on top. ok is false for a job not read from SWIM.
func SWIMFeatures(j *Job) (f jobsize.JobFeatures, actual jobsize.Actual, ok bool) {
	mr := j.MapReduce
	if mr == nil || len(j.Stages) == 0 || len(j.Stages[0].Groups) != 1 {
		return f, actual, false
	}
	m := j.Stages[0].Groups[0]
	f = jobsize.JobFeatures{
		ID: j.ID, MapTasks: m.Tasks, MapMemMB: SWIMMapMemMB, ReduceMemMB: SWIMReduceMemMB,
		InputMB:        mr.InputBytes / BytesPerMB,
		MapFuncSeconds: mr.InputBytes / SWIMMapRate * mr.MapCost,
		MapOutputMB:    mr.ShuffleBytes / BytesPerMB,
	}
	actual.MapSeconds = float64(m.Tasks) * m.Duration
	if len(j.Stages) > 1 {
		r := j.Stages[1].Groups[0]
		f.ReduceTasks = r.Tasks
		f.ReduceFuncSeconds = (mr.ShuffleBytes/SWIMShuffleRate + mr.OutputBytes/SWIMOutputRate) * mr.ReduceCost
		f.ReduceOutputMB = mr.OutputBytes / BytesPerMB
		actual.ReduceSeconds = float64(r.Tasks) * r.Duration
	}
	return f, actual, true
}
