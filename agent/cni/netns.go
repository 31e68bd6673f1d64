package cni

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// NewNetNS makes a new network namespace and holds it by a bind mount on
// path (a new file), with its loopback up.
func NewNetNS(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
	if err != nil {
		return fmt.Errorf("creating the network namespace handle: %w", err)
	}
	f.Close()
	err = onThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
		}
		return nil
	}, func() error {
		src := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
		if err := unix.Mount(src, path, "none", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind mounting %s on %s: %w", src, path, err)
		}
		return loopbackUp()
	})
	if err != nil {
		unix.Unmount(path, unix.MNT_DETACH)
		os.Remove(path)
	}
	return err
}

// onThread runs enter and then fn on one OS thread, and moves the thread
// back to the network namespace it started in. Only a thread that cannot
// be moved back is thrown away: a thread that ends sends the parent-death
// signal (Pdeathsig) to every child it forked, and the Go runtime may have
// forked a task's process from this very thread (the command executor
// does).
func onThread(enter, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		back, err := onThisThread(enter, fn)
		if back {
			runtime.UnlockOSThread()
		} // else: left locked, the thread ends with this goroutine
		errc <- err
	}()
	return <-errc
}

// onThisThread is onThread's work on the calling goroutine's locked
// thread; back reports whether the thread is in its first namespace again.
func onThisThread(enter, fn func() error) (back bool, err error) {
	self := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
	orig, err := unix.Open(self, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true, fmt.Errorf("opening this thread's network namespace: %w", err)
	}
	defer unix.Close(orig)
	if err = enter(); err == nil {
		err = fn()
	}
	return unix.Setns(orig, unix.CLONE_NEWNET) == nil, err
}

// loopbackUp sets lo up in the calling thread's network namespace, as a
// new namespace starts with it down and programs expect 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket for lo: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("reading lo's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("setting lo up: %w", err)
	}
	return nil
}

// RemoveNetNS lets go of the namespace held on path and removes the file;
// a path that is gone is not an error. The namespace itself ends when
// the last process in it does.
func RemoveNetNS(path string) error {
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmounting the network namespace %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// isNetNS reports whether path holds a network namespace (a live bind
// mount of an nsfs file), as a namespace whose mount is gone (say, the
// host rebooted) no longer needs, or can take, a DEL inside it.
func isNetNS(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == unix.NSFS_MAGIC
}

// InNetNS runs fn on a thread in the network namespace held on path.
// Sockets fn opens stay in that namespace (health checks of a task in
// one dial from inside it; tests listen inside).
func InNetNS(path string, fn func() error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return onThread(func() error {
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("setns %s: %w", path, err)
		}
		return nil
	}, fn)
}
