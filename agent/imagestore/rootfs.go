package imagestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// chooseBackend picks how root filesystems are assembled: overlayfs when
// asked or when a trial mount in dir succeeds, a copy otherwise; it says
// why.
func chooseBackend(want, dir string) (string, string, error) {
	switch want {
	case "copy":
		return "copy", "copy requested by --image-provisioner-backend", nil
	case "overlay", "":
	default:
		return "", "", fmt.Errorf("--image-provisioner-backend: %q is neither overlay nor copy", want)
	}
	err := tryOverlay(dir)
	switch {
	case err == nil && want == "overlay":
		return "overlay", "overlay requested by --image-provisioner-backend", nil
	case err == nil:
		return "overlay", "overlayfs mounts under " + dir, nil
	case want == "overlay":
		return "", "", fmt.Errorf("--image-provisioner-backend=overlay: %w", err)
	}
	return "copy", "overlayfs unusable (" + err.Error() + "); each container gets a copy of its image's layers", nil
}

// tryOverlay mounts and unmounts a throwaway overlay in dir.
func tryOverlay(dir string) error {
	t, err := os.MkdirTemp(dir, "overlay-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(t)
	for _, d := range []string{"lower", "upper", "work", "merged"} {
		if err := os.Mkdir(filepath.Join(t, d), 0o755); err != nil {
			return err
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", filepath.Join(t, "lower"), filepath.Join(t, "upper"), filepath.Join(t, "work"))
	if err := syscall.Mount("overlay", filepath.Join(t, "merged"), "overlay", 0, opts); err != nil {
		return fmt.Errorf("mount -t overlay: %w", err)
	}
	return syscall.Unmount(filepath.Join(t, "merged"), syscall.MNT_DETACH)
}

// holding is what a container directory's image.json records.
type holding struct {
	Image   string   `json:"image"`
	Layers  []string `json:"layers"`
	Backend string   `json:"backend"`
}

// Provision assembles img's root filesystem for the container whose
// directory is dir and returns its path (dir/rootfs). The container's
// layers stay in the store until Release.
func (s *Store) Provision(img *Image, dir string) (string, error) {
	rootfs := filepath.Join(dir, "rootfs")
	if err := os.MkdirAll(rootfs, 0o755); err != nil {
		return "", err
	}
	s.use(dir, img.Layers, true)
	h, _ := json.Marshal(holding{Image: img.Ref, Layers: img.Layers, Backend: s.backend})
	err := os.WriteFile(filepath.Join(dir, "image.json"), h, 0o600)
	if err == nil && s.backend == "overlay" {
		err = s.mountOverlay(img, dir, rootfs)
	} else if err == nil {
		err = s.copyLayers(img, rootfs)
	}
	if err != nil {
		s.Release(dir)
		return "", fmt.Errorf("assembling the rootfs of image %q (%s): %w", img.Ref, s.backend, err)
	}
	return rootfs, nil
}

func (s *Store) mountOverlay(img *Image, dir, rootfs string) error {
	upper, work := filepath.Join(dir, "upper"), filepath.Join(dir, "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	lower := make([]string, 0, len(img.Layers))
	for i := len(img.Layers) - 1; i >= 0; i-- { // overlayfs lists the top first
		lower = append(lower, s.layerDir(img.Layers[i]))
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", strings.Join(lower, ":"), upper, work)
	if len(opts) >= os.Getpagesize() {
		return fmt.Errorf("%d layers make overlay options longer than a page; use --image-provisioner-backend=copy", len(lower))
	}
	return syscall.Mount("overlay", rootfs, "overlay", 0, opts)
}

// copyLayers applies img's layers to rootfs, bottom first: a whiteout
// removes what lower layers put at its path, an opaque directory hides
// their contents.
func (s *Store) copyLayers(img *Image, rootfs string) error {
	for _, hex := range img.Layers {
		src := s.layerDir(hex)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == src {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			dst := filepath.Join(rootfs, rel)
			return copyEntry(p, dst, d)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func copyEntry(src, dst string, d fs.DirEntry) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(src, &st); err != nil {
		return err
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFCHR && st.Rdev == 0 { // whiteout
		return os.RemoveAll(dst)
	}
	if d.IsDir() {
		if opaque(src) {
			os.RemoveAll(dst)
		}
		if fi, err := os.Lstat(dst); err == nil && !fi.IsDir() {
			os.Remove(dst)
		}
		if err := os.Mkdir(dst, 0o755); err != nil && !os.IsExist(err) {
			return err
		}
		return attrs(dst, &st)
	}
	os.RemoveAll(dst)
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		to, err := os.Readlink(src)
		if err == nil {
			err = os.Symlink(to, dst)
		}
		if err == nil {
			err = os.Lchown(dst, int(st.Uid), int(st.Gid))
		}
		return err
	case syscall.S_IFREG:
		if err := copyFile(src, dst); err != nil {
			return err
		}
	default:
		if err := syscall.Mknod(dst, st.Mode, int(st.Rdev)); err != nil {
			return err
		}
	}
	return attrs(dst, &st)
}

func opaque(dir string) bool {
	buf := make([]byte, 1)
	n, err := syscall.Getxattr(dir, opaqueXattr, buf)
	return err == nil && n == 1 && buf[0] == 'y'
}

func attrs(p string, st *syscall.Stat_t) error {
	if err := os.Lchown(p, int(st.Uid), int(st.Gid)); err != nil && !errors.Is(err, syscall.EPERM) {
		return err
	}
	return syscall.Chmod(p, st.Mode&0o7777)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = out.ReadFrom(in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// Release undoes Provision for the container directory dir: the rootfs is
// unmounted (lazily: a process of the container may still hold it) and
// removed, and its layers are free for GC. It is idempotent.
func (s *Store) Release(dir string) error {
	rootfs := filepath.Join(dir, "rootfs")
	b, err := os.ReadFile(filepath.Join(dir, "image.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var h holding
	json.Unmarshal(b, &h)
	if err := syscall.Unmount(rootfs, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("unmounting %s: %w", rootfs, err)
	}
	for _, d := range []string{"rootfs", "upper", "work", "image.json"} {
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			return err
		}
	}
	s.use(dir, h.Layers, false)
	return nil
}

// Adopt records that the live container directory dir (provisioned by an
// earlier run of the agent) holds its layers, so GC leaves them.
func (s *Store) Adopt(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "image.json"))
	if err != nil {
		return
	}
	var h holding
	if json.Unmarshal(b, &h) == nil {
		s.use(dir, h.Layers, true)
	}
}
