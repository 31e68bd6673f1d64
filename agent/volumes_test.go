package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/api"
)

func testVolume(role, id, path string, size float64) mesos.Resource {
	t, dyn, rw := mesos.SCALAR, mesos.Resource_ReservationInfo_DYNAMIC, mesos.RW
	return mesos.Resource{Name: "disk", Type: &t, Scalar: &mesos.Value_Scalar{Value: size},
		Reservations: []mesos.Resource_ReservationInfo{{Type: &dyn, Role: &role}},
		Disk: &mesos.Resource_DiskInfo{Persistence: &mesos.Resource_DiskInfo_Persistence{ID: id},
			Volume: &mesos.Volume{ContainerPath: path, Mode: &rw}}}
}

// CHECKPOINT_RESOURCES makes new volumes' directories, removes destroyed
// ones' and is read back by the next run of the agent; a volume is linked
// into a sandbox at its container path and outlives the sandbox.
func TestCheckpointedVolumes(t *testing.T) {
	dir := t.TempDir()
	a := &Agent{cfg: Config{WorkDir: dir}, log: zerolog.Nop(), id: "a1"}
	v1, v2 := testVolume("eng/ml", "v1", "data", 10), testVolume("eng", "v2", "logs/x", 10)
	a.checkpointResources(&api.AgentEvent{Type: api.AgentEventType_CHECKPOINT_RESOURCES, Resources: encodeResources(mesos.Resources{v1, v2})})
	p1, p2 := a.volumePath("eng/ml", "v1"), a.volumePath("eng", "v2")
	if p1 != filepath.Join(dir, "volumes", "roles", "eng%2Fml", "v1") {
		t.Errorf("volume path %s", p1)
	}
	for _, p := range []string{p1, p2} {
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			t.Fatalf("volume %s: %v", p, err)
		}
	}
	sandbox := filepath.Join(dir, "sandbox")
	if err := a.linkVolumes(sandbox, mesos.Resources{v1, v2}, -1, -1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sandbox, "data", "f"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.linkVolumes(sandbox, mesos.Resources{v1}, -1, -1); err != nil {
		t.Fatalf("linking again: %v", err)
	}
	os.RemoveAll(sandbox)
	if b, err := os.ReadFile(filepath.Join(p1, "f")); err != nil || string(b) != "kept" {
		t.Fatalf("volume content after the sandbox went: %q, %v", b, err)
	}

	again := &Agent{cfg: Config{WorkDir: dir}, log: zerolog.Nop()}
	again.loadCheckpointedResources()
	if len(again.checkpointed) != 2 {
		t.Fatalf("restarted agent read %v", again.checkpointed)
	}
	again.checkpointResources(&api.AgentEvent{Resources: encodeResources(mesos.Resources{v2})})
	if _, err := os.Stat(p1); !os.IsNotExist(err) {
		t.Errorf("destroyed volume still there: %v", err)
	}
	if _, err := os.Stat(p2); err != nil {
		t.Errorf("kept volume gone: %v", err)
	}
	err := again.linkVolumes(filepath.Join(dir, "sb2"), mesos.Resources{v1}, -1, -1)
	if err == nil || !strings.Contains(err.Error(), `persistent volume "v1" of role "eng/ml" is not on this agent`) {
		t.Errorf("linking a destroyed volume: %v", err)
	}
}
