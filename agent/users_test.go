package agent

import (
	"os"
	"os/user"
	"strings"
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
	cred, err := lookupCredential(me.Username)
	if err != nil {
		t.Fatal(err)
	}
	if int(cred.Uid) != os.Getuid() {
		t.Errorf("uid %d, want %d", cred.Uid, os.Getuid())
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
