package agent

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/agent/nslaunch"
)

// A container that asks for nothing the launcher gives starts exactly as
// before: same program, environment and user, no launcher, no Spec file.
func TestPrepareContainerPlainIsUnchanged(t *testing.T) {
	mesosType := mesos.ContainerInfo_MESOS
	for _, c := range []*mesos.ContainerInfo{nil, {Type: &mesosType}} {
		for _, command := range []bool{false, true} {
			a := &Agent{cfg: Config{WorkDir: t.TempDir(), ExecutorCommand: []string{"/bin/allot", "executor"}}, log: zerolog.Nop()}
			ex := &executor{containerID: "c1", sandbox: "/sb", container: c, command: command, commandTask: command,
				containerCommand: &mesos.CommandInfo{Value: strPtr("echo hi")}}
			lc, err := a.prepareContainer(ex, "/sb/exe", []string{"exe", "-v"}, []string{"PATH=/usr/bin"}, []string{"MESOS_X=1"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := &containerLaunch{path: "/sb/exe", argv: []string{"exe", "-v"}, env: []string{"PATH=/usr/bin", "MESOS_X=1"}}
			if !reflect.DeepEqual(lc, want) {
				t.Errorf("container %v, command %v: %+v, want %+v", c, command, lc, want)
			}
			if _, err := os.Stat(a.containerDir("c1")); err == nil {
				t.Errorf("a Spec directory was made for a plain container")
			}
		}
	}
}

func TestCommandArgv(t *testing.T) {
	f := false
	tests := []struct {
		ci   *mesos.CommandInfo
		want []string
	}{
		{&mesos.CommandInfo{Value: strPtr("echo $X")}, []string{"/bin/sh", "-c", "echo $X"}},
		{&mesos.CommandInfo{Shell: &f, Value: strPtr("/bin/echo"), Arguments: []string{"echo", "a", "b"}}, []string{"/bin/echo", "a", "b"}},
		{&mesos.CommandInfo{Shell: &f, Value: strPtr("/bin/true")}, []string{"/bin/true"}},
	}
	for _, tc := range tests {
		if got := commandArgv(tc.ci); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("commandArgv(%v) = %q, want %q", tc.ci, got, tc.want)
		}
	}
}

// The command executor runs a task whose container has a Spec through the
// launcher, with the task's environment merged over the Spec's: in an image
// the host's variables stay out (MESOS_ ones pass), the task's win over the
// image's; without a Spec it runs the command on the host as before.
func TestTaskCommandThroughLauncher(t *testing.T) {
	ti := mesos.TaskInfo{TaskID: mesos.TaskID{Value: "t1"}, Command: &mesos.CommandInfo{Value: strPtr("cat /etc/os-release"),
		Environment: &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: "GREETING", Value: strPtr("task")}}}}}
	ce := &commandExecutor{log: zerolog.Nop()}
	t.Setenv("HOST_ONLY", "1")
	t.Setenv("MESOS_FRAMEWORK_ID", "fw")
	t.Setenv(containerSpecEnv, "")
	cmd, pipes, spec, err := ce.taskCommand(ti)
	if err != nil || pipes != nil || spec != nil || cmd.Args[0] != "/bin/sh" || !slices.Contains(cmd.Env, "HOST_ONLY=1") {
		t.Fatalf("host task: %v %v %q", err, pipes != nil, cmd.Args)
	}
	spec = &nslaunch.Spec{Rootfs: "/rootfs", Argv: []string{"/bin/sh", "-c", "cat /etc/os-release"},
		Env: []string{"PATH=/img/bin", "GREETING=image", "MESOS_SANDBOX=" + nslaunch.SandboxPath}}
	p := filepath.Join(t.TempDir(), "task.json")
	f, _ := os.Create(p)
	spec.Encode(f)
	f.Close()
	t.Setenv(containerSpecEnv, p)
	t.Setenv("MESOS_SANDBOX", "/host/sandbox")
	cmd, pipes, spec, err = ce.taskCommand(ti)
	if err != nil || spec == nil || spec.Rootfs != "/rootfs" {
		t.Fatal(spec, err)
	}
	defer pipes.Started(errors.New("not started"))
	if !strings.HasSuffix(strings.Join(cmd.Args, " "), "container-launch --spec-fd 3 --err-fd 4") {
		t.Errorf("args %q, want the launcher", cmd.Args)
	}
	for _, want := range []string{"PATH=/img/bin", "GREETING=task", "MESOS_FRAMEWORK_ID=fw", "MESOS_TASK_ID=t1", "MESOS_SANDBOX=" + nslaunch.SandboxPath} {
		if !slices.Contains(cmd.Env, want) {
			t.Errorf("task env lacks %s: %q", want, cmd.Env)
		}
	}
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "HOST_ONLY=") || strings.HasPrefix(kv, containerSpecEnv+"=") {
			t.Errorf("task env in an image has %s", kv)
		}
	}
}
