package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/agent/nslaunch"
)

// A group's task joins the group's namespace, host name and variables; its
// name-resolution files replace the host's bound into an image, and on the
// host's filesystem bind only over files that exist there.
func TestJoinGroupNetwork(t *testing.T) {
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts") // stands for a host file that exists
	os.WriteFile(hosts, nil, 0o644)
	group := &nslaunch.Spec{NetNS: "/ns", Hostname: "pod", Env: []string{"LIBPROCESS_IP=0.0.0.0"}, Mounts: []nslaunch.Mount{
		{Source: "/cni/hosts", Target: hosts, ReadOnly: true},
		{Source: "/cni/resolv", Target: filepath.Join(dir, "missing"), ReadOnly: true},
	}}
	vol := nslaunch.Mount{Source: "/srv", Target: "/data"}
	cases := []struct {
		name string
		in   nslaunch.Spec
		want []nslaunch.Mount
	}{
		{"in an image", nslaunch.Spec{Rootfs: "/r", Mounts: []nslaunch.Mount{vol, {Source: hosts, Target: hosts, ReadOnly: true}}},
			[]nslaunch.Mount{vol, group.Mounts[0], group.Mounts[1]}},
		{"on the host", nslaunch.Spec{}, []nslaunch.Mount{group.Mounts[0]}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.in
			joinGroupNetwork(&s, group)
			if s.NetNS != "/ns" || s.Hostname != "pod" || !reflect.DeepEqual(s.Env, group.Env) {
				t.Errorf("netns %q, hostname %q, env %v: want the group's", s.NetNS, s.Hostname, s.Env)
			}
			if !reflect.DeepEqual(s.Mounts, c.want) {
				t.Errorf("mounts %+v, want %+v", s.Mounts, c.want)
			}
		})
	}
}

// A task of a group is a container of its own under its executor's: its
// ContainerInfo and command, its own resources, the group's sandbox.
func TestTaskView(t *testing.T) {
	img := &mesos.ContainerInfo{Mesos: &mesos.ContainerInfo_MesosInfo{Image: &mesos.Image{}}}
	ti := mesos.TaskInfo{TaskID: mesos.TaskID{Value: "web/1"}, Container: img, Command: &mesos.CommandInfo{Value: strPtr("run")},
		Resources: []mesos.Resource{scalarRes("disk", 1)}}
	ex := &executor{containerID: "c1", sandbox: "/sb", info: mesos.ExecutorInfo{Resources: []mesos.Resource{scalarRes("disk", 2)}}}
	v := taskView(ex, &ti)
	if v.container != img || v.containerCommand != ti.Command || v.sandbox != "/sb" {
		t.Errorf("view %+v: want the task's container and command in the group's sandbox", v)
	}
	if want := filepath.Join("c1", "tasks", taskContainerName("web/1")); v.containerID != want {
		t.Errorf("container id %q, want %q (a directory under its executor's)", v.containerID, want)
	}
	if res := volumesOfLocked(v); len(res) != 1 || res[0].Scalar.Value != 1 {
		t.Errorf("resources %v, want the task's own", res)
	}
}

// The persistent volumes of a group's task in an image are bound in its
// rootfs, not linked into the shared sandbox; the others' are linked.
func TestLinkedVolumes(t *testing.T) {
	img := &mesos.ContainerInfo{Mesos: &mesos.ContainerInfo_MesosInfo{Image: &mesos.Image{}}}
	task := func(id string, c *mesos.ContainerInfo, disk float64) *agentTask {
		return &agentTask{info: mesos.TaskInfo{TaskID: mesos.TaskID{Value: id}, Container: c, Resources: []mesos.Resource{scalarRes("disk", disk)}}}
	}
	group := &executor{command: true, info: mesos.ExecutorInfo{Resources: []mesos.Resource{scalarRes("disk", 1)}},
		tasks: map[string]*agentTask{"boxed": task("boxed", img, 10), "plain": task("plain", nil, 100)}}
	cmdInImage := &executor{command: true, commandTask: true, container: img, tasks: map[string]*agentTask{"t": task("t", img, 10)}}
	sum := func(rs []mesos.Resource) (n float64) {
		for _, r := range rs {
			n += r.Scalar.Value
		}
		return n
	}
	if got := sum(linkedVolumesLocked(group)); got != 101 {
		t.Errorf("group: linked the volumes of disk %v, want 101 (the executor's and the plain task's)", got)
	}
	if got := linkedVolumesLocked(cmdInImage); len(got) != 0 {
		t.Errorf("command task in an image: linked %v, want none", got)
	}
}

// A task of a group with containers runs through the launcher: in its own
// Spec when it has an image, else on the host as the group's user; both in
// the group's network when it has one. A group without containers runs
// its tasks as they are.
func TestGroupTaskSpec(t *testing.T) {
	user := &nslaunch.User{UID: 65534, GID: 65534}
	image := &nslaunch.Spec{Rootfs: "/r", Argv: []string{"/bin/app"}, User: user}
	cases := []struct {
		name         string
		group, image *nslaunch.Spec
		want         *nslaunch.Spec
	}{
		{"no containers", nil, nil, nil},
		{"host task, no network", &nslaunch.Spec{User: user}, nil, &nslaunch.Spec{Argv: []string{"/bin/sh", "-c", "run"}, Dir: "/sb", User: user}},
		{"host task, network", &nslaunch.Spec{NetNS: "/ns", Hostname: "pod", User: user}, nil,
			&nslaunch.Spec{Argv: []string{"/bin/sh", "-c", "run"}, Dir: "/sb", User: user, NetNS: "/ns", Hostname: "pod"}},
		{"image task, no network", &nslaunch.Spec{User: user}, image, image},
		{"image task, network", &nslaunch.Spec{NetNS: "/ns", Hostname: "pod", User: user}, image,
			&nslaunch.Spec{Rootfs: "/r", Argv: []string{"/bin/app"}, User: user, NetNS: "/ns", Hostname: "pod"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv(containerSpecEnv, "")
			t.Setenv(groupDirEnv, dir)
			if c.group != nil {
				if err := writeSpecFile(filepath.Join(dir, "group.json"), c.group); err != nil {
					t.Fatal(err)
				}
			}
			if c.image != nil {
				if err := writeSpecFile(groupTaskSpecPath(dir, "t1"), c.image); err != nil {
					t.Fatal(err)
				}
			}
			ce := &commandExecutor{}
			ce.cfg.Sandbox = "/sb"
			shell := true
			got, err := ce.taskSpec(mesos.TaskInfo{TaskID: mesos.TaskID{Value: "t1"}, Command: &mesos.CommandInfo{Shell: &shell, Value: strPtr("run")}})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("spec %+v, want %+v", got, c.want)
			}
			if has := taskHasSpec("t1"); has != (c.image != nil) {
				t.Errorf("taskHasSpec = %v, want %v", has, c.image != nil)
			}
		})
	}
}
