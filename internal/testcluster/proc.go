package testcluster

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Proc is a process started by a test, in its own process group so that
// killing it kills whatever it started without a group of its own.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	// Out is the process's stdout; for a process started with Start it
	// holds stderr too, interleaved as written.
	Out *Buffer
	// Stderr is the process's stderr: Out itself for Start, a buffer of
	// its own for StartSplit.
	Stderr *Buffer

	done chan struct{}
	err  error // cmd.Wait's result, set before done is closed
}

// Buffer is an output buffer safe to read while the process writes it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Start runs args[0] with args[1:] and the test's environment plus env,
// stdout and stderr into one buffer. At cleanup the process group is
// killed; a data race reported in its output fails the test, and if the
// test failed, the output's tail is logged.
func Start(t testing.TB, name string, env []string, args ...string) *Proc {
	t.Helper()
	return start(t, name, env, false, args)
}

// StartSplit is Start keeping stdout and stderr apart, for a program
// whose stdout is its result.
func StartSplit(t testing.TB, name string, env []string, args ...string) *Proc {
	t.Helper()
	return start(t, name, env, true, args)
}

func start(t testing.TB, name string, env []string, split bool, args []string) *Proc {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), env...)
	p := &Proc{Name: name, Cmd: cmd, Out: &Buffer{}, done: make(chan struct{})}
	p.Stderr = p.Out
	if split {
		p.Stderr = &Buffer{}
	}
	cmd.Stdout, cmd.Stderr = p.Out, p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.Kill(syscall.SIGKILL)
		if strings.Contains(p.Stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("%s reported a data race", name)
		}
		if t.Failed() {
			what := "output"
			if split {
				what = "stderr"
			}
			t.Logf("--- %s of %s ---\n%s", what, name, Tail(p.Stderr.String(), 6000))
		}
	})
	return p
}

// Done is closed once the process has exited and its output is read.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the process's exit as exec.Cmd.Wait reports it (nil for status
// 0); it is meaningful only once Done is closed.
func (p *Proc) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Kill sends sig to the process group and waits for the process to exit;
// if it has not after 10s, the group is sent SIGKILL.
func (p *Proc) Kill(sig syscall.Signal) {
	if p.Exited() {
		return
	}
	syscall.Kill(-p.Cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Tail returns the last n bytes of s, marked as cut when they are not all.
func Tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
