package nslaunch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// hostDevices are the device files every container gets in its /dev,
// bound from the host's (mknod would need the devices cgroup's leave too).
var hostDevices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// enterRootfs prepares s.Rootfs (a mount point of its own, /proc, /sys
// read-only, a minimal /dev, the Spec's mounts and devices) and makes it
// the root: pivot_root, then the old root is detached, so nothing of the
// host's filesystem is left reachable but what was bound in.
func enterRootfs(s *Spec) error {
	root := s.Rootfs
	if err := syscall.Mount(root, root, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("container-launch: binding rootfs %s: %w", root, err)
	}
	if err := mountAt(root, "/proc", "proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return err
	}
	// sysfs is read-only and only a convenience (tools read it); a host
	// that refuses it does not stop the container.
	_ = mountAt(root, "/sys", "sysfs", "sysfs", syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
	if err := minimalDev(root); err != nil {
		return err
	}
	if err := bindAll(root, s.Mounts); err != nil {
		return err
	}
	for _, d := range s.Devices {
		src := d.HostPath
		if src == "" {
			src = d.Path
		}
		if err := bind(root, Mount{Source: src, Target: d.Path}); err != nil {
			return err
		}
	}
	if err := os.Chdir(root); err != nil {
		return fmt.Errorf("container-launch: %w", err)
	}
	if err := syscall.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("container-launch: pivot_root into %s: %w", root, err)
	}
	// The old root is stacked under the new one at "/": detaching "/"
	// once removes it and leaves the image's root on top.
	if err := syscall.Unmount(".", syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("container-launch: detaching the host's root: %w", err)
	}
	return os.Chdir("/")
}

// mountAt mounts a filesystem of fstype at target inside root, making the
// directory if the image lacks it.
func mountAt(root, target, source, fstype string, flags uintptr, data string) error {
	p, err := SecureJoin(root, target)
	if err == nil {
		err = os.MkdirAll(p, 0o755)
	}
	if err == nil {
		err = syscall.Mount(source, p, fstype, flags, data)
	}
	if err != nil {
		return fmt.Errorf("container-launch: mounting %s at %s: %w", fstype, target, err)
	}
	return nil
}

// minimalDev gives root a fresh /dev: a tmpfs with the usual character
// devices, the fd links, a private devpts and /dev/shm.
func minimalDev(root string) error {
	if err := mountAt(root, "/dev", "tmpfs", "tmpfs", syscall.MS_NOSUID|syscall.MS_NOEXEC, "mode=755,size=65536k"); err != nil {
		return err
	}
	dev := filepath.Join(root, "dev") // a fresh tmpfs: no links to follow
	for _, name := range hostDevices {
		if _, err := os.Stat("/dev/" + name); err != nil {
			continue // e.g. no /dev/tty where the agent has no terminal device
		}
		if err := bind(root, Mount{Source: "/dev/" + name, Target: "/dev/" + name}); err != nil {
			return err
		}
	}
	links := map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
		"stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx"}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(dev, name)); err != nil {
			return fmt.Errorf("container-launch: /dev/%s: %w", name, err)
		}
	}
	if err := mountAt(root, "/dev/pts", "devpts", "devpts", syscall.MS_NOSUID|syscall.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return err
	}
	return mountAt(root, "/dev/shm", "shm", "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "mode=1777,size=65536k")
}

// bindAll binds each mount, in order, under root ("" is the host's root).
func bindAll(root string, ms []Mount) error {
	for _, m := range ms {
		if err := bind(root, m); err != nil {
			return err
		}
	}
	return nil
}

// bind binds m.Source at m.Target under root, making the target (a
// directory, or an empty file for a file) if it is missing, read-only if
// asked.
func bind(root string, m Mount) error {
	st, err := os.Stat(m.Source)
	if err != nil {
		return fmt.Errorf("container-launch: mount source: %w", err)
	}
	target := m.Target
	if root != "" {
		if target, err = SecureJoin(root, m.Target); err != nil {
			return err
		}
	}
	if st.IsDir() {
		err = os.MkdirAll(target, 0o755)
	} else if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
		var f *os.File
		if f, err = os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o644); err == nil {
			f.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("container-launch: mount target %s: %w", m.Target, err)
	}
	if err := syscall.Mount(m.Source, target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("container-launch: binding %s at %s: %w", m.Source, m.Target, err)
	}
	if m.ReadOnly {
		flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY | syscall.MS_REC)
		if err := syscall.Mount("", target, "", flags, ""); err != nil {
			return fmt.Errorf("container-launch: making %s read-only: %w", m.Target, err)
		}
	}
	return nil
}

// SecureJoin is path inside root with every symbolic link on the way
// resolved as the container will see it (an absolute link is relative to
// root, ".." stops at root), so that an image cannot point a mount target
// at the host's files. Components that do not exist yet are kept as named.
func SecureJoin(root, path string) (string, error) {
	cur := "/"
	rest := strings.Split(filepath.Clean("/"+path), "/")
	for hops := 0; len(rest) > 0; {
		part := rest[0]
		rest = rest[1:]
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(filepath.Join(root, next))
		if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Mode()&fs.ModeSymlink == 0) {
			cur = next
			continue
		}
		if err != nil {
			return "", fmt.Errorf("container-launch: %s: %w", path, err)
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("container-launch: %s: too many symbolic links", path)
		}
		link, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			return "", fmt.Errorf("container-launch: %s: %w", path, err)
		}
		if filepath.IsAbs(link) {
			cur = "/"
		}
		rest = append(strings.Split(link, "/"), rest...)
	}
	return filepath.Join(root, cur), nil
}
