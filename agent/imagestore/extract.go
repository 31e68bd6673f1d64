package imagestore

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/allot-sched/allot/agent/nslaunch"
)

const (
	whiteoutPrefix = ".wh."
	opaqueMarker   = ".wh..wh..opq"
	opaqueXattr    = "trusted.overlay.opaque"
)

// extract unpacks an uncompressed layer tar into dir with whiteouts in
// overlayfs's form: ".wh.x" becomes a 0/0 character device x, and
// ".wh..wh..opq" marks its directory opaque. Every path is resolved inside
// dir (a layer's links cannot point a later entry outside it). It returns
// the bytes of regular files written.
func extract(r io.Reader, dir string) (int64, error) {
	tr := tar.NewReader(r)
	var size int64
	var dirTimes []*tar.Header
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return size, err
		}
		n, err := extractEntry(tr, h, dir)
		if err != nil {
			return size, fmt.Errorf("%s: %w", h.Name, err)
		}
		size += n
		if h.Typeflag == tar.TypeDir {
			dirTimes = append(dirTimes, h)
		}
	}
	for _, h := range dirTimes { // after their contents changed them
		if p, err := nslaunch.SecureJoin(dir, h.Name); err == nil {
			os.Chtimes(p, time.Now(), h.ModTime)
		}
	}
	return size, nil
}

func extractEntry(tr *tar.Reader, h *tar.Header, dir string) (int64, error) {
	clean := filepath.Clean("/" + h.Name)
	parent, base := filepath.Split(clean)
	pdir, err := nslaunch.SecureJoin(dir, parent)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return 0, err
	}
	if base == opaqueMarker {
		return 0, syscall.Setxattr(pdir, opaqueXattr, []byte("y"), 0)
	}
	if strings.HasPrefix(base, whiteoutPrefix) {
		target := filepath.Join(pdir, strings.TrimPrefix(base, whiteoutPrefix))
		os.RemoveAll(target)
		return 0, syscall.Mknod(target, syscall.S_IFCHR, 0)
	}
	if base == "" || base == "/" {
		return 0, nil // the layer's root itself
	}
	p := filepath.Join(pdir, base)
	if h.Typeflag != tar.TypeDir {
		os.RemoveAll(p) // a later entry replaces an earlier one of the same layer
	}
	mode := uint32(h.Mode & 0o7777)
	var n int64
	switch h.Typeflag {
	case tar.TypeDir:
		if err := os.Mkdir(p, 0o755); err != nil && !os.IsExist(err) {
			return 0, err
		}
	case tar.TypeReg, tar.TypeRegA:
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return 0, err
		}
		n, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return n, err
		}
	case tar.TypeSymlink:
		return 0, lchownTimes(p, h, os.Symlink(h.Linkname, p))
	case tar.TypeLink:
		src, err := nslaunch.SecureJoin(dir, h.Linkname)
		if err != nil {
			return 0, err
		}
		return 0, os.Link(src, p)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		kind := map[byte]uint32{tar.TypeChar: syscall.S_IFCHR, tar.TypeBlock: syscall.S_IFBLK, tar.TypeFifo: syscall.S_IFIFO}[h.Typeflag]
		dev := int((h.Devmajor&0xfff)<<8 | h.Devminor&0xff | (h.Devminor&^0xff)<<12)
		if err := syscall.Mknod(p, kind|mode, dev); err != nil {
			return 0, err
		}
	default:
		return 0, nil // e.g. PAX global headers: nothing on disk
	}
	if err := os.Lchown(p, h.Uid, h.Gid); err != nil && !errors.Is(err, syscall.EPERM) {
		return n, err
	}
	if err := syscall.Chmod(p, mode); err != nil {
		return n, err
	}
	for k, v := range h.PAXRecords {
		if x, ok := strings.CutPrefix(k, "SCHILY.xattr."); ok && strings.HasPrefix(x, "security.capability") {
			syscall.Setxattr(p, x, []byte(v), 0) // file capabilities (ping); others are left out
		}
	}
	return n, os.Chtimes(p, time.Now(), h.ModTime)
}

// lchownTimes gives a symbolic link its owner (its own times are left).
func lchownTimes(p string, h *tar.Header, err error) error {
	if err != nil {
		return err
	}
	if err := os.Lchown(p, h.Uid, h.Gid); err != nil && !errors.Is(err, syscall.EPERM) {
		return err
	}
	return nil
}
