package agent

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// Checkpointed resources and persistent volumes. The master sends the
// agent its checkpointed resources (dynamic reservations and persistent
// volumes) in CHECKPOINT_RESOURCES; the agent keeps them in
// meta/resources/checkpointed, makes each volume's directory under
// volumes/roles/<role>/<persistence id> (Mesos's layout), removes the
// directory of a volume no longer listed (its DESTROY), and hands the list
// back in REGISTER so a master that lost it (or never had it) learns it.
//
// A task or executor that uses a volume sees it at <sandbox>/<container
// path> as a symbolic link to the volume's directory: executors run in the
// host's mount namespace, where a bind mount would outlive the sandbox and
// a recursive sandbox removal could follow it into the volume. The link is
// removed with the sandbox; the volume stays.

func (a *Agent) checkpointedResourcesPath() string {
	return filepath.Join(a.cfg.WorkDir, "meta", "resources", "checkpointed")
}

// volumePath is where the volume id of role lives; the role is escaped so
// that a hierarchical role stays one directory.
func (a *Agent) volumePath(role, id string) string {
	return filepath.Join(a.cfg.WorkDir, "volumes", "roles", url.PathEscape(role), id)
}

func volumeDir(a *Agent, r *mesos.Resource) string {
	return a.volumePath(r.ReservationRole(), r.GetDisk().GetPersistence().GetID())
}

// loadCheckpointedResources reads what the last run checkpointed; a
// missing file is none, a damaged one is logged and treated as none (the
// master's copy comes back in CHECKPOINT_RESOURCES).
func (a *Agent) loadCheckpointedResources() {
	b, err := os.ReadFile(a.checkpointedResourcesPath())
	if err != nil {
		return
	}
	var rec api.AgentResourcesRecord
	if err := proto.Unmarshal(b, &rec); err != nil {
		a.log.Error().Err(err).Msg("checkpointed resources unreadable; waiting for the master's")
		return
	}
	list, err := decodeResources(rec.Resources)
	if err != nil {
		a.log.Error().Err(err).Msg("checkpointed resources unreadable; waiting for the master's")
		return
	}
	a.mu.Lock()
	a.checkpointed = list
	a.mu.Unlock()
}

func decodeResources(raw [][]byte) (mesos.Resources, error) {
	out := make(mesos.Resources, len(raw))
	for i, b := range raw {
		if err := out[i].Unmarshal(b); err != nil {
			return nil, fmt.Errorf("resource %d: %w", i, err)
		}
	}
	return out, nil
}

func encodeResources(list mesos.Resources) [][]byte {
	out := make([][]byte, 0, len(list))
	for i := range list {
		if b, err := list[i].Marshal(); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// checkpointResources applies CHECKPOINT_RESOURCES: volumes that are new
// get their directory, volumes no longer listed lose theirs, and the list
// is written to disk before the agent acts on it.
func (a *Agent) checkpointResources(ev *api.AgentEvent) {
	list, err := decodeResources(ev.Resources)
	if err != nil {
		a.log.Error().Err(err).Msg("CHECKPOINT_RESOURCES dropped")
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	b, _ := proto.Marshal(&api.AgentResourcesRecord{AgentId: a.id, Resources: ev.Resources})
	if err := os.MkdirAll(filepath.Dir(a.checkpointedResourcesPath()), 0o755); err == nil {
		err = writeFileAtomic(a.checkpointedResourcesPath(), b)
	}
	if err != nil {
		a.log.Error().Err(err).Msg("checkpointing resources failed")
		return
	}
	keep := map[string]bool{}
	for i := range list {
		if list[i].IsPersistentVolume() {
			dir := volumeDir(a, &list[i])
			keep[dir] = true
			if err := os.MkdirAll(dir, 0o755); err != nil {
				a.log.Error().Err(err).Str("volume", dir).Msg("creating persistent volume")
			}
		}
	}
	for i := range a.checkpointed {
		if r := &a.checkpointed[i]; r.IsPersistentVolume() && !keep[volumeDir(a, r)] {
			dir := volumeDir(a, r)
			a.log.Info().Str("volume", dir).Msg("persistent volume destroyed; removing its directory")
			if err := os.RemoveAll(dir); err != nil {
				a.log.Error().Err(err).Str("volume", dir).Msg("removing persistent volume")
			}
		}
	}
	a.checkpointed = list
}

// linkVolumes makes every persistent volume in list appear at its
// container path in sandbox, owned by uid/gid when they are not negative.
func (a *Agent) linkVolumes(sandbox string, list []mesos.Resource, uid, gid int) error {
	for i := range list {
		r := &list[i]
		if !r.IsPersistentVolume() {
			continue
		}
		dir := volumeDir(a, r)
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("persistent volume %q of role %q is not on this agent: %v", r.Disk.Persistence.ID, r.ReservationRole(), err)
		}
		if uid >= 0 {
			os.Lchown(dir, uid, gid)
		}
		link := filepath.Join(sandbox, filepath.Clean(r.Disk.GetVolume().GetContainerPath()))
		if cur, err := os.Readlink(link); err == nil && cur == dir {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(dir, link); err != nil {
			return fmt.Errorf("persistent volume %q at %q: %w", r.Disk.Persistence.ID, r.Disk.Volume.ContainerPath, err)
		}
		a.log.Info().Str("volume", dir).Str("link", link).Msg("persistent volume linked into the sandbox")
	}
	return nil
}

// volumesOfLocked lists the resources of ex's executor and tasks that may
// hold volumes. Caller holds a.mu.
func volumesOfLocked(ex *executor) []mesos.Resource {
	out := append([]mesos.Resource(nil), ex.info.Resources...)
	for _, t := range ex.tasks {
		out = append(out, t.info.Resources...)
	}
	return out
}

// linkTaskVolumesLocked links the volumes of o's tasks, which join ex's
// existing sandbox; if one cannot be, every task of o fails as a launch
// that could not be made (false). Caller holds a.mu.
func (a *Agent) linkTaskVolumesLocked(ex *executor, o *runOrder) bool {
	var list []mesos.Resource
	for _, ti := range o.tasks {
		if ti.Container.GetMesos().GetImage() == nil || !ex.command { // an image task's are bound in it
			list = append(list, ti.Resources...)
		}
	}
	err := a.linkVolumes(ex.sandbox, list, -1, -1)
	if err == nil {
		return true
	}
	for _, ti := range o.tasks {
		a.newTaskFailed(ex, ti, mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED, err.Error())
	}
	a.checkpointLocked(ex)
	return false
}
