package agent

import (
	"os"
	"os/user"
	"strings"
	"syscall"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func TestExecutorUser(t *testing.T) {
	cmdTask := func(u string) map[string]*agentTask {
		ci := &mesos.CommandInfo{}
		if u != "" {
			ci.User = &u
		}
		return map[string]*agentTask{"t": {info: mesos.TaskInfo{Command: ci}}}
	}
	fw := mesos.FrameworkInfo{User: "fwuser"}
	exUser := "exuser"
	tests := []struct {
		name string
		ex   *executor
		want string
	}{
		{"command task's user", &executor{commandTask: true, fwInfo: fw, tasks: cmdTask("taskuser")}, "taskuser"},
		{"command task without one: framework's", &executor{commandTask: true, fwInfo: fw, tasks: cmdTask("")}, "fwuser"},
		{"custom executor's command user", &executor{fwInfo: fw, info: mesos.ExecutorInfo{Command: &mesos.CommandInfo{User: &exUser}}, tasks: cmdTask("taskuser")}, "exuser"},
		{"custom executor without one: framework's", &executor{fwInfo: fw, info: mesos.ExecutorInfo{Command: &mesos.CommandInfo{}}}, "fwuser"},
	}
	for _, tc := range tests {
		if got := executorUser(tc.ex); got != tc.want {
			t.Errorf("%s: user %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLookupCredential(t *testing.T) {
	if _, err := lookupCredential("allot-no-such-user-15"); err == nil || !strings.Contains(err.Error(), "allot-no-such-user-15") {
		t.Errorf("unknown user: error %v, want one naming the user", err)
	}
	me, err := user.Current()
	if err != nil {
		t.Skip("no current user: ", err)
	}
	su, err := lookupCredential(me.Username)
	if err != nil {
		t.Fatal(err)
	}
	if int(su.cred.Uid) != os.Getuid() || su.name != me.Username || su.home != me.HomeDir {
		t.Errorf("uid %d, name %q, home %q; want %d, %q, %q", su.cred.Uid, su.name, su.home, os.Getuid(), me.Username, me.HomeDir)
	}
}

// An executor switched to another user sees that user's HOME, USER and
// LOGNAME, not the agent's; one that is not switched keeps the agent's;
// what the executor's CommandInfo sets comes last and wins.
func TestExecutorEnvUser(t *testing.T) {
	t.Setenv("HOME", "/root-of-agent")
	t.Setenv("USER", "agentuser")
	t.Setenv("LOGNAME", "agentuser")
	a := &Agent{}
	ex := &executor{fw: "f", id: "e", sandbox: "/sb", containerID: "c"}
	alice := &switchedUser{cred: &syscall.Credential{Uid: 1000, Gid: 1000}, name: "alice", home: "/home/alice"}
	homeless := &switchedUser{cred: &syscall.Credential{Uid: 1001, Gid: 1001}, name: "bob"}
	frameworkHome := []mesos.Environment_Variable{{Name: "HOME", Value: strPtr("/data")}}
	tests := []struct {
		name  string
		su    *switchedUser
		extra []mesos.Environment_Variable
		want  map[string]string // "" : must be absent
	}{
		{"not switched", nil, nil, map[string]string{"HOME": "/root-of-agent", "USER": "agentuser", "LOGNAME": "agentuser"}},
		{"switched", alice, nil, map[string]string{"HOME": "/home/alice", "USER": "alice", "LOGNAME": "alice"}},
		{"switched, no home", homeless, nil, map[string]string{"HOME": "", "USER": "bob", "LOGNAME": "bob"}},
		{"switched, framework sets HOME", alice, frameworkHome, map[string]string{"HOME": "/data", "USER": "alice"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := a.executorEnv(ex, tc.su, tc.extra)
			got := map[string]string{}
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				got[k] = v // the last wins, as for exec.Cmd
			}
			for k, want := range tc.want {
				if v, ok := got[k]; want == "" && ok {
					t.Errorf("%s=%q, want it unset", k, v)
				} else if want != "" && v != want {
					t.Errorf("%s=%q, want %q", k, v, want)
				}
			}
		})
	}
}

// An unknown user is the task's failure, and only when the agent would
// switch: not root, or --switch-user=false, runs as the agent's user.
func TestCredentialFor(t *testing.T) {
	ex := &executor{fwInfo: mesos.FrameworkInfo{User: "allot-no-such-user-15"}}
	a := &Agent{}
	_, err := a.credentialFor(ex)
	if os.Geteuid() == 0 {
		if err == nil || !strings.Contains(err.Error(), `user "allot-no-such-user-15"`) {
			t.Errorf("as root: error %v, want one naming the user", err)
		}
	} else if err != nil {
		t.Errorf("not root: error %v, want none (no switching)", err)
	}
	a.cfg.NoSwitchUser = true
	if cred, err := a.credentialFor(ex); cred != nil || err != nil {
		t.Errorf("--switch-user=false: %v, %v; want no credential", cred, err)
	}
}
