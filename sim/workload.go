package sim

import (
	"fmt"
	"math"
	"strings"

	"github.com/allot-sched/allot/resources"
)

// Workload is what a simulation runs: jobs submitted over time to
// frameworks, and the nodes (agents) of the cluster.
type Workload struct {
	// Name says where the workload came from (a file, a trace, a generator).
	Name  string
	Jobs  []Job
	Nodes []Node
}

// Node is one agent. Total holds every well-known scalar it advertises,
// the advisory bandwidths disk_bw and net_bw included.
type Node struct {
	ID    string
	Total resources.Vector
	// Line is the nodes-file line the node came from (0 if generated).
	Line int
}

// Job is a unit of work whose completion time is measured: stages that run
// one after another, each made of groups of identical tasks that run
// concurrently.
type Job struct {
	ID string
	// Framework is the framework that runs the job. Several jobs may share a
	// framework; a framework serves its ready tasks first come, first served.
	Framework string
	// Role is the framework's role (its weight's name); empty means "*".
	Role string
	// Submit is when the job arrives, in seconds of virtual time.
	Submit float64
	// After, if set, names an earlier job (in slice order) that must finish
	// before this one is submitted; the job then arrives at
	// max(Submit, that job's finish). It models submission queues such as
	// the psdsf-online experiment's; the CSV format has no column for it.
	After  string
	Stages []Stage
	// Type is the job's type, which the co-location bandit learns per and
	// the interference model's profiles are keyed by; "" untyped.
	Type string
	// Line is the jobs-file line of the job's first row (0 if generated).
	Line int
	// AM, if not zero, is the job's application master (sim/am.go): a
	// container of this shape the job must hold before its first stage
	// becomes ready (for AMStartup seconds, the master's start-up) and
	// keeps until its last task finishes. It does no work: it is not one
	// of the job's tasks and not part of its size.
	AM        resources.Vector
	AMStartup float64
	// MapReduce, if not nil, is what the trace says about a MapReduce job
	// (SWIM): the features a size predictor may be given. The simulator
	// itself runs Stages only.
	MapReduce *MapReduce
}

// MapReduce describes a job read from a MapReduce trace (SWIM): its bytes
// and the per-job cost factors the trace model drew (see ReadSWIM).
type MapReduce struct {
	InputBytes, ShuffleBytes, OutputBytes float64
	// MapCost and ReduceCost multiply the byte-proportional part of the
	// job's map and reduce task times: 1 without TraceOptions.RateNoise.
	MapCost, ReduceCost float64
}

// Stage is a set of task groups that run concurrently; a job's next stage
// becomes ready only when every task of this one has finished.
type Stage struct{ Groups []Group }

// Group is a number of identical tasks.
type Group struct {
	Tasks int
	// Duration is each task's running time in seconds at full speed; a
	// task slowed by bandwidth contention takes longer (see Config).
	Duration float64
	// Demand is each task's resources. Its reservable part (cpus, mem, disk,
	// gpus) is what the allocator hands out; disk_bw and net_bw are never
	// reserved and only drive the contention model.
	Demand resources.Vector
	Line   int // jobs-file line (0 if generated)
}

// Tasks counts the task instances of the job.
func (j *Job) Tasks() int64 {
	var n int64
	for _, s := range j.Stages {
		for _, g := range s.Groups {
			n += int64(g.Tasks)
		}
	}
	return n
}

// TotalTasks counts every task instance of the workload.
func (w *Workload) TotalTasks() int64 {
	var n int64
	for i := range w.Jobs {
		n += w.Jobs[i].Tasks()
	}
	return n
}

// where names a job (and its line) for error messages.
func (j *Job) where(g *Group) string {
	line := j.Line
	if g != nil && g.Line > 0 {
		line = g.Line
	}
	if line > 0 {
		return fmt.Sprintf("line %d: job %q", line, j.ID)
	}
	return fmt.Sprintf("job %q", j.ID)
}

// Validate checks that the workload can run to completion: at least one
// node, unique ids, sane numbers, After naming an earlier job, and every
// task fitting on at least one node. An impossible job is reported here,
// by line, rather than left to wait forever.
func (w *Workload) Validate() error {
	if len(w.Nodes) == 0 {
		return fmt.Errorf("workload %s: no nodes", w.Name)
	}
	nodeIDs := make(map[string]bool, len(w.Nodes))
	var largest []resources.Vector // distinct reservable node shapes
	seenShape := map[resources.Vector]bool{}
	for _, n := range w.Nodes {
		if n.ID == "" {
			return fmt.Errorf("node with empty id")
		}
		if nodeIDs[n.ID] {
			return fmt.Errorf("node %q: duplicate id", n.ID)
		}
		nodeIDs[n.ID] = true
		r := reservable(n.Total)
		if r == (resources.Vector{}) {
			return fmt.Errorf("node %q has no cpus or mem", n.ID)
		}
		if !seenShape[r] {
			seenShape[r] = true
			largest = append(largest, r)
		}
	}
	jobIDs := make(map[string]int, len(w.Jobs))
	for i := range w.Jobs {
		j := &w.Jobs[i]
		if j.ID == "" {
			return fmt.Errorf("job %d: empty id", i)
		}
		if _, dup := jobIDs[j.ID]; dup {
			return fmt.Errorf("%s: duplicate job id", j.where(nil))
		}
		jobIDs[j.ID] = i
		if j.Framework == "" {
			return fmt.Errorf("%s: empty framework", j.where(nil))
		}
		if j.Submit < 0 || math.IsNaN(j.Submit) || math.IsInf(j.Submit, 0) {
			return fmt.Errorf("%s: submit time %v must be a finite number >= 0", j.where(nil), j.Submit)
		}
		if j.After != "" {
			if _, ok := jobIDs[j.After]; !ok || j.After == j.ID {
				return fmt.Errorf("%s: runs after %q, which is not an earlier job", j.where(nil), j.After)
			}
		}
		if len(j.Stages) == 0 {
			return fmt.Errorf("%s: no tasks", j.where(nil))
		}
		for si := range j.Stages {
			if len(j.Stages[si].Groups) == 0 {
				return fmt.Errorf("%s: stage %d has no tasks", j.where(nil), si+1)
			}
			for gi := range j.Stages[si].Groups {
				g := &j.Stages[si].Groups[gi]
				if g.Tasks < 1 {
					return fmt.Errorf("%s: %d tasks; want at least 1", j.where(g), g.Tasks)
				}
				if !(g.Duration > 0) || math.IsInf(g.Duration, 0) {
					return fmt.Errorf("%s: task duration %v s; want a positive number", j.where(g), g.Duration)
				}
				d := reservable(g.Demand)
				if d[resources.CPUs] == 0 && d[resources.Mem] == 0 {
					return fmt.Errorf("%s: a task must ask for cpus or mem (asks %s)", j.where(g), fmtVec(g.Demand))
				}
				fits := false
				for _, c := range largest {
					if c.Contains(d) {
						fits = true
						break
					}
				}
				if !fits {
					return &ImpossibleJobError{Job: j.ID, Line: j.where(g), Task: g.Demand, Nodes: largest}
				}
			}
		}
	}
	return nil
}

// ImpossibleJobError reports a job with a task larger than every node: it
// could never run, so the simulation refuses to start rather than wait.
type ImpossibleJobError struct {
	Job   string
	Line  string
	Task  resources.Vector
	Nodes []resources.Vector // the distinct node shapes
}

func (e *ImpossibleJobError) Error() string {
	shapes := make([]string, 0, len(e.Nodes))
	for i, n := range e.Nodes {
		if i == 4 {
			shapes = append(shapes, fmt.Sprintf("and %d more", len(e.Nodes)-4))
			break
		}
		shapes = append(shapes, fmtVec(n))
	}
	return fmt.Sprintf("%s can never run: its task %s is larger than every node (%s)",
		e.Line, fmtVec(e.Task), strings.Join(shapes, ", "))
}

// reservable drops the advisory bandwidths: what the allocator hands out.
func reservable(v resources.Vector) resources.Vector {
	v[resources.DiskBW], v[resources.NetBW] = 0, 0
	return v
}

func fmtVec(v resources.Vector) string { return resources.Resources{Scalars: v}.String() }

// quantity converts a non-negative float to fixed point, for generators
// whose values are known to be sane.
func quantity(v float64) resources.Quantity {
	q, err := resources.QuantityFromFloat(v)
	if err != nil {
		panic(fmt.Sprintf("sim: quantity %v: %v", v, err))
	}
	return q
}

// Shape builds a vector from whole units: cpus, mem (MB) and, in
// order, any of gpus, disk_bw, net_bw.
func Shape(cpus, memMB float64, more ...float64) resources.Vector {
	var v resources.Vector
	v[resources.CPUs] = quantity(cpus)
	v[resources.Mem] = quantity(memMB)
	kinds := []resources.Kind{resources.GPUs, resources.DiskBW, resources.NetBW}
	for i, x := range more {
		if i < len(kinds) {
			v[kinds[i]] = quantity(x)
		}
	}
	return v
}
