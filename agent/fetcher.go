package agent

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// fetchAll fetches every URI into the sandbox, failing on the first error
// with a message naming the URI.
func fetchAll(uris []mesos.CommandInfo_URI, sandbox string, hc *http.Client) error {
	for _, u := range uris {
		if err := fetch(u, sandbox, hc); err != nil {
			return fmt.Errorf("%s: %w", u.Value, err)
		}
	}
	return nil
}

// fetch downloads (http, https) or copies (local path, file://) one URI into
// the sandbox, then marks it executable or extracts .tar.gz/.tgz/.zip
// archives as asked. output_file names the result inside the sandbox.
func fetch(u mesos.CommandInfo_URI, sandbox string, hc *http.Client) error {
	name := path.Base(u.Value)
	if u.OutputFile != nil && *u.OutputFile != "" {
		name = *u.OutputFile
	}
	if strings.Contains(name, "..") || filepath.IsAbs(name) {
		return fmt.Errorf("output_file %q must be a relative path inside the sandbox", name)
	}
	dst := filepath.Join(sandbox, name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	var src io.ReadCloser
	pu, err := url.Parse(u.Value)
	switch {
	case err == nil && (pu.Scheme == "http" || pu.Scheme == "https"):
		resp, err := hc.Get(u.Value)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return fmt.Errorf("HTTP %s", resp.Status)
		}
		src = resp.Body
	case err == nil && pu.Scheme == "file":
		if src, err = os.Open(pu.Path); err != nil {
			return err
		}
	case err == nil && pu.Scheme == "":
		if src, err = os.Open(u.Value); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unsupported URI scheme (http, https, file and local paths are)")
	}
	defer src.Close()
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if u.GetExecutable() {
		return os.Chmod(dst, 0o755)
	}
	if u.Extract == nil || *u.Extract {
		switch {
		case strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".tgz"):
			return extractTarGz(dst, sandbox)
		case strings.HasSuffix(name, ".zip"):
			return extractZip(dst, sandbox)
		}
	}
	return nil
}

func safeJoin(root, name string) (string, error) {
	p := filepath.Join(root, name)
	if !strings.HasPrefix(p, filepath.Clean(root)+string(os.PathSeparator)) && p != filepath.Clean(root) {
		return "", fmt.Errorf("archive entry %q escapes the sandbox", name)
	}
	return p, nil
}

func extractTarGz(file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p, err := safeJoin(dir, h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(p), 0o755)
			out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, tr); err != nil {
				out.Close()
				return err
			}
			out.Close()
		}
	}
}

func extractZip(file, dir string) error {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, zf := range zr.File {
		p, err := safeJoin(dir, zf.Name)
		if err != nil {
			return err
		}
		if zf.FileInfo().IsDir() {
			os.MkdirAll(p, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		rc, err := zf.Open()
		if err != nil {
			return err
		}
		out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, zf.Mode()&0o777|0o600)
		if err != nil {
			rc.Close()
			return err
		}
		_, err = io.Copy(out, rc)
		rc.Close()
		out.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
