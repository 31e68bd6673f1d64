package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/agent/nslaunch"
)

// taskSpec is the container Spec task ti runs with, or nil to run it on
// the host as it is: a command task's (containerSpecEnv), or, for a task
// of a group with containers (groupDirEnv, container_group.go), the
// task's own Spec when it names an image, else the host's filesystem as
// the group's user, joined to the group's network when it has one.
func (ce *commandExecutor) taskSpec(ti mesos.TaskInfo) (*nslaunch.Spec, error) {
	if p := os.Getenv(containerSpecEnv); p != "" {
		return nslaunch.ReadFile(p)
	}
	dir := os.Getenv(groupDirEnv)
	if dir == "" {
		return nil, nil
	}
	group, err := readGroupSpec(filepath.Join(dir, "group.json"))
	if err != nil {
		return nil, err
	}
	s, err := readSpecIfAny(groupTaskSpecPath(dir, ti.TaskID.Value))
	if err != nil {
		return nil, err
	}
	if group == nil {
		return s, nil
	}
	// The executor of a group with containers runs as the agent's user: a
	// task on the host goes through the launcher too, to drop to the
	// group's user (and join its network).
	if s == nil {
		s = &nslaunch.Spec{Argv: commandArgv(ti.Command), Dir: ce.cfg.Sandbox, User: group.User}
	}
	if group.NetNS != "" {
		joinGroupNetwork(s, group)
	}
	return s, nil
}

// taskHasSpec reports whether task id has a Spec of its own from the agent
// (it runs in an image, whose entrypoint may be its program).
func taskHasSpec(id string) bool {
	if os.Getenv(containerSpecEnv) != "" {
		return true
	}
	dir := os.Getenv(groupDirEnv)
	return dir != "" && fileExists(groupTaskSpecPath(dir, id))
}

// readSpecIfAny reads the Spec at p; nil when there is none.
func readSpecIfAny(p string) (*nslaunch.Spec, error) {
	s, err := nslaunch.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return s, err
}

// readGroupSpec reads the group's part of its tasks' Specs (no program of
// its own, so not a Spec to validate); nil when there is none.
func readGroupSpec(p string) (*nslaunch.Spec, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s nslaunch.Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &s, nil
}

// joinGroupNetwork puts s in the group's network namespace, with the
// group's host name, variables and name-resolution files: over the image's
// (and instead of the host's, bound for a container on the host's
// network), or, on the host's filesystem, over the host's files that
// exist and are not the group's own.
func joinGroupNetwork(s, group *nslaunch.Spec) {
	s.NetNS, s.Hostname = group.NetNS, group.Hostname
	ours := map[string]bool{}
	for _, m := range group.Mounts {
		ours[m.Target] = true
	}
	kept := s.Mounts[:0:0]
	for _, m := range s.Mounts {
		if !ours[m.Target] {
			kept = append(kept, m)
		}
	}
	s.Mounts = kept
	for _, m := range group.Mounts {
		if s.Rootfs == "" && (m.Source == m.Target || !fileExists(m.Target)) {
			continue
		}
		s.Mounts = append(s.Mounts, m)
	}
	s.Env = append(s.Env, group.Env...)
}
