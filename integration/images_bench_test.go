package integration

import (
	"fmt"
	"sort"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/agent/nslaunch"
	"github.com/allot-sched/allot/internal/testcluster"
	"github.com/allot-sched/allot/internal/testimage"
)

// BenchmarkLaunchContainer measures what an image costs a command task's
// launch: one master and one agent (its default isolation), one framework
// that launches one task at a time, `true` on the host ("plain") or in the
// test busybox image, pulled once before the timer starts ("cached-image":
// the rootfs is still assembled for each task). Each op is one task; it
// reports the p50 and p99 time from ACCEPT to the executor's TASK_FINISHED
// (its timestamp), which leaves out the wait for the next offer.
// "as-nobody" is "plain" run as the user nobody (where the host has it):
// on cgroup v1 its executor joins its cgroups through the launcher.
//
//	go test ./integration -run '^$' -bench LaunchContainer -benchtime 50x
func BenchmarkLaunchContainer(b *testing.B) {
	if why := nslaunch.Check(); why != "" {
		b.Skip("no containers on this host: " + why)
	}
	reg := testimage.StartRegistry(b, "", "")
	ref := reg.Push(b, "bench/busybox:1", testimage.Busybox(b, "bench", 0))
	c := &cluster{testcluster.New(b, testcluster.Config{Bin: allotBin, Agents: 1,
		MasterFlags: []string{"--log-level", "info", "--allocation-interval", "20ms"}, AgentFlags: agentFlags})}
	unmountOnCleanup(b, c.Agents[0].Dir)
	names := []string{"plain", "cached-image"}
	if userMissing() == "" {
		openToOthers(b, allotBin, c.Dir)
		names = append(names, "as-nobody")
	}
	fw := subscribe(b, c.MasterAddr, mesos.FrameworkInfo{Name: "bench"})
	task := map[string]func(id string, o mesos.Offer) mesos.TaskInfo{
		"plain":        func(id string, o mesos.Offer) mesos.TaskInfo { return cmdTask(id, o, "true", 0.1, 32) },
		"cached-image": func(id string, o mesos.Offer) mesos.TaskInfo { return imageTask(id, o, ref, "true") },
		"as-nobody": func(id string, o mesos.Offer) mesos.TaskInfo {
			ti, nobody := cmdTask(id, o, "true", 0.1, 32), "nobody"
			ti.Command.User = &nobody
			return ti
		},
	}
	run := func(b *testing.B, name, id string) time.Duration {
		o := fw.takeOfferFits(b, 0.1, 32)
		t0 := time.Now()
		if err := fw.call(launch(o, task[name](id, o))); err != nil {
			b.Fatal(err)
		}
		st := fw.waitTerminal(b, id)
		if st.GetState() != mesos.TASK_FINISHED {
			b.Fatalf("%s: %v %q", id, st.GetState(), st.GetMessage())
		}
		return time.Unix(0, int64(st.GetTimestamp()*1e9)).Sub(t0)
	}
	run(b, "cached-image", "warm") // the pull happens here, untimed
	// Task ids stay unique across the sub-benchmarks' rounds.
	n := 0
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			var took []time.Duration
			for i := 0; i < b.N; i++ {
				n++
				took = append(took, run(b, name, fmt.Sprintf("%s-%d", name, n)))
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
	containersReleased(b, c.Agents[0].Dir)
}
