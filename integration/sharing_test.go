package integration

import (
	"fmt"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// greedy accepts every offer of s, launching as many tasks of the given
// shape as fit, until stop is closed.
func greedy(t *testing.T, s *sched, prefix string, cpus, mem float64, stop chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	n := 0
	for {
		select {
		case <-stop:
			return
		default:
		}
		s.mu.Lock()
		offers := s.offers
		s.offers = nil
		s.mu.Unlock()
		for _, o := range offers {
			var haveC, haveM float64
			for _, r := range o.Resources {
				switch r.Name {
				case "cpus":
					haveC += r.GetScalar().GetValue()
				case "mem":
					haveM += r.GetScalar().GetValue()
				}
			}
			var tasks []mesos.TaskInfo
			for haveC >= cpus-1e-9 && haveM >= mem-1e-9 {
				n++
				tasks = append(tasks, cmdTask(fmt.Sprintf("%s-%d", prefix, n), o, "sleep 120", cpus, mem))
				haveC -= cpus
				haveM -= mem
			}
			// No refuse filters: a filter would keep what is left over from
			// this framework for seconds and hand it to the other, so the
			// outcome would depend on timing rather than on the sorter.
			if len(tasks) == 0 {
				s.call(calls.Decline(o.ID).With(calls.RefuseSeconds(0)))
				continue
			}
			if err := s.call(launch(o, tasks...).With(calls.RefuseSeconds(0))); err != nil {
				t.Errorf("%s: ACCEPT: %v", prefix, err)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func running(s *sched) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := map[string]mesos.TaskState{}
	for _, u := range s.updates {
		last[u.TaskID.Value] = u.GetState()
	}
	n := 0
	for _, st := range last {
		if st == mesos.TASK_RUNNING {
			n++
		}
	}
	return n
}

// Two frameworks with different per-task demand vectors, declared with
// REQUEST, share two agents in characterized mode as the sorter says: DRF
// equalises dominant shares (6 tasks each), FIFO serves the first framework
// until no task of the second fits (8 and 0).
func TestDemandVectorsShareBySorter(t *testing.T) {
	tests := []struct {
		sorter string
		wantA  int
		wantB  int
	}{
		{"drf", 6, 6},
		{"fifo", 8, 0},
	}
	for _, tc := range tests {
		t.Run(tc.sorter, func(t *testing.T) {
			c := newCluster(t, 0, "--mode", "characterized", "--sorter", tc.sorter)
			a := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "cpu-heavy"})
			b := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "mem-heavy"})
			if err := a.call(calls.Request(mesos.Request{Resources: []mesos.Resource{scalar("cpus", 1), scalar("mem", 256)}})); err != nil {
				t.Fatal(err)
			}
			if err := b.call(calls.Request(mesos.Request{Resources: []mesos.Resource{scalar("cpus", 0.25), scalar("mem", 1024)}})); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(2)
			go greedy(t, a, "a", 1, 256, stop, &wg)
			go greedy(t, b, "b", 0.25, 1024, stop, &wg)
			defer func() { close(stop); wg.Wait() }()
			c.AddAgent("cpus:4;mem:4096;disk:1000")
			c.AddAgent("cpus:4;mem:4096;disk:1000")
			testcluster.WaitFor(t, 60*time.Second, fmt.Sprintf("%d and %d running tasks", tc.wantA, tc.wantB), func() bool {
				return running(a) == tc.wantA && running(b) == tc.wantB
			})
		})
	}
}
