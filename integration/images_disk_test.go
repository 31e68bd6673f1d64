package integration

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/agent/nslaunch"
	"github.com/allot-sched/allot/internal/testcluster"
	"github.com/allot-sched/allot/internal/testimage"
)

// A task in an image allocated 10 MB of disk that writes 50 MB to its own
// layer (outside its sandbox and volumes) is killed by disk/du with
// REASON_CONTAINER_LIMITATION_DISK, as one writing to its sandbox is: in
// an overlay upper directory, and in a copied rootfs.
func TestContainerLayerDiskQuota(t *testing.T) {
	if why := nslaunch.Check(); why != "" {
		t.Skip("no containers on this host: " + why)
	}
	reg := testimage.StartRegistry(t, "", "")
	ref := reg.Push(t, "test/busybox:1", testimage.Busybox(t, "disk-marker", 0))
	for _, backend := range []string{"overlay", "copy"} {
		t.Run(backend, func(t *testing.T) { layerDiskQuota(t, ref, backend) })
	}
}

func layerDiskQuota(t *testing.T, ref, backend string) {
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1,
		AgentFlags: append(append([]string{}, agentFlags...), "--isolation", "posix/cpu,posix/mem,disk/du,filesystem/linux,docker/runtime",
			"--image-provisioner-backend", backend, "--container-disk-watch-interval", "200ms")})}
	unmountOnCleanup(t, c.Agents[0].Dir)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "layer-disk"})
	o := fw.takeOffer(t, "")
	writer := imageTask("writer", o, ref, "head -c 52428800 /dev/zero > /big && sleep 60")
	writer.Resources = append(writer.Resources, scalar("disk", 10))
	if err := fw.call(launch(o, writer)); err != nil {
		t.Fatal(err)
	}
	st := fw.waitTerminal(t, "writer")
	if st.GetState() != mesos.TASK_FAILED || st.GetReason() != mesos.REASON_CONTAINER_LIMITATION_DISK {
		t.Fatalf("writer ended %v %v %q, want TASK_FAILED, REASON_CONTAINER_LIMITATION_DISK", st.GetState(), st.GetReason(), st.GetMessage())
	}
	if msg := st.GetMessage(); !strings.Contains(msg, "quota (10 MB)") {
		t.Errorf("writer's message %q does not give the 10 MB quota", msg)
	}
	t.Logf("writer: %s", st.GetMessage())
	containersReleased(t, c.Agents[0].Dir)
}
