package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	exec1 "github.com/mesos/mesos-go/api/v1/lib/executor"

	"github.com/allot-sched/allot/agent/cni"
	"github.com/allot-sched/allot/agent/nslaunch"
	"github.com/allot-sched/allot/api/taskstate"
)

// Task groups (LAUNCH_GROUP) in containers, as Mesos's default executor
// runs a pod of nested containers: the group shares its executor's network
// (the CNI networks named on ExecutorInfo.container, attached once, before
// the executor starts), and each task that names an image runs in a root
// filesystem of its own from it, with its volumes bound as a command
// task's are. The built-in executor stays on the host (it talks to the
// agent over loopback) and runs each task through the launcher with what
// the agent wrote under the executor's container directory (groupDirEnv):
//
//	group.json              the group's network part: namespace, host name,
//	                        name-resolution files, variables, user
//	tasks/<hash>/task.json  a task's own Spec (its image, volumes, program)
//	tasks/<hash>/rootfs     that task's rootfs (released with the executor)
//
// A task without an image runs on the host's filesystem, in the group's
// network namespace when it has one.

// groupDirEnv names, in the built-in executor's environment, the
// directory of its task group's container files.
const groupDirEnv = "ALLOT_CONTAINER_GROUP"

// taskContainerName is task id's directory under its group's: a digest,
// since a task id may hold any character.
func taskContainerName(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:8])
}

// groupTaskSpecPath is where the Spec of task id of the group whose files
// are in dir lives.
func groupTaskSpecPath(dir, id string) string {
	return filepath.Join(dir, "tasks", taskContainerName(id), "task.json")
}

// groupNeedsContainers reports whether a task group on the built-in
// executor asks for containers: an image for one of its tasks, or
// networks for its executor.
func groupNeedsContainers(ex *executor, tasks []mesos.TaskInfo) bool {
	if len(cni.NamedNetworks(ex.container.GetNetworkInfos())) > 0 {
		return true
	}
	for _, t := range tasks {
		if t.Container.GetMesos().GetImage() != nil {
			return true
		}
	}
	return false
}

// prepareGroup makes the group part of a task group executor's container
// before the executor starts: its networks attached and group.json
// written. It returns the environment entry naming the group's directory
// and whether the executor must run as the agent's user (root: it makes
// its tasks' namespaces, which then drop to su).
func (a *Agent) prepareGroup(ex *executor, su *switchedUser) (entry string, asAgent bool, err error) {
	a.mu.Lock()
	var tasks []mesos.TaskInfo
	for _, t := range ex.tasks {
		tasks = append(tasks, t.info)
	}
	a.mu.Unlock()
	dir := a.containerDir(ex.containerID)
	entry = groupDirEnv + "=" + dir
	if !groupNeedsContainers(ex, tasks) {
		return entry, false, nil
	}
	// Every name-resolution file: each task keeps those that apply to
	// where it runs (groupNetworkMounts), in its image or on the host.
	s := &nslaunch.Spec{Rootfs: "(each task's)"}
	if err := a.networkSpec(ex, s); err != nil {
		return "", false, err
	}
	s.Rootfs = ""
	if su != nil {
		s.User = &nslaunch.User{UID: su.cred.Uid, GID: su.cred.Gid, Groups: su.cred.Groups}
	}
	if err := writeSpecFile(filepath.Join(dir, "group.json"), s); err != nil {
		return "", false, err
	}
	return entry, true, nil
}

// writeSpecFile writes s at p, making p's directory (0700: a Spec names
// the task's user and mounts, not the task's to change).
func writeSpecFile(p string, s *nslaunch.Spec) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	err = s.Encode(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing a container spec: %w", err)
	}
	return nil
}

// taskView is task ti of ex's group seen as a container of its own: its
// ContainerInfo and command, its resources' volumes, a directory under its
// executor's, and the executor's sandbox and GPUs.
func taskView(ex *executor, ti *mesos.TaskInfo) *executor {
	v := &executor{fw: ex.fw, id: ex.id, info: ex.info, command: true, sandbox: ex.sandbox, gpus: ex.gpus,
		containerID: filepath.Join(ex.containerID, "tasks", taskContainerName(ti.TaskID.Value)),
		tasks:       map[string]*agentTask{ti.TaskID.Value: {info: *ti}}}
	v.info.Resources = nil // the executor's own volumes are not the task's
	v.container, v.containerCommand = ti.Container, ti.Command
	return v
}

// prepareGroupTasks writes the Spec of each of tasks that names an image:
// the image pulled and its rootfs assembled, its volumes bound, the
// program as the image and its CommandInfo make it, run as su.
func (a *Agent) prepareGroupTasks(ex *executor, tasks []mesos.TaskInfo) error {
	var su *switchedUser
	for i := range tasks {
		ti := &tasks[i]
		if ti.Container.GetMesos().GetImage() == nil {
			continue
		}
		if su == nil {
			var err error
			if su, err = a.credentialFor(ex); err != nil {
				return err
			}
		}
		a.mu.Lock()
		v := taskView(ex, ti) // reads ex.gpus
		a.mu.Unlock()
		s, err := a.containerSpec(v, commandArgv(ti.Command), nil, nil, su)
		if err != nil {
			return fmt.Errorf("task %s: %w", ti.TaskID.Value, err)
		}
		if err := writeSpecFile(filepath.Join(a.containerDir(v.containerID), "task.json"), s); err != nil {
			return err
		}
	}
	return nil
}

// holdGroupLocked takes over the launch of o, a task group for the
// built-in executor ex, when one of its tasks names an image: the images
// are pulled and the rootfs assembled outside a.mu, then the group goes to
// the executor (deliverGroup). It reports whether it did. Caller holds
// a.mu.
func (a *Agent) holdGroupLocked(ex *executor, o *runOrder) bool {
	if !ex.command || ex.commandTask || o.launch.LaunchGroup == nil {
		return false
	}
	held := false
	for _, t := range o.tasks {
		held = held || t.Container.GetMesos().GetImage() != nil
	}
	if held {
		go a.deliverGroup(ex, o)
	}
	return held
}

// deliverGroup prepares o's task containers, then sends the group to ex
// (or queues it until ex subscribes). A preparation that fails fails every
// task of the group (Mesos launches a group all or nothing); tasks killed
// meanwhile are left out.
func (a *Agent) deliverGroup(ex *executor, o *runOrder) {
	err := a.prepareGroupTasks(ex, o.tasks)
	a.mu.Lock()
	defer a.mu.Unlock()
	var live []mesos.TaskInfo
	for _, ti := range o.tasks {
		if t := ex.tasks[ti.TaskID.Value]; t != nil && !taskstate.IsTerminal(t.state) {
			live = append(live, ti)
		}
	}
	switch {
	case len(live) == 0:
		return
	case err != nil || ex.exited:
		if err == nil {
			err = fmt.Errorf("executor %s ended while its task group's containers were prepared", ex.id)
		}
		a.log.Warn().Err(err).Str("executor_id", ex.id).Msg("task group launch failed")
		for _, ti := range live {
			t := ex.tasks[ti.TaskID.Value]
			a.enqueueUpdateLocked(ex, t, a.agentStatus(ex, t, mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED, err.Error()))
		}
		a.cleanupLocked(ex)
		return
	}
	ev := &exec1.Event{Type: exec1.Event_LAUNCH_GROUP, LaunchGroup: &exec1.Event_LaunchGroup{TaskGroup: mesos.TaskGroupInfo{Tasks: live}}}
	if ex.stream != nil {
		ex.stream.Send(ev)
		for _, ti := range live {
			ex.tasks[ti.TaskID.Value].launched = true
		}
	} else {
		ex.queued = append(ex.queued, ev)
	}
	a.checkpointLocked(ex)
}

// linkedVolumesLocked lists the resources whose persistent volumes are
// linked into ex's sandbox: none for a container in an image (they are
// bound in it), and, in a task group, not those of a task in an image of
// its own (bound in that task's rootfs). Caller holds a.mu.
func linkedVolumesLocked(ex *executor) []mesos.Resource {
	if ex.container.GetMesos().GetImage() != nil {
		return nil
	}
	out := append([]mesos.Resource(nil), ex.info.Resources...)
	for _, t := range ex.tasks {
		if !ex.command || ex.commandTask || t.info.Container.GetMesos().GetImage() == nil {
			out = append(out, t.info.Resources...)
		}
	}
	return out
}

// releaseGroupTasks frees the task containers of group executor cid.
func (a *Agent) releaseGroupTasks(cid string) {
	dir := filepath.Join(a.containerDir(cid), "tasks")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		tc := filepath.Join(cid, "tasks", e.Name())
		a.releaseImage(tc)
		a.releaseLayerBase(tc)
		os.Remove(filepath.Join(a.containerDir(tc), "task.json"))
		os.Remove(a.containerDir(tc))
	}
	os.Remove(dir)
	os.Remove(filepath.Join(a.containerDir(cid), "group.json"))
}

// adoptGroupTasks keeps the layers of the task containers of group
// executor cid, recovered after a restart.
func (a *Agent) adoptGroupTasks(cid string) {
	entries, _ := os.ReadDir(filepath.Join(a.containerDir(cid), "tasks"))
	for _, e := range entries {
		a.adoptImage(filepath.Join(cid, "tasks", e.Name()))
	}
}
