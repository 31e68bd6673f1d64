package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/agent/nslaunch"
)

// taskCommand is the command that runs task ti: its CommandInfo on the
// host, or, when the agent gave the task's container a Spec (the file
// containerSpecEnv names), the Spec's program through this binary's
// `container-launch`, with the launch's pipes (nil on the host). Either way the task's environment is the executor's less its
// token, then the task's CommandInfo variables and MESOS_TASK_ID; in an
// image of its own the agent's variables stay outside (the MESOS_ ones
// are kept), and the image's come first. spec is the Spec it runs with
// (nil on the host), which its COMMAND health checks run in too.
func (ce *commandExecutor) taskCommand(ti mesos.TaskInfo) (cmd *exec.Cmd, pipes *nslaunch.Pipes, spec *nslaunch.Spec, err error) {
	var taskEnv []string
	if ci := ti.Command; ci.Environment != nil {
		for _, v := range ci.Environment.Variables {
			taskEnv = append(taskEnv, v.Name+"="+v.GetValue())
		}
	}
	taskEnv = append(taskEnv, "MESOS_TASK_ID="+ti.TaskID.Value)
	base := withoutExecutorToken(os.Environ())
	s, err := ce.taskSpec(ti) // cmdexec_group.go
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the task's container: %w", err)
	}
	if s == nil {
		argv := commandArgv(ti.Command)
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(base, taskEnv...)
		return cmd, nil, nil, nil
	}
	var keep []string
	for _, kv := range base {
		if strings.HasPrefix(kv, containerSpecEnv+"=") || strings.HasPrefix(kv, groupDirEnv+"=") || s.Rootfs != "" && !strings.HasPrefix(kv, "MESOS_") {
			continue
		}
		keep = append(keep, kv)
	}
	s.Env = nslaunch.MergeEnv(keep, s.Env, taskEnv)
	self, err := os.Executable()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd, pipes, err = nslaunch.Command([]string{self, "container-launch"}, s)
	if err != nil {
		return nil, nil, nil, err
	}
	cmd.Env = s.Env // what its health checks see
	return cmd, pipes, s, nil
}

// containedCheck is cmd, a COMMAND health check built to run on the host,
// run in the task's container instead (spec: the task's), as Mesos runs
// such checks in the task's mount namespace: the image's files, the
// sandbox and volumes where the task sees them.
func containedCheck(ctx context.Context, spec *nslaunch.Spec, cmd *exec.Cmd) (*exec.Cmd, *nslaunch.Pipes, error) {
	s := *spec
	s.Argv, s.Env = cmd.Args, cmd.Env
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	p, err := nslaunch.NewPipes(&s)
	if err != nil {
		return nil, nil, err
	}
	args := nslaunch.LaunchArgs([]string{self, "container-launch"})
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	c.ExtraFiles = p.ExtraFiles()
	return c, p, nil
}
