package integration

import (
	"net"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/agent/nslaunch"
	"github.com/allot-sched/allot/internal/testcluster"
	"github.com/allot-sched/allot/internal/testimage"
)

// TestCNITaskGroup runs a pod, as Mesos's default executor does: a task
// group whose executor names the test's CNI network, one task on the
// host's filesystem serving HTTP on port 8080, the other in an image (from
// a registry the test serves) that prints the image's marker and fetches
// the page from 127.0.0.1:8080. Both tasks have the same address on the
// network, in their updates and on their eth0, and reach each other on
// localhost; the image task's host volume, written inside, is read
// outside; the group outlives a restart of its agent; once it is over, its namespace and rootfs are gone.
func TestCNITaskGroup(t *testing.T) {
	if !testcluster.InOwnNetNS(t) {
		return
	}
	if why := nslaunch.Check(); why != "" {
		t.Skip("no containers on this host: " + why)
	}
	reg := testimage.StartRegistry(t, "", "")
	ref := reg.Push(t, "test/busybox:1", testimage.Busybox(t, "pod-image-marker", 0))
	c, ipam := cniCluster(t)
	fw := subscribe(t, c.MasterAddr, checkpointing("pod"))
	o := fw.takeOffer(t, "")
	mt := mesos.ContainerInfo_MESOS
	ex := mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "pod-ex"}, Type: mesos.ExecutorInfo_DEFAULT,
		Resources: []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 32)},
		Container: &mesos.ContainerInfo{Type: &mt, NetworkInfos: []mesos.NetworkInfo{{Name: strPtr("testnet")}}}}
	const showIP = "/bin/busybox ip -4 addr show eth0 | /bin/busybox grep -o 'inet [0-9.]*'"
	server := cmdTask("pod-server", o, "mkdir -p www && echo hello-pod > www/index.html && echo server $("+showIP+") && exec /bin/busybox httpd -f -p 8080 -h www", 0.1, 32)
	client := imageTask("pod-client", o, ref, "cat /marker.txt; echo; echo client $("+showIP+"); "+
		"i=0; while [ $i -lt 600 ]; do wget -q -O - http://127.0.0.1:8080/index.html && exit 0; i=$((i+1)); sleep 0.1; done; exit 1")
	// A host volume of the image task's own, written inside, read outside.
	outDir := t.TempDir()
	client.Container.Volumes = []mesos.Volume{{ContainerPath: "/out", HostPath: &outDir, Mode: mesos.RW.Enum()}}
	client.Command.Value = strPtr("echo from-the-pod > /out/file; " + client.Command.GetValue())
	if err := fw.call(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ex, server, client)}.WithOffers(o.ID))); err != nil {
		t.Fatal(err)
	}
	defer logPodOnFailure(t, c, fw)
	running := fw.waitState(t, "pod-server", mesos.TASK_RUNNING)
	end := fw.waitTerminal(t, "pod-client")
	out := taskStdout(c.Agents[0].Dir, "pod-ex")
	t.Logf("the group's stdout:\n%s", out)
	if end.GetState() != mesos.TASK_FINISHED {
		t.Fatalf("pod-client: %v %v %q, want TASK_FINISHED", end.GetState(), end.GetReason(), end.GetMessage())
	}
	cs := running.GetContainerStatus()
	if cs == nil || len(cs.NetworkInfos) != 1 || len(cs.NetworkInfos[0].IPAddresses) != 1 {
		t.Fatalf("pod-server's RUNNING container_status = %+v, want one address", cs)
	}
	ip := cs.NetworkInfos[0].IPAddresses[0].GetIPAddress()
	for _, want := range []string{"pod-image-marker", "hello-pod", "server inet " + ip + "\n", "client inet " + ip + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the group's stdout lacks %q", want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outDir, "file")); string(b) != "from-the-pod\n" {
		t.Errorf("the image task's host volume holds %q, want from-the-pod", b)
	}
	if !regexp.MustCompile(`^10\.79\.0\.\d+$`).MatchString(ip) {
		t.Errorf("the group's address %q, want one on testnet (10.79.0.0/24)", ip)
	}
	// kill -9 the agent and start it again: the group keeps its network,
	// and the restarted agent releases the group's containers (the image
	// task's rootfs included) when it ends.
	a := c.Agents[0]
	a.Kill(syscall.SIGKILL)
	c.StartAgent(a)
	waitAgentRegistered(t, a.Addr)
	if got := httpGet("http://" + net.JoinHostPort(ip, "8080") + "/index.html"); got != "hello-pod" {
		t.Errorf("after the agent's restart, at the group's address: %q, want hello-pod", got)
	}
	if err := fw.call(calls.Kill("pod-server", o.AgentID.Value)); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "pod-server", mesos.TASK_KILLED)
	testcluster.WaitFor(t, 30*time.Second, "the group's network namespace and address lease to go", func() bool {
		ns, err := os.ReadDir(filepath.Join(c.Agents[0].Dir, "cni", "containers"))
		leases, _ := filepath.Glob(filepath.Join(ipam, "testnet", "10.79.*"))
		return err == nil && len(ns) == 0 && len(leases) == 0
	})
	containersReleased(t, c.Agents[0].Dir)
}

// The tasks of a group with containers run as the group's user (here the
// framework's, nobody), the one in an image and the one on the host alike,
// although the executor that makes their containers runs as root.
func TestTaskGroupUser(t *testing.T) {
	if why := userMissing(); why != "" {
		t.Skip("skipping task user test: " + why)
	}
	if why := nslaunch.Check(); why != "" {
		t.Skip("no containers on this host: " + why)
	}
	nobody, _ := user.Lookup("nobody")
	reg := testimage.StartRegistry(t, "", "")
	ref := reg.Push(t, "test/busybox:1", testimage.Busybox(t, "user-marker", 0))
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1, AgentFlags: agentFlags})}
	unmountOnCleanup(t, c.Agents[0].Dir)
	openToOthers(t, allotBin, c.Dir)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "pod-user", User: nobody.Username})
	o := fw.takeOffer(t, "")
	ex := mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "pod-ex"}, Type: mesos.ExecutorInfo_DEFAULT,
		Resources: []mesos.Resource{scalar("cpus", 0.1), scalar("mem", 32)}}
	boxed := imageTask("boxed", o, ref, "id -u > boxed.uid")
	host := cmdTask("host", o, "id -u > host.uid", 0.1, 32)
	if err := fw.call(calls.Accept(calls.OfferOperations{calls.OpLaunchGroup(ex, boxed, host)}.WithOffers(o.ID))); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"boxed", "host"} {
		if st := fw.waitTerminal(t, id); st.GetState() != mesos.TASK_FINISHED {
			t.Fatalf("%s: %v %v %q", id, st.GetState(), st.GetReason(), st.GetMessage())
		}
		m, _ := filepath.Glob(filepath.Join(c.Agents[0].Dir, "slaves", "*", "frameworks", "*", "executors", "pod-ex", "runs", "*", id+".uid"))
		var got []byte
		if len(m) == 1 {
			got, _ = os.ReadFile(m[0])
		}
		if strings.TrimSpace(string(got)) != nobody.Uid {
			t.Errorf("%s ran as uid %q, want %s (nobody)", id, got, nobody.Uid)
		}
	}
	containersReleased(t, c.Agents[0].Dir)
}

// logPodOnFailure logs the pod executor's stderr and the framework's
// updates when the test failed.
func logPodOnFailure(t *testing.T, c *cluster, fw *sched) {
	if !t.Failed() {
		return
	}
	errs, _ := filepath.Glob(filepath.Join(c.Agents[0].Dir, "slaves", "*", "frameworks", "*", "executors", "pod-ex", "runs", "*", "stderr"))
	for _, p := range errs {
		b, _ := os.ReadFile(p)
		t.Logf("the executor's stderr:\n%s", b)
	}
	fw.mu.Lock()
	for _, u := range fw.updates {
		t.Logf("update: %s %v %v %q", u.TaskID.Value, u.GetState(), u.GetReason(), u.GetMessage())
	}
	fw.mu.Unlock()
}
