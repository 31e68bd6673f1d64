package agent

import (
	"os"
	"path/filepath"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/rs/zerolog"
)

// What a container writes to its own layer counts against its executor's
// disk: its overlay upper directory, or what its copied rootfs grew by
// since it was assembled; the image itself does not count. A group's task
// containers count for the group's executor.
func TestCheckDisksCountsContainerLayers(t *testing.T) {
	cases := []struct {
		name   string
		layout func(t *testing.T, a *Agent, cid string)
		over   bool
	}{
		{"overlay upper dir", func(t *testing.T, a *Agent, cid string) {
			writeBytes(t, filepath.Join(a.containerDir(cid), "upper", "var", "big"), 3<<20)
		}, true},
		{"copied rootfs grown", func(t *testing.T, a *Agent, cid string) {
			rootfs := filepath.Join(a.containerDir(cid), "rootfs")
			writeBytes(t, filepath.Join(rootfs, "bin", "image-file"), 4<<20)
			a.recordLayerBase(cid, rootfs)
			writeBytes(t, filepath.Join(rootfs, "tmp", "big"), 3<<20)
		}, true},
		{"copied rootfs as assembled", func(t *testing.T, a *Agent, cid string) {
			rootfs := filepath.Join(a.containerDir(cid), "rootfs")
			writeBytes(t, filepath.Join(rootfs, "bin", "image-file"), 4<<20)
			a.recordLayerBase(cid, rootfs)
		}, false},
		{"a group's task container", func(t *testing.T, a *Agent, cid string) {
			tc := filepath.Join(cid, "tasks", taskContainerName("web"))
			writeBytes(t, filepath.Join(a.containerDir(tc), "upper", "big"), 3<<20)
		}, true},
		{"no container", func(t *testing.T, a *Agent, cid string) {}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ex := &executor{id: "e", containerID: "c1", sandbox: filepath.Join(dir, "sandbox"), limits: limits{diskBytes: 2 << 20},
				tasks: map[string]*agentTask{}, pid: 1 << 30} // a pid no kill can reach
			writeBytes(t, filepath.Join(ex.sandbox, "small"), 512<<10)
			a := &Agent{iso: &posixIsolator{}, log: zerolog.Nop(), cfg: Config{WorkDir: dir}, executors: map[string]*executor{"f/e": ex}}
			c.layout(t, a, ex.containerID)
			a.checkDisks()
			if got := ex.limitation != nil; got != c.over {
				t.Fatalf("over its disk: %v (used %d), want %v", got, ex.diskUsed, c.over)
			}
			if c.over && ex.limitation.reason != mesos.REASON_CONTAINER_LIMITATION_DISK {
				t.Errorf("limitation %+v, want REASON_CONTAINER_LIMITATION_DISK", ex.limitation)
			}
			a.releaseLayerBase(ex.containerID)
			if _, err := os.Stat(filepath.Join(a.containerDir(ex.containerID), layerBaseFile)); err == nil {
				t.Error("the copied rootfs's size is kept after its release")
			}
		})
	}
}
