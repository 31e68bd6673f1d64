package sim_test

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/report"
	"github.com/allot-sched/allot/sim/trace"
	"github.com/allot-sched/allot/sorter"
)

// fixtureWorkloads are the fixtures the invariant tests run every policy on.
func fixtureWorkloads(t *testing.T) map[string]*sim.Workload {
	t.Helper()
	hetero, err := trace.ParseCluster("psdsf-hetero")
	if err != nil {
		t.Fatal(err)
	}
	bw, err := trace.ParseCluster("3xcpus=8,mem=16G,disk_bw=100,net_bw=50+2xcpus=4,mem=32G,disk_bw=60")
	if err != nil {
		t.Fatal(err)
	}
	small, err := trace.LoadJobsCSV("trace/testdata/small_jobs.csv")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*sim.Workload{
		"csv":       {Name: "csv", Jobs: small, Nodes: hetero},
		"online":    {Name: "online", Jobs: sim.OnlineJobs(sim.OnlineSpec{Queues: 2, JobsPerQueue: 3, TasksPerJob: 5, Seed: 3}), Nodes: hetero},
		"synthetic": {Name: "synthetic", Jobs: sim.SyntheticJobs(sim.SyntheticSpec{Jobs: 40, Frameworks: 5, MeanInterarrival: 2, Bandwidth: true, Seed: 7}), Nodes: bw},
	}
}

// allPolicies are every criterion under its usual agent selection plus the
// papers' combinations.
var allPolicies = []string{"drf", "tsf", "psdsf", "rpsdsf", "bf-drf", "psdsf/joint", "rpsdsf/joint", "fifo", "capacity", "tetris", "random"}

var bothModes = []allocator.Mode{allocator.Oblivious, allocator.Characterized}

func mustPolicy(t testing.TB, name string) sim.Policy {
	t.Helper()
	p, err := sim.ParsePolicy(name, sorter.RRR)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type groupKey struct {
	job          string
	stage, group int
}

// ledger is an Observer that checks, at every event, that no agent is
// over-allocated and that no stage starts before the previous one ended,
// and counts launches and finishes per task group.
type ledger struct {
	t         *testing.T
	launched  map[groupKey]int
	finished  map[groupKey]int
	stageDone map[string]int // job -> stages finished
	running   map[groupKey]int
	tasks     map[groupKey]int
	events    int
}

func newLedger(t *testing.T, w *sim.Workload) *ledger {
	l := &ledger{t: t, launched: map[groupKey]int{}, finished: map[groupKey]int{}, stageDone: map[string]int{}, running: map[groupKey]int{}, tasks: map[groupKey]int{}}
	for _, j := range w.Jobs {
		for si, s := range j.Stages {
			for gi, g := range s.Groups {
				l.tasks[groupKey{j.ID, si, gi}] = g.Tasks
			}
		}
	}
	return l
}

func reservableOf(v resources.Vector) resources.Vector {
	v[resources.DiskBW], v[resources.NetBW] = 0, 0
	return v
}

func (l *ledger) Observe(e sim.Event) {
	l.events++
	k := groupKey{e.Job, e.Stage, e.Group}
	if !reservableOf(e.AgentTotal).Contains(reservableOf(e.AgentUsed)) {
		l.t.Errorf("t=%v %s: agent %s over-allocated: uses %v of %v", e.Time, e.Kind, e.Agent, e.AgentUsed, e.AgentTotal)
	}
	switch e.Kind {
	case sim.EventLaunch:
		if e.Stage != l.stageDone[e.Job] {
			l.t.Errorf("t=%v: job %s launched stage %d while %d stages were done", e.Time, e.Job, e.Stage, l.stageDone[e.Job])
		}
		l.launched[k] += e.Tasks
		l.running[k] += e.Tasks
		if l.launched[k] > l.tasks[k] {
			l.t.Errorf("t=%v: %v launched %d tasks of %d", e.Time, k, l.launched[k], l.tasks[k])
		}
	case sim.EventFinish:
		l.finished[k] += e.Tasks
		if l.running[k] -= e.Tasks; l.running[k] < 0 {
			l.t.Errorf("t=%v: %v finished more tasks than ran", e.Time, k)
		}
		done := true
		for g := 0; ; g++ {
			n, ok := l.tasks[groupKey{e.Job, e.Stage, g}]
			if !ok {
				break
			}
			done = done && l.finished[groupKey{e.Job, e.Stage, g}] == n
		}
		if done {
			l.stageDone[e.Job]++
		}
	}
}

func TestConservationAndCapacity(t *testing.T) {
	for wname, w := range fixtureWorkloads(t) {
		for _, m := range bothModes {
			for _, pname := range allPolicies {
				t.Run(fmt.Sprintf("%s/%s/%s", wname, m, pname), func(t *testing.T) {
					p := mustPolicy(t, pname)
					if p.Check(m) != nil {
						t.Skip("combination rejected by the allocator")
					}
					l := newLedger(t, w)
					// Check cross-checks the allocator's books after every cycle.
					r, err := sim.Run(w, sim.Config{Policy: p, Mode: m, Seed: 5, Observer: l, Check: true})
					if err != nil {
						t.Fatal(err)
					}
					// every task of every job ran exactly once
					for k, n := range l.tasks {
						if l.launched[k] != n || l.finished[k] != n {
							t.Errorf("%v: %d tasks, %d launched, %d finished", k, n, l.launched[k], l.finished[k])
						}
					}
					if r.Jobs != len(w.Jobs) || r.Tasks != w.TotalTasks() {
						t.Errorf("result counts %d jobs / %d tasks, workload has %d / %d", r.Jobs, r.Tasks, len(w.Jobs), w.TotalTasks())
					}
					for _, j := range r.JobStats {
						if !(j.Arrive <= j.Start && j.Start < j.Finish && j.Finish <= r.Makespan) {
							t.Errorf("job %s: arrive %v start %v finish %v makespan %v", j.ID, j.Arrive, j.Start, j.Finish, r.Makespan)
						}
					}
					for k, u := range r.Utilization {
						if u < 0 || u > 1+1e-9 {
							t.Errorf("utilisation of %s is %v", k, u)
						}
					}
				})
			}
		}
	}
}

func TestSameSeedSameJSON(t *testing.T) {
	w := fixtureWorkloads(t)["synthetic"]
	run := func() []byte {
		var runs []*sim.Result
		for _, m := range bothModes {
			for _, pname := range []string{"drf", "psdsf", "random", "bf-drf"} {
				r, err := sim.Run(w, sim.Config{Policy: mustPolicy(t, pname), Mode: m, Seed: 42})
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, r)
			}
		}
		var b bytes.Buffer
		if err := report.WriteJSON(&b, runs); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := run(), run()
	if !bytes.Equal(a, b) {
		t.Fatalf("same seed, different JSON:\n%s\n---\n%s", a, b)
	}
}

func TestLowerBoundNeverExceedsMakespan(t *testing.T) {
	nodes, err := trace.ParseCluster("psdsf-hetero")
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 12; seed++ {
		spec := sim.SyntheticSpec{Jobs: 25, Frameworks: 4, MeanInterarrival: float64(seed % 4), MeanTasks: 6, Bandwidth: seed%2 == 0, Seed: seed}
		w := &sim.Workload{Jobs: sim.SyntheticJobs(spec), Nodes: nodes}
		for _, m := range bothModes {
			for _, pname := range []string{"drf", "psdsf", "bf-drf", "fifo"} {
				r, err := sim.Run(w, sim.Config{Policy: mustPolicy(t, pname), Mode: m, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				if r.FluidBound > r.Makespan+1e-6 || r.LowerBound > r.Makespan+1e-6 || r.FluidBound > r.LowerBound+1e-6 {
					t.Errorf("seed %d %s %s: fluid %v, lower %v, makespan %v", seed, pname, m, r.FluidBound, r.LowerBound, r.Makespan)
				}
				if r.LowerBoundRatio < 1-1e-6 {
					t.Errorf("seed %d %s %s: ratio %v < 1", seed, pname, m, r.LowerBoundRatio)
				}
			}
		}
	}
}

// A lone framework on an idle cluster meets the bound exactly: it is the
// same as the critical path and, for a full wave, the fluid bound.
func TestLowerBoundIsTightWhenItShouldBe(t *testing.T) {
	nodes, _ := trace.ParseCluster("2xcpus=4,mem=4096")
	w := &sim.Workload{Nodes: nodes, Jobs: []sim.Job{{ID: "a", Framework: "f", Stages: []sim.Stage{{Groups: []sim.Group{{Tasks: 8, Duration: 10, Demand: sim.Shape(1, 512)}}}}}}}
	for _, m := range bothModes {
		r, err := sim.Run(w, sim.Config{Policy: mustPolicy(t, "drf"), Mode: m})
		if err != nil {
			t.Fatal(err)
		}
		if r.Makespan != 10 || r.FluidBound != 10 || r.LowerBoundRatio != 1 {
			t.Errorf("%s: makespan %v fluid %v ratio %v; want 10, 10, 1", m, r.Makespan, r.FluidBound, r.LowerBoundRatio)
		}
		if r.Utilization["cpus"] != 1 || r.Utilization["mem"] != 0.5 {
			t.Errorf("%s: utilisation %v; want cpus 1, mem 0.5", m, r.Utilization)
		}
	}
}

func TestContentionSlowsBandwidthUsersInProportion(t *testing.T) {
	nodes, _ := trace.ParseCluster("cpus=8,mem=8192,disk_bw=100")
	job := func(id string, disk float64, dur float64) sim.Job {
		return sim.Job{ID: id, Framework: id, Stages: []sim.Stage{{Groups: []sim.Group{{Tasks: 1, Duration: dur, Demand: sim.Shape(1, 512, 0, disk)}}}}}
	}
	tests := []struct {
		name   string
		jobs   []sim.Job
		finish map[string]float64
	}{
		{"under capacity", []sim.Job{job("a", 50, 10), job("b", 50, 10)}, map[string]float64{"a": 10, "b": 10}},
		// 150 MB/s asked of 100: both run at 2/3 speed until a finishes
		// (10 s of work at 2/3 = 15 s); b then has 20-10 = 10 s left at
		// full speed: 25 s.
		{"over capacity", []sim.Job{job("a", 75, 10), job("b", 75, 20)}, map[string]float64{"a": 15, "b": 25}},
		// a task that uses no bandwidth is not slowed
		{"cpu-only neighbour", []sim.Job{job("a", 200, 10), job("c", 0, 10)}, map[string]float64{"a": 20, "c": 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &sim.Workload{Nodes: nodes, Jobs: tt.jobs}
			r, err := sim.Run(w, sim.Config{Policy: mustPolicy(t, "drf"), Mode: allocator.Characterized})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range r.JobStats {
				if want := tt.finish[j.ID]; math.Abs(j.Finish-want) > 1e-6 {
					t.Errorf("job %s finished at %v, want %v", j.ID, j.Finish, want)
				}
			}
		})
	}
}

func TestImpossibleJobIsReportedNotLoopedOn(t *testing.T) {
	nodes, _ := trace.ParseCluster("2xcpus=4,mem=4096+cpus=2,mem=16G")
	w := &sim.Workload{Nodes: nodes, Jobs: []sim.Job{
		{ID: "ok", Framework: "f", Stages: []sim.Stage{{Groups: []sim.Group{{Tasks: 1, Duration: 1, Demand: sim.Shape(1, 1024)}}}}},
		// fits no node: 4 cpus nodes have 4 GiB, the 16 GiB node 2 cpus
		{ID: "big", Framework: "f", Line: 3, Stages: []sim.Stage{{Groups: []sim.Group{{Tasks: 1, Duration: 1, Demand: sim.Shape(3, 8192), Line: 3}}}}},
	}}
	_, err := sim.Run(w, sim.Config{Policy: mustPolicy(t, "drf")})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"line 3", `"big"`, "larger than every node", "cpus:3;mem:8192"} {
		if !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
