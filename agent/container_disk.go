package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// disk/du of a container's own writable layer: what a task in an image
// writes outside its sandbox and volumes lands in its container's
// overlay upper directory, or, under the copy backend, in its copied
// rootfs. Both count against the executor's disk like the sandbox. A
// copied rootfs starts as big as the image, so its size when assembled
// (layerBaseFile) is taken off: only what the container added counts.

// layerBaseFile, in a container's directory, holds the size of its copied
// rootfs as assembled (none under overlay).
const layerBaseFile = "rootfs.base"

// recordLayerBase notes the size of container cid's freshly assembled
// rootfs when it is a copy.
func (a *Agent) recordLayerBase(cid, rootfs string) {
	dir := a.containerDir(cid)
	if isDir(filepath.Join(dir, "upper")) {
		return
	}
	n, _, err := du(rootfs)
	if err != nil {
		return
	}
	os.WriteFile(filepath.Join(dir, layerBaseFile), []byte(strconv.FormatUint(n, 10)), 0o600)
}

func (a *Agent) releaseLayerBase(cid string) {
	os.Remove(filepath.Join(a.containerDir(cid), layerBaseFile))
}

// layerBytes is what container cid and the task containers of its group
// wrote to their own layers.
func (a *Agent) layerBytes(cid string) uint64 {
	dirs := []string{a.containerDir(cid)}
	entries, _ := os.ReadDir(filepath.Join(a.containerDir(cid), "tasks"))
	for _, e := range entries {
		dirs = append(dirs, filepath.Join(a.containerDir(cid), "tasks", e.Name()))
	}
	var sum uint64
	for _, d := range dirs {
		sum += writableLayerBytes(d)
	}
	return sum
}

// writableLayerBytes is the size of the writes to the container whose
// directory is dir: its overlay upper directory, or its copied rootfs less
// its size as assembled; 0 for a container without a rootfs.
func writableLayerBytes(dir string) uint64 {
	if upper := filepath.Join(dir, "upper"); isDir(upper) {
		n, _, _ := du(upper)
		return n
	}
	b, err := os.ReadFile(filepath.Join(dir, layerBaseFile))
	if err != nil {
		return 0
	}
	base, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	n, _, err := du(filepath.Join(dir, "rootfs"))
	if err != nil || n < base {
		return 0
	}
	return n - base
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
