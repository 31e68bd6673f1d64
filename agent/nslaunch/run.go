package nslaunch

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
)

// Main is `allot container-launch`: it reads the Spec from --spec-fd (a
// pipe from Command) or --spec (a file) and runs it. It returns only on
// failure, having written nothing to stdout.
func Main(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("container-launch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fd := fs.Int("spec-fd", -1, "read the spec from this inherited descriptor")
	errFD := fs.Int("err-fd", -1, "report a failure before the program runs to this inherited descriptor")
	file := fs.String("spec", "", "read the spec from this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *errFD >= 0 {
		// Closed by the exec: the caller reads EOF once the program runs.
		syscall.CloseOnExec(*errFD)
		report := os.NewFile(uintptr(*errFD), "err-fd")
		defer report.Close()
		err := launchFrom(*fd, *file)
		fmt.Fprint(report, err)
		return err
	}
	return launchFrom(*fd, *file)
}

// launchFrom reads the Spec from descriptor fd or file and runs it.
func launchFrom(fd int, file string) error {
	var f *os.File
	switch {
	case fd >= 0:
		f = os.NewFile(uintptr(fd), "spec-fd-"+strconv.Itoa(fd))
	case file != "":
		var err error
		if f, err = os.Open(file); err != nil {
			return err
		}
	default:
		return errors.New("container-launch: --spec-fd or --spec is required (it is started by agents, not by hand)")
	}
	s, err := Decode(f)
	f.Close() // the program must not inherit it
	if err != nil {
		return err
	}
	return Run(s)
}

// Run makes the container s describes around the calling process and execs
// s.Argv in it; it returns only on failure. The steps run on one locked OS
// thread, whose namespaces the exec keeps: the cgroups are joined first
// (the whole process moves, and so is counted against its container for
// the rest), then the network namespace, then a private mount namespace is
// made, the mounts bound, the root pivoted, and the user dropped last
// (mounting and joining need root).
func Run(s *Spec) error {
	if err := s.Validate(); err != nil {
		return err
	}
	// Never unlocked: the thread is changed for good, and execs.
	runtime.LockOSThread()
	if err := joinCgroups(s.Cgroups); err != nil {
		return err
	}
	if s.NetNS != "" {
		if err := joinNetNS(s.NetNS); err != nil {
			return err
		}
	}
	if s.Hostname != "" {
		if err := syscall.Unshare(syscall.CLONE_NEWUTS); err != nil {
			return fmt.Errorf("container-launch: new UTS namespace: %w", err)
		}
		if err := syscall.Sethostname([]byte(s.Hostname)); err != nil {
			return fmt.Errorf("container-launch: hostname %q: %w", s.Hostname, err)
		}
	}
	if s.Rootfs != "" || len(s.Mounts) > 0 || len(s.Devices) > 0 {
		if err := privateMountNS(); err != nil {
			return err
		}
	}
	if s.Rootfs != "" {
		if err := enterRootfs(s); err != nil {
			return err
		}
	} else if err := bindAll("", s.Mounts); err != nil {
		return err
	}
	if s.User != nil {
		if err := dropTo(s.User); err != nil {
			return err
		}
	}
	dir := s.Dir
	if dir == "" {
		dir = "/"
	}
	if err := os.Chdir(dir); err != nil {
		return fmt.Errorf("container-launch: working directory %s: %w", dir, err)
	}
	path, err := lookPath(s.Argv[0], s.Env)
	if err != nil {
		return fmt.Errorf("container-launch: %w", err)
	}
	err = syscall.Exec(path, s.Argv, MergeEnv(s.Env))
	return fmt.Errorf("container-launch: exec %s: %w", path, err)
}

// joinCgroups writes the process's pid into each cgroup.procs: the kernel
// moves every thread of it, and what it execs and forks stays there.
func joinCgroups(procs []string) error {
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, p := range procs {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.Write(pid)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("container-launch: joining cgroup %s: %w", filepath.Dir(p), err)
		}
	}
	return nil
}

// joinNetNS moves the calling thread into the network namespace at path.
func joinNetNS(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("container-launch: network namespace: %w", err)
	}
	defer f.Close()
	if _, _, e := syscall.RawSyscall(sysSetns(), f.Fd(), syscall.CLONE_NEWNET, 0); e != 0 {
		return fmt.Errorf("container-launch: joining network namespace %s: %w", path, e)
	}
	return nil
}

// privateMountNS gives the calling thread a mount namespace of its own whose
// mounts propagate nowhere: what the container mounts stays in it and goes
// with its last process.
func privateMountNS() error {
	if err := syscall.Unshare(syscall.CLONE_NEWNS); err != nil {
		return fmt.Errorf("container-launch: new mount namespace: %w", err)
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("container-launch: making mounts private: %w", err)
	}
	return nil
}

// dropTo switches every thread to u (Go applies set*id to all threads).
func dropTo(u *User) error {
	groups := make([]int, len(u.Groups))
	for i, g := range u.Groups {
		groups[i] = int(g)
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("container-launch: groups %v: %w", u.Groups, err)
	}
	if err := syscall.Setgid(int(u.GID)); err != nil {
		return fmt.Errorf("container-launch: gid %d: %w", u.GID, err)
	}
	if err := syscall.Setuid(int(u.UID)); err != nil {
		return fmt.Errorf("container-launch: uid %d: %w", u.UID, err)
	}
	return nil
}

// Check says what this process lacks to make a container's mount
// namespace ("" when nothing): it must be root, and the kernel must let it
// unshare one (tried on a throwaway thread).
func Check() string {
	if os.Geteuid() != 0 {
		return fmt.Sprintf("mount namespaces need root (CAP_SYS_ADMIN); the agent runs as uid %d", os.Geteuid())
	}
	if _, err := os.Stat("/proc/self/ns/mnt"); err != nil {
		return "the kernel has no mount namespaces (/proc/self/ns/mnt: " + err.Error() + ")"
	}
	done := make(chan error, 1)
	go func() {
		// Left locked, the thread exits with the goroutine and takes its
		// new namespace with it.
		runtime.LockOSThread()
		done <- syscall.Unshare(syscall.CLONE_NEWNS)
	}()
	if err := <-done; err != nil {
		return "cannot make a mount namespace: unshare(CLONE_NEWNS): " + err.Error()
	}
	return ""
}

// sysSetns is setns(2)'s number, which package syscall does not name.
func sysSetns() uintptr {
	switch runtime.GOARCH {
	case "amd64":
		return 308
	case "386":
		return 346
	case "arm":
		return 375
	case "ppc64", "ppc64le":
		return 350
	case "s390x":
		return 339
	default: // arm64, riscv64, loong64: the generic table
		return 268
	}
}
