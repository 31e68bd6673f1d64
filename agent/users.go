package agent

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Users (Mesos's --switch-user): an agent running as root runs each
// executor, and so its tasks, as the task's user (CommandInfo.user of a
// command task, or of a custom executor's CommandInfo) or else the
// framework's (FrameworkInfo.user), and gives it its sandbox. A user the
// host does not know fails the executor's tasks, not the agent.

// logUserSwitching says at start whether executors will change user.
func (a *Agent) logUserSwitching() {
	switch {
	case a.cfg.NoSwitchUser:
		a.log.Info().Msg("--switch-user=false: executors run as the agent's user")
	case os.Geteuid() != 0:
		a.log.Info().Int("uid", os.Geteuid()).Msg("agent is not root: executors run as the agent's user, task and framework users are not switched to")
	}
}

// executorUser is the user ex should run as: the command task's, the
// executor's CommandInfo's, or the framework's.
func executorUser(ex *executor) string {
	if ex.commandTask {
		for _, t := range ex.tasks {
			if t.info.Command != nil && t.info.Command.GetUser() != "" {
				return t.info.Command.GetUser()
			}
		}
	}
	if ex.info.Command != nil && ex.info.Command.GetUser() != "" {
		return ex.info.Command.GetUser()
	}
	return ex.fwInfo.GetUser()
}

// credentialFor is the credential ex's executor is started with, or nil to
// run it as the agent's user (not root, --switch-user=false, no user, or
// the agent's own uid).
func (a *Agent) credentialFor(ex *executor) (*syscall.Credential, error) {
	a.mu.Lock()
	name := executorUser(ex)
	a.mu.Unlock()
	if a.cfg.NoSwitchUser || os.Geteuid() != 0 || name == "" {
		return nil, nil
	}
	cred, err := lookupCredential(name)
	if err != nil {
		return nil, fmt.Errorf("cannot run as user %q: %w", name, err)
	}
	if int(cred.Uid) == os.Geteuid() && int(cred.Gid) == os.Getegid() {
		return nil, nil
	}
	return cred, nil
}

// lookupCredential resolves name (or a numeric uid) to its uid, primary
// gid and supplementary groups.
func lookupCredential(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user %q has a non-numeric uid %q or gid %q", name, u.Uid, u.Gid)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	gids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("groups of user %q: %w", name, err)
	}
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			cred.Groups = append(cred.Groups, uint32(n))
		}
	}
	return cred, nil
}

// chownTree gives dir and everything in it to cred's user, without
// following symlinks.
func chownTree(dir string, cred *syscall.Credential) error {
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(cred.Uid), int(cred.Gid))
	})
}
