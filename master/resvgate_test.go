package master

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// A volume can be offered and used before its CREATE is committed; the
// agent must still hear CHECKPOINT_RESOURCES naming the volume before the
// RUN of a task that uses it, or it fails the task for a volume it does
// not have. Commits are held back while the task is launched, so the RUN
// is sent in the window between the change and its commit.
func TestRunWaitsForVolumeCheckpoint(t *testing.T) {
	h := newHarness(t, nil)
	agentID, agent := h.agent("cpus:4;mem:1024;disk:1000")
	agent.nextAgentEvent(t, api.AgentEventType_CHECKPOINT_RESOURCES)
	fw := h.roleFramework("stateful", "eng")

	reserve := mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{
		Resources: []mesos.Resource{dynRes("cpus", 1, "eng", ""), dynRes("disk", 200, "eng", "")}}}
	if err := h.call(fw, acceptOps(h.offer(fw), reserve)); err != nil {
		t.Fatalf("ACCEPT RESERVE: %v", err)
	}
	agent.nextAgentEvent(t, api.AgentEventType_CHECKPOINT_RESOURCES)

	release := make(chan struct{})
	hold := func() { <-release }
	h.m.rep.beforeApply.Store(&hold)
	create := mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, Create: &mesos.Offer_Operation_Create{
		Volumes: []mesos.Resource{volRes(100, "eng", "", "v1")}}}
	if err := h.call(fw, acceptOps(h.offer(fw), create)); err != nil {
		t.Fatalf("ACCEPT CREATE: %v", err)
	}
	o := h.offer(fw)
	_, vols := reservedOf(o, "eng")
	if len(vols) != 1 {
		t.Fatalf("offer after CREATE holds volumes %v, want v1", vols)
	}
	task := commandTask("writer", agentID, 0.5, 64)
	task.Resources = append(task.Resources, vols[0])
	if err := h.call(fw, launchCall(o, nil, task)); err != nil {
		t.Fatalf("ACCEPT LAUNCH with the volume: %v", err)
	}
	close(release)

	volumeKept := false
	agent.take(t, "RUN agent event", func(b []byte) bool {
		var ev api.AgentEvent
		if proto.Unmarshal(b, &ev) != nil {
			return false
		}
		if ev.Type == api.AgentEventType_CHECKPOINT_RESOURCES {
			list, err := decodeResourceList(ev.Resources)
			volumeKept = err == nil && hasVolume(list, "v1")
		}
		return ev.Type == api.AgentEventType_RUN
	})
	if !volumeKept {
		t.Fatal("the agent got the RUN of a task using volume v1 before CHECKPOINT_RESOURCES naming v1")
	}
}

func hasVolume(list mesos.Resources, id string) bool {
	for _, r := range list {
		if r.IsPersistentVolume() && r.Disk.Persistence.ID == id {
			return true
		}
	}
	return false
}
