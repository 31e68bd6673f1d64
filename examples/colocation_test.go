package examples

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/internal/testcluster"
)

func getJSONInto(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// banditPrefs reads the bandit's preferences from the policy endpoint
// (master.PolicyPath; allot operator policy show prints the same).
func banditPrefs(t testing.TB, addr string) (types []string, rowN map[string]int64) {
	t.Helper()
	var view struct {
		Models []struct {
			Name  string          `json:"name"`
			State json.RawMessage `json:"state"`
		} `json:"models"`
	}
	if err := getJSONInto("http://"+addr+"/api/v1/allot/policy", &view); err != nil {
		t.Fatal(err)
	}
	for _, m := range view.Models {
		if m.Name != "bandit" {
			continue
		}
		var st struct {
			Prefs struct {
				Types []string `json:"types"`
				RowN  []int64  `json:"row_n"`
			} `json:"prefs"`
		}
		if err := json.Unmarshal(m.State, &st); err != nil {
			t.Fatalf("bandit state %s: %v", m.State, err)
		}
		rowN = map[string]int64{}
		for i, ty := range st.Prefs.Types {
			rowN[ty] = st.Prefs.RowN[i]
		}
		return st.Prefs.Types, rowN
	}
	t.Fatalf("no bandit model in the policy view")
	return nil, nil
}

// TestColocationBanditSignalPath runs the co-location bandit's signal path
// with real processes: a master with --sorter bandit, one agent
// of 2 cpus advertising disk_bw and reporting usage every second, two
// disk-bound jobs (direct I/O) and then a cpu-bound one from
// examples/colojob, each naming its type with the allot.job_type label.
// It checks that /state shows the types and the agent's usage rates with
// I/O wait, and that the usage reached the allocator and credited the
// co-location: the row of the resident type (disk) has updates, and both
// types are in the learned matrix.
//
// It does not check which way the preference moved: on a shared machine
// the goodness of one co-location depends on everything else running
// there (host CPU is counted whole, and iowait is only counted while a CPU
// is idle), so the direction is not deterministic enough for CI;
// tools/colocation-live.sh measures it.
func TestColocationBanditSignalPath(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{
		Bin:         bins["allot"],
		MasterFlags: []string{"--log-level", "warn", "--sorter", "bandit", "--mode", "characterized"},
		AgentFlags:  []string{"--usage-interval", "1s", "--log-level", "warn"},
	})
	c.AddAgent("cpus:2;mem:1024;disk:2000;disk_bw:200;net_bw:100;ports:[31000-31010]")
	c.WaitAgents(1)
	submit := func(typ, units, min string) *testcluster.Proc {
		return testcluster.Start(t, "colojob "+typ, nil, bins["colojob"], "submit", "--master", c.MasterAddr,
			"--type", typ, "--units", units, "--min", min, "--timeout", "90s")
	}
	state := func() operator.State {
		var st operator.State
		getJSONInto("http://"+c.MasterAddr+"/state", &st)
		return st
	}
	runningCount := func(typ string) int {
		n := 0
		for _, f := range state().Frameworks {
			for _, tk := range f.Tasks {
				if f.JobType == typ && tk.State == "TASK_RUNNING" {
					n++
				}
			}
		}
		return n
	}
	running := func(typ string) bool { return runningCount(typ) > 0 }
	// Both cpus busy with disk jobs first, so the cpu job queues: it has
	// declared its demand (REQUEST) before a cpu frees, and is then drawn
	// beside the remaining disk job. (A framework offered resources before
	// its REQUEST arrives is served by the whole-agent path, not drawn.)
	disk := submit("disk", "32", "14s")
	testcluster.WaitFor(t, 30*time.Second, "the long disk job (job_type disk in /state) to run", func() bool { return running("disk") })
	short := submit("disk", "32", "3s")
	testcluster.WaitFor(t, 30*time.Second, "both disk jobs to run", func() bool { return runningCount("disk") == 2 })
	cpu := submit("cpu", "5", "6s")
	testcluster.WaitFor(t, 30*time.Second, "the cpu job to run beside the long disk job", func() bool { return running("cpu") })
	testcluster.WaitFor(t, 10*time.Second, "usage rates with iowait in /state", func() bool {
		st := state()
		// Rates carry iowait whenever they are present.
		return len(st.Slaves) == 1 && st.Slaves[0].Rates != nil
	})
	for _, p := range []*testcluster.Proc{cpu, short, disk} {
		select {
		case <-p.Done():
		case <-time.After(90 * time.Second):
			t.Fatalf("%s did not finish", p.Name)
		}
		if err := p.Err(); err != nil {
			t.Fatalf("%s: %v\n%s", p.Name, err, p.Out.String())
		}
	}
	types, rowN := banditPrefs(t, c.MasterAddr)
	if !slices.Contains(types, "cpu") || !slices.Contains(types, "disk") {
		t.Fatalf("learned matrix over %v, want cpu and disk", types)
	}
	if rowN["disk"] < 1 {
		t.Fatalf("updates per row %v: the disk row (cpu drawn beside disk) has none, so usage did not credit the co-location", rowN)
	}
}
