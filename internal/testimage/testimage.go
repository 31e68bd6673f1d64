package testimage

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"debug/elf"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// OSRelease is the image's /etc/os-release.
const OSRelease = "ID=allot-test-image\nPRETTY_NAME=\"allot test image\"\n"

// Registry is an OCI registry served on loopback for one test.
type Registry struct {
	// Host is its host:port (plain HTTP: go-containerregistry speaks it
	// to loopback registries).
	Host string
	// BlobGets counts blob downloads (GET .../blobs/...), the layer and
	// config fetches a pull makes.
	BlobGets atomic.Int64
	user     string
	pass     string
}

// StartRegistry starts a registry for the test; with a user, every
// request must carry that user and password (basic auth), as a private
// registry demands.
func StartRegistry(t testing.TB, user, pass string) *Registry {
	r := &Registry{user: user, pass: pass}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.user != "" {
			if u, p, ok := req.BasicAuth(); !ok || u != r.user || p != r.pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="testimage"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
		}
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
			r.BlobGets.Add(1)
		}
		reg.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.Host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// Push stores img in the registry as repo:tag and returns the reference.
func (r *Registry) Push(t testing.TB, repoTag string, img v1.Image) string {
	t.Helper()
	ref, err := name.ParseReference(r.Host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	var opts []remote.Option
	if r.user != "" {
		opts = append(opts, remote.WithAuth(authn.FromConfig(authn.AuthConfig{Username: r.user, Password: r.pass})))
	}
	if err := remote.Write(ref, img, opts...); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	return ref.Name()
}

// Busybox builds the test image: busybox and its applets in /bin, the
// marker file /marker.txt holding marker, /etc/os-release (OSRelease),
// and, in a third layer, padding bytes of random data in /padding (0: no
// such layer). Its second layer removes /etc/doomed, which its first has
// (a whiteout). Its config sets PATH and IMAGE_VAR=from-image and runs
// `cat /marker.txt` by default. It skips t when /bin/busybox is missing.
func Busybox(t testing.TB, marker string, padding int) v1.Image {
	t.Helper()
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Skip("needs Debian's busybox-static at /bin/busybox (apt-get install busybox-static): " + err.Error())
	}
	if f, err := elf.NewFile(bytes.NewReader(bb)); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Skip("/bin/busybox is dynamically linked (Debian's busybox); the test image needs busybox-static")
			}
		}
	}
	base := []entry{{name: "bin/", dir: true}, {name: "bin/busybox", body: bb, mode: 0o755}, {name: "etc/", dir: true},
		{name: "etc/os-release", body: []byte(OSRelease)}, {name: "etc/doomed", body: []byte("lower layer")}, {name: "tmp/", dir: true, mode: 0o1777}}
	for _, applet := range []string{"sh", "cat", "ls", "echo", "id", "pwd", "test", "sleep", "env", "wc", "true"} {
		base = append(base, entry{name: "bin/" + applet, link: "busybox"})
	}
	layers := []v1.Layer{layer(t, base), layer(t, []entry{{name: "marker.txt", body: []byte(marker)}, {name: "etc/.wh.doomed"}})}
	if padding > 0 {
		pad := make([]byte, padding)
		rand.Read(pad)
		layers = append(layers, layer(t, []entry{{name: "padding", body: pad}}))
	}
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Env = []string{"PATH=/bin", "IMAGE_VAR=from-image"}
	cf.Config.Cmd = []string{"cat", "/marker.txt"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	return img
}

type entry struct {
	name string
	body []byte
	link string
	dir  bool
	mode int64
}

func layer(t testing.TB, entries []entry) v1.Layer {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: time.Unix(1700000000, 0)}
		switch {
		case e.dir:
			h.Typeflag = tar.TypeDir
			if h.Mode == 0 {
				h.Mode = 0o755
			}
		case e.link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.link, 0o777
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.body))
			if h.Mode == 0 {
				h.Mode = 0o644
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(e.body)
	}
	tw.Close()
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}
