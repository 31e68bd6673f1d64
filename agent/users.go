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

// switchedUser is the user an executor is switched to: its credential,
// and the name and home its environment gives (as Mesos: a task run as
// alice sees HOME, USER and LOGNAME of alice, not of the agent's root).
type switchedUser struct {
	cred       *syscall.Credential
	name, home string
}

// credential is nil when there is no switch.
func (u *switchedUser) credential() *syscall.Credential {
	if u == nil {
		return nil
	}
	return u.cred
}

// userEnvKeys are the variables that name the user; an executor switched to
// another user gets them from that user, not from the agent.
var userEnvKeys = []string{"HOME", "USER", "LOGNAME"}

// env is HOME, USER and LOGNAME of u; HOME is left out when the user
// database has no home for it.
func (u *switchedUser) env() []string {
	if u == nil {
		return nil
	}
	var out []string
	if u.home != "" {
		out = append(out, "HOME="+u.home)
	}
	return append(out, "USER="+u.name, "LOGNAME="+u.name)
}

// credentialFor is the user ex's executor is switched to, or nil to run it
// as the agent's user (not root, --switch-user=false, no user, or the
// agent's own uid).
func (a *Agent) credentialFor(ex *executor) (*switchedUser, error) {
	a.mu.Lock()
	name := executorUser(ex)
	a.mu.Unlock()
	if a.cfg.NoSwitchUser || os.Geteuid() != 0 || name == "" {
		return nil, nil
	}
	su, err := lookupCredential(name)
	if err != nil {
		return nil, fmt.Errorf("cannot run as user %q: %w", name, err)
	}
	if int(su.cred.Uid) == os.Geteuid() && int(su.cred.Gid) == os.Getegid() {
		return nil, nil
	}
	return su, nil
}

// lookupCredential resolves name (or a numeric uid) to its uid, primary
// gid and supplementary groups, its user name and its home.
func lookupCredential(name string) (*switchedUser, error) {
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
	return &switchedUser{cred: cred, name: u.Username, home: u.HomeDir}, nil
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
