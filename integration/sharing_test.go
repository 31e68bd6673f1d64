package integration

import (
	"fmt"
	"io"
	"net/http"
	"strings"
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

// taskHistory lists every state each task of s went through, for a
// failure message.
func taskHistory(s *sched) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, u := range s.updates {
		fmt.Fprintf(&b, "%s=%s(%s %s) ", u.TaskID.Value, u.GetState(), u.GetReason(), u.GetMessage())
	}
	return b.String()
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
// equalises dominant shares (3 tasks each per agent, 6 each in all), FIFO
// serves the first framework until no task of the second fits (4 and 0 per
// agent). The agents join one at a time, each once the first has settled:
// with both in one cycle, DRF's progressive filling can pin each framework
// to its own agent (4 and 4: equal dominant shares, but a cpu-heavy agent
// and a mem-heavy one left with what neither can use), the placement
// artefact of DRF across machines that PS-DSF was designed to remove, and
// which of the two outcomes a run got would depend on whether the agents
// registered within one allocation interval.
func TestDemandVectorsShareBySorter(t *testing.T) {
	tests := []struct {
		sorter       string
		wantA, wantB int // per agent
	}{
		{"drf", 3, 3},
		{"fifo", 4, 0},
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
			for n := 1; n <= 2; n++ {
				c.AddAgent("cpus:4;mem:4096;disk:1000")
				waitShare(t, c, a, b, n*tc.wantA, n*tc.wantB)
			}
		})
	}
}

// waitShare waits until a and b run wantA and wantB tasks, and on timeout
// says what they ran and what the master held.
func waitShare(t *testing.T, c *cluster, a, b *sched, wantA, wantB int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for running(a) != wantA || running(b) != wantB {
		if time.Now().After(deadline) {
			var body []byte
			if raw, err := http.Get("http://" + c.MasterAddr + "/state"); err == nil {
				body, _ = io.ReadAll(raw.Body)
				raw.Body.Close()
			}
			t.Fatalf("timed out waiting for %d and %d running tasks: have %d and %d\na: %s\nb: %s\nmaster /state: %s",
				wantA, wantB, running(a), running(b), taskHistory(a), taskHistory(b), body)
		}
		time.Sleep(testcluster.PollInterval)
	}
}
