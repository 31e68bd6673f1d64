package sim

import (
	"testing"

	"github.com/allot-sched/allot/allocator"
)

// amJob: an AM of 1 cpu / 2048 MB starting in 5 s, then tasks of 1 cpu /
// 1024 MB for 10 s.
func amJob(id string, tasks int, am bool) Job {
	j := Job{ID: id, Framework: id, Stages: []Stage{{Groups: []Group{{Tasks: tasks, Duration: 10, Demand: Shape(1, 1024)}}}}}
	if am {
		j.AM, j.AMStartup = Shape(1, 2048), 5
	}
	return j
}

func TestApplicationMasters(t *testing.T) {
	node := []Node{{ID: "n", Total: Shape(8, 8192)}}
	cases := []struct {
		name    string
		jobs    []Job
		share   float64
		wantJCT []float64
	}{
		{"no AM", []Job{amJob("a", 6, false)}, 0, []float64{10}},
		// the tasks wait for the AM's start-up
		{"AM start-up", []Job{amJob("a", 6, true)}, 0, []float64{15}},
		// the AM's 2048 MB leave room for six 1024 MB tasks, not eight
		{"AM holds memory", []Job{amJob("a", 8, true)}, 0, []float64{25}},
		// a cap of one AM: b is admitted when a ends at 15
		{"admission cap", []Job{amJob("a", 1, true), amJob("b", 1, true)}, 0.25, []float64{15, 30}},
		{"no cap", []Job{amJob("a", 1, true), amJob("b", 1, true)}, -1, []float64{15, 15}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Run(&Workload{Jobs: c.jobs, Nodes: node}, Config{Mode: allocator.Characterized, AMShare: c.share, Check: true})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range c.wantJCT {
				st := r.JobStats[i]
				if st.JCT() != want {
					t.Errorf("job %s took %v s, want %v", st.ID, st.JCT(), want)
				}
				if st.Tasks != int64(c.jobs[i].Stages[0].Groups[0].Tasks) {
					t.Errorf("job %s counts %d tasks: the AM is not one of them", st.ID, st.Tasks)
				}
			}
		})
	}
}
