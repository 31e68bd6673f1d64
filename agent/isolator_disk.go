package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// disk/du: every DiskWatchInterval the agent measures each executor's
// sandbox (the blocks its files hold, as du does), plus what its
// containers wrote to their own writable layers (container_disk.go), and
// compares it with the
// disk its executor and tasks were allocated. Over the limit, the executor
// is killed through the same path as an OOM kill (limitedLocked), so its
// tasks end TASK_FAILED, SOURCE_AGENT, REASON_CONTAINER_LIMITATION_DISK; with
// --enforce-container-disk-quota=false it is only logged and counted.
// It is independent of the cpu/mem isolator: it runs beside cgroups or posix.

// duMaxEntries bounds one sandbox walk: a sandbox of millions of small files
// must not make the watcher a disk scan of its own. A walk that stops there
// reports what it counted so far (a lower bound, which still catches the
// common case of a few large files).
const duMaxEntries = 1 << 20

var errDuBound = errors.New("du: entry bound reached")

// du sums the allocated bytes (st_blocks × 512) of everything under dir,
// counting a hard-linked inode once. It does not follow symlinks. complete
// is false when the walk stopped at duMaxEntries.
func du(dir string) (bytes uint64, complete bool, err error) {
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	n := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // vanished or unreadable: a task's own business
		}
		if n++; n > duMaxEntries {
			return errDuBound
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			bytes += uint64(info.Size())
			return nil
		}
		if st.Nlink > 1 && !d.IsDir() {
			k := inode{uint64(st.Dev), uint64(st.Ino)}
			if seen[k] {
				return nil
			}
			seen[k] = true
		}
		bytes += uint64(st.Blocks) * 512
		return nil
	})
	if errors.Is(err, errDuBound) {
		return bytes, false, nil
	}
	return bytes, err == nil, err
}

func diskLimitation(limit, usage uint64) *limitation {
	return &limitation{reason: mesos.REASON_CONTAINER_LIMITATION_DISK,
		message: fmt.Sprintf("Disk usage (%d MB) exceeds quota (%d MB): sandbox and container layers measured by disk/du", usage>>20, limit>>20)}
}

// diskLoop runs while disk/du is on.
func (a *Agent) diskLoop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		a.checkDisks()
	}
}

// checkDisks measures every running executor's sandbox once, outside a.mu.
func (a *Agent) checkDisks() {
	type check struct {
		ex      *executor
		sandbox string
		limit   uint64
	}
	var list []check
	a.mu.Lock()
	for _, ex := range a.executors {
		if ex.pid > 0 && !ex.exited && ex.limitation == nil && ex.limits.diskBytes > 0 {
			list = append(list, check{ex, ex.sandbox, ex.limits.diskBytes})
		}
	}
	a.mu.Unlock()
	for _, c := range list {
		used, _, err := du(c.sandbox)
		if err != nil {
			a.log.Debug().Err(err).Str("sandbox", c.sandbox).Msg("disk/du")
			continue
		}
		used += a.layerBytes(c.ex.containerID) // container_disk.go
		a.mu.Lock()
		c.ex.diskUsed = used
		if used > c.limit {
			a.diskOverLocked(c.ex, diskLimitation(c.limit, used))
		}
		a.mu.Unlock()
	}
	a.mu.Lock()
	a.diskChecks++
	a.mu.Unlock()
}

// diskOverLocked enforces (kills, as an OOM kill does) or, with
// --enforce-container-disk-quota=false, warns once per executor and counts.
func (a *Agent) diskOverLocked(ex *executor, lim *limitation) {
	if !a.cfg.DiskQuotaWarnOnly {
		a.limitedLocked(ex, lim)
		return
	}
	if ex.diskWarned {
		return
	}
	ex.diskWarned = true
	a.diskQuotaExceeded++
	a.log.Warn().Str("executor_id", ex.id).Str("framework_id", ex.fw).Str("container_id", ex.containerID).
		Msg(lim.message + " (not enforced: --enforce-container-disk-quota=false)")
}
