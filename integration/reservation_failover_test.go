package integration

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// In a cluster of three masters, a framework reserves, creates a volume
// and writes to it from a task; the leader is killed -9. The new leader,
// which learnt the reservation and the volume only through the replicated
// registry, offers them to the framework's role again, and to no other,
// and a new task reads what the first one wrote.
func TestReservationAndVolumeSurviveLeaderKill9(t *testing.T) {
	c := newMCluster(t, 3, 1)
	old := c.leader(30 * time.Second)
	ft, cp, role := 3600.0, true, "eng"
	info := mesos.FrameworkInfo{Name: "stateful", Role: &role, FailoverTimeout: &ft, Checkpoint: &cp}
	fw := subscribe(t, c.masters[old].http, info)

	resv := []mesos.Resource{engReservation(scalar("cpus", 1)), engReservation(scalar("mem", 256)), engReservation(scalar("disk", 100))}
	accept(t, fw, fw.takeOffer(t, ""), mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{Resources: resv}})
	o := fw.takeOfferWhere(t, "an offer of eng's reservation", func(o mesos.Offer) bool {
		got, _ := reservedFor(o, "eng")
		return got["cpus"] == 1 && got["mem"] == 256 && got["disk"] == 100
	})
	accept(t, fw, o, mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, Create: &mesos.Offer_Operation_Create{Volumes: []mesos.Resource{engVolume(64)}}})
	vol := filepath.Join(c.agents[0].Dir, "volumes", "roles", "eng", "v1")
	runOnVolume(t, fw, fw.takeOfferWhere(t, "an offer of the volume", hasVolume), "writer", "echo kept > data/f")

	id := fw.ID()
	fw.close()
	c.kill9(old)
	next := c.leader(60 * time.Second)
	if next == old {
		t.Fatalf("master %d, killed, still leads", old)
	}
	c.waitAgents(1)
	info.ID = &mesos.FrameworkID{Value: id}
	fw = subscribe(t, c.masters[next].http, info)
	o = fw.takeOfferWhere(t, "the new leader's offer of eng's reservation and volume", func(o mesos.Offer) bool {
		got, vols := reservedFor(o, "eng")
		return got["cpus"] == 1 && got["mem"] == 256 && got["disk"] == 100 && len(vols) == 1 &&
			vols[0].GetDisk().GetPersistence().GetID() == "v1" && vols[0].GetScalar().GetValue() == 64
	})
	runOnVolume(t, fw, o, "reader-after-leader-kill", `test "$(cat data/f)" = kept`)
	if _, err := os.Stat(filepath.Join(vol, "f")); err != nil {
		t.Errorf("the volume's file on the agent: %v", err)
	}

	// Another role, once eng's framework is gone, is offered only what is
	// not reserved for eng.
	fw.close()
	ops := "ops"
	other := subscribe(t, c.masters[next].http, mesos.FrameworkInfo{Name: "other", Role: &ops})
	other.takeOfferWhere(t, "an offer to ops of the agent's unreserved part", func(o mesos.Offer) bool {
		if got, _ := reservedFor(o, "eng"); len(got) != 0 {
			t.Errorf("role ops was offered eng's reservation: %v", o.Resources)
		}
		return offered(o, "cpus") == 1 && offered(o, "mem") == 2048-256
	})
}

// runOnVolume launches a task on offer o, which holds eng's volume, and
// waits for it to finish.
func runOnVolume(t *testing.T, fw *sched, o mesos.Offer, id, shell string) {
	t.Helper()
	_, vols := reservedFor(o, "eng")
	if err := fw.call(launch(o, volumeTask(id, o, vols[0], shell))); err != nil {
		t.Fatalf("launch %s: %v", id, err)
	}
	fw.waitState(t, id, mesos.TASK_FINISHED)
}
