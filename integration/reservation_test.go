package integration

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/internal/testcluster"
)

// engReservation is a dynamic reservation for role eng without principal.
func engReservation(r mesos.Resource) mesos.Resource {
	t, role := mesos.Resource_ReservationInfo_DYNAMIC, "eng"
	r.Reservations = []mesos.Resource_ReservationInfo{{Type: &t, Role: &role}}
	return r
}

func engVolume(size float64) mesos.Resource {
	v := engReservation(scalar("disk", size))
	rw := mesos.RW
	v.Disk = &mesos.Resource_DiskInfo{Persistence: &mesos.Resource_DiskInfo_Persistence{ID: "v1"},
		Volume: &mesos.Volume{ContainerPath: "data", Mode: &rw}}
	return v
}

// accept sends an ACCEPT of o with ops and no filter, so what it leaves is
// offered again at the next cycle.
func accept(t testing.TB, s *sched, o mesos.Offer, ops ...mesos.Offer_Operation) {
	t.Helper()
	zero := 0.0
	c := &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{
		OfferIDs: []mesos.OfferID{o.ID}, Operations: ops, Filters: &mesos.Filters{RefuseSeconds: &zero}}}
	if err := s.call(c); err != nil {
		t.Fatalf("ACCEPT %v: %v", ops[0].Type, err)
	}
}

// takeOfferWhere waits for an offer that pred accepts, declining the
// others (with no filter) so that the next cycle offers again.
func (s *sched) takeOfferWhere(t testing.TB, what string, pred func(mesos.Offer) bool) mesos.Offer {
	t.Helper()
	var got mesos.Offer
	testcluster.WaitFor(t, 30*time.Second, what, func() bool {
		o := s.takeOffer(t, "")
		if pred(o) {
			got = o
			return true
		}
		zero := 0.0
		s.call(&scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{
			OfferIDs: []mesos.OfferID{o.ID}, Filters: &mesos.Filters{RefuseSeconds: &zero}}})
		return false
	})
	return got
}

// reservedFor sums o's scalars reserved for role and lists its volumes.
func reservedFor(o mesos.Offer, role string) (map[string]float64, []mesos.Resource) {
	sums := map[string]float64{}
	var vols []mesos.Resource
	for _, r := range o.Resources {
		if n := len(r.Reservations); n > 0 && r.Reservations[n-1].GetRole() == role {
			sums[r.Name] += r.GetScalar().GetValue()
			if r.IsPersistentVolume() {
				vols = append(vols, r)
			}
		}
	}
	return sums, vols
}

func hasVolume(o mesos.Offer) bool { _, v := reservedFor(o, "eng"); return len(v) == 1 }

// volumeTask is a command task on eng's reserved cpus and mem and the
// volume v.
func volumeTask(id string, o mesos.Offer, v mesos.Resource, shell string) mesos.TaskInfo {
	t := cmdTask(id, o, shell, 0, 0)
	t.Resources = []mesos.Resource{engReservation(scalar("cpus", 0.5)), engReservation(scalar("mem", 64)), v}
	return t
}

// A framework reserves, creates a persistent volume and runs a task that
// writes to it; later tasks read the file, across an agent kill -9 and a
// master kill -9; DESTROY and UNRESERVE give the resources back.
func TestReservationAndVolumeSurviveKill9(t *testing.T) {
	c := newCluster(t, 0)
	a := c.AddAgent(testcluster.DefaultResources + ";cpus(ads):1")
	c.WaitAgents(1)
	ft, cp, role := 3600.0, true, "eng"
	info := mesos.FrameworkInfo{Name: "stateful", Role: &role, FailoverTimeout: &ft, Checkpoint: &cp}
	fw := subscribe(t, c.MasterAddr, info)

	o := fw.takeOffer(t, "")
	if got, _ := reservedFor(o, "ads"); len(got) != 0 {
		t.Fatalf("role eng was offered ads's static reservation: %v", o.Resources)
	}
	accept(t, fw, o, mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{
		Resources: []mesos.Resource{engReservation(scalar("cpus", 1)), engReservation(scalar("mem", 256)), engReservation(scalar("disk", 100))}}})
	o = fw.takeOfferWhere(t, "an offer of eng's reservation", func(o mesos.Offer) bool {
		got, _ := reservedFor(o, "eng")
		return got["cpus"] == 1 && got["mem"] == 256 && got["disk"] == 100
	})
	accept(t, fw, o, mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, Create: &mesos.Offer_Operation_Create{Volumes: []mesos.Resource{engVolume(64)}}})

	run := func(id, shell string, want mesos.TaskState) {
		t.Helper()
		o := fw.takeOfferWhere(t, "an offer of the volume", hasVolume)
		_, vols := reservedFor(o, "eng")
		if err := fw.call(launch(o, volumeTask(id, o, vols[0], shell))); err != nil {
			t.Fatalf("launch %s: %v", id, err)
		}
		fw.waitState(t, id, want)
	}
	run("writer", "echo kept > data/f", mesos.TASK_FINISHED)
	run("reader", `test "$(cat data/f)" = kept`, mesos.TASK_FINISHED)

	a.Kill(syscall.SIGKILL)
	c.StartAgent(a)
	c.WaitAgents(1)
	run("reader-after-agent-kill", `test "$(cat data/f)" = kept`, mesos.TASK_FINISHED)

	id := fw.ID()
	c.Master.Kill(syscall.SIGKILL)
	fw.close()
	c.StartMaster()
	c.WaitAgents(1)
	info.ID = &mesos.FrameworkID{Value: id}
	fw = subscribe(t, c.MasterAddr, info)
	run("reader-after-master-kill", `test "$(cat data/f)" = kept`, mesos.TASK_FINISHED)

	o = fw.takeOfferWhere(t, "an offer of the volume", hasVolume)
	_, vols := reservedFor(o, "eng")
	accept(t, fw, o, mesos.Offer_Operation{Type: mesos.Offer_Operation_DESTROY, Destroy: &mesos.Offer_Operation_Destroy{Volumes: vols}})
	o = fw.takeOfferWhere(t, "an offer without the volume", func(o mesos.Offer) bool {
		got, _ := reservedFor(o, "eng")
		return !hasVolume(o) && got["disk"] == 100
	})
	accept(t, fw, o, mesos.Offer_Operation{Type: mesos.Offer_Operation_UNRESERVE, Unreserve: &mesos.Offer_Operation_Unreserve{
		Resources: []mesos.Resource{engReservation(scalar("cpus", 1)), engReservation(scalar("mem", 256)), engReservation(scalar("disk", 100))}}})
	fw.takeOfferWhere(t, "an offer of everything unreserved", func(o mesos.Offer) bool {
		got, _ := reservedFor(o, "eng")
		return len(got) == 0 && offered(o, "cpus") == 4 && offered(o, "disk") == 10000
	})
	// The agent removes the directory when it hears CHECKPOINT_RESOURCES,
	// which the offer above may overtake.
	testcluster.WaitFor(t, 30*time.Second, "the destroyed volume's directory to be removed", func() bool {
		_, err := os.Stat(filepath.Join(a.Dir, "volumes", "roles", "eng", "v1"))
		return os.IsNotExist(err)
	})
}
