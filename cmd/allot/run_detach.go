package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// detachedEnv marks the background allot run that --detach starts; its
// value is the file descriptor on which it reports the task id.
const detachedEnv = "ALLOT_RUN_DETACHED_FD"

// detachedLogEnv names the background run's log file, which it removes
// when it ends cleanly (its task ended, whatever its code, and the
// framework was torn down) and keeps when something went wrong.
const detachedLogEnv = "ALLOT_RUN_DETACHED_LOG"

// isDetachedChild reports whether this allot run is the background one.
func isDetachedChild() bool { return os.Getenv(detachedEnv) != "" }

// detachRun starts this allot run again in the background, in a session
// of its own with its output in a log file, and returns once it reports
// that the task runs (or ended): a framework whose scheduler is gone is
// removed by the masters after its failover timeout, tasks and all, so the
// background run keeps it subscribed and tears it down when the task ends.
func detachRun(args []string, stdout, stderr io.Writer, asJSON bool) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--detach: finding allot's binary: %v", err)
	}
	logf, err := os.CreateTemp("", "allot-run-*.log")
	if err != nil {
		return fmt.Errorf("--detach: %v", err)
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("--detach: %v", err)
	}
	defer r.Close()
	cmd := exec.Command(exe, append([]string{"run"}, args...)...)
	cmd.Env = append(os.Environ(), detachedEnv+"=3", detachedLogEnv+"="+logf.Name())
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return fmt.Errorf("--detach: starting the background allot run: %v", err)
	}
	id, _ := bufio.NewReader(r).ReadString('\n')
	if id = strings.TrimSpace(id); id == "" {
		cmd.Wait()
		b, _ := os.ReadFile(logf.Name())
		return fmt.Errorf("the background allot run ended before its task ran:\n%s", strings.TrimSpace(string(b)))
	}
	cmd.Process.Release()
	if asJSON {
		if err := printJSON(stdout, runResult{TaskID: id}); err != nil { // run_json.go
			return err
		}
	} else {
		fmt.Fprintln(stdout, id)
	}
	fmt.Fprintf(stderr, "allot run: task %s runs; allot logs %s --follow prints its output (background allot run's log,\nkept if it fails: %s)\n", id, id, logf.Name())
	return nil
}

// detachedReport is the background run's planner hook: it writes the task
// id to the descriptor detachedEnv names at the task's first TASK_RUNNING
// or terminal state. Nil outside the background run.
func detachedReport() func(string, mesos.TaskState) {
	if !isDetachedChild() {
		return nil
	}
	f := os.NewFile(3, "detach-report")
	var once sync.Once
	return func(taskID string, st mesos.TaskState) {
		if st == mesos.TASK_STAGING || st == mesos.TASK_STARTING {
			return
		}
		once.Do(func() {
			fmt.Fprintln(f, taskID)
			f.Close()
		})
	}
}

// detachedDone removes the background run's log after a clean end.
func detachedDone(err error) {
	if !isDetachedChild() {
		return
	}
	if _, ok := err.(exitCode); ok || err == nil {
		os.Remove(os.Getenv(detachedLogEnv))
	}
}
