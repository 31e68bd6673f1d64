package integration

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/agent/nslaunch"
	"github.com/allot-sched/allot/internal/testcluster"
	"github.com/allot-sched/allot/internal/testimage"
)

// storeStats is the agent's /state container_images.store.
func storeStats(t *testing.T, addr string) map[string]any {
	t.Helper()
	doc, err := agentState(addr)
	if err != nil {
		t.Fatal(err)
	}
	ci, _ := doc["container_images"].(map[string]any)
	st, _ := ci["store"].(map[string]any)
	return st
}

// `allot prune-images AGENT` (PRUNE_IMAGES on the agent the master names)
// empties the agent's image store but for the image of a live container
// and an excluded one; once that container is gone, a second prune leaves
// the store empty. The tasks pulled their images from a registry the test
// serves.
func TestPruneImages(t *testing.T) {
	if why := nslaunch.Check(); why != "" {
		t.Skip("no containers on this host: " + why)
	}
	reg := testimage.StartRegistry(t, "", "")
	refs := map[string]string{}
	for _, n := range []string{"a", "b", "c"} {
		refs[n] = reg.Push(t, "test/"+n+":1", testimage.Busybox(t, "prune-"+n, 0))
	}
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 0, AgentFlags: agentFlags})}
	a := c.AddAgent(testcluster.DefaultResources)
	unmountOnCleanup(t, a.Dir)
	c.WaitAgents(1)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "prune"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, imageTask("ta", o, refs["a"], "true"), imageTask("tc", o, refs["c"], "true"),
		imageTask("tb", o, refs["b"], "sleep 300"))); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ta", "tc"} {
		if st := fw.waitTerminal(t, id); st.GetState() != mesos.TASK_FINISHED {
			t.Fatalf("%s: %v %q", id, st.GetState(), st.GetMessage())
		}
	}
	fw.waitState(t, "tb", mesos.TASK_RUNNING)
	if st := storeStats(t, a.Addr); st["images"] != 3.0 {
		t.Fatalf("agent store before pruning: %v, want the 3 images", st)
	}
	agentID := o.AgentID.Value
	prune := func(args ...string) string {
		out, err := exec.Command(allotBin, append([]string{"prune-images", agentID, "--master", c.MasterAddr}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("allot prune-images: %v\n%s", err, out)
		}
		return string(out)
	}
	// ta's and tc's containers are released once their executors have
	// exited, which may come a little after their updates.
	var st map[string]any
	testcluster.WaitFor(t, 30*time.Second, "prune to leave b (in use) and c (excluded)", func() bool {
		prune("--exclude", refs["c"])
		st = storeStats(t, a.Addr)
		return st["images"] == 2.0
	})
	before := st["layers"].(float64)
	if err := fw.call(calls.Kill("tb", agentID)); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "tb", mesos.TASK_KILLED)
	var out string
	testcluster.WaitFor(t, 30*time.Second, "prune to empty the store", func() bool {
		out = prune()
		st = storeStats(t, a.Addr)
		return st["images"] == 0.0 && st["layers"] == 0.0 && st["bytes"] == 0.0
	})
	if !strings.Contains(out, "agent "+agentID+": images no live container uses pruned") || before == 0 {
		t.Errorf("prune-images printed %q; %v layers before", out, before)
	}
	containersReleased(t, a.Dir)
}

// A task in an image on a CNI network: `allot task` and the UI's task
// page show its image and its address, as /state's container and
// container_status.network_infos carry them.
func TestWebUITaskContainer(t *testing.T) {
	if !testcluster.InOwnNetNS(t) {
		return
	}
	if why := nslaunch.Check(); why != "" {
		t.Skip("no containers on this host: " + why)
	}
	ctx := browser(t)
	reg := testimage.StartRegistry(t, "", "")
	ref := reg.Push(t, "test/busybox:1", testimage.Busybox(t, "ui-container", 0))
	c, _ := cniCluster(t)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "ui-container"})
	o := fw.takeOffer(t, "")
	boxed := imageTask("boxed", o, ref, "sleep 300")
	boxed.Container.NetworkInfos = []mesos.NetworkInfo{{Name: strPtr("testnet")}}
	if err := fw.call(launch(o, boxed)); err != nil {
		t.Fatal(err)
	}
	st := fw.waitState(t, "boxed", mesos.TASK_RUNNING)
	ip := st.GetContainerStatus().GetNetworkInfos()[0].IPAddresses[0].GetIPAddress()
	testcluster.WaitFor(t, 30*time.Second, "/state to show boxed's address", func() bool { return stateShowsAddress(c, "boxed", ip) })
	out, err := exec.Command(allotBin, "task", "boxed", "--master", c.MasterAddr).CombinedOutput()
	if err != nil || !strings.Contains(string(out), ref) || !strings.Contains(string(out), "testnet/"+ip) {
		t.Errorf("allot task boxed: %v\n%s\nwant the image %s and testnet/%s", err, out, ref, ip)
	}
	base := "http://" + c.MasterAddr
	run(t, ctx, "the task page shows the image and the address", chromedp.Navigate(base+"/task?id=boxed&framework="+fw.ID()),
		waitIn("#task-image", ref), waitIn("#task-addresses", "testnet/"+ip))
	shot(t, ctx, "task-container")
	if err := fw.call(calls.Kill("boxed", o.AgentID.Value)); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "boxed", mesos.TASK_KILLED)
	containersReleased(t, c.Agents[0].Dir)
}

// checkTaskGPU checks that `allot task id` shows the one GPU the task
// holds by the UUID its agent reports.
func checkTaskGPU(t *testing.T, master, id, uuid string) {
	t.Helper()
	out, err := exec.Command(allotBin, "task", id, "--master", master).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "GPUS       1 ("+uuid+")") {
		t.Errorf("allot task %s: %v\n%s\nwant GPUS 1 (%s)", id, err, out, uuid)
	}
}
