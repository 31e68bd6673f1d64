package imagestore

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/internal/testimage"
)

func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("extracting layers (whiteouts are device files) and mounting need root")
	}
}

func openStore(t *testing.T, cfg Config) *Store {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(t.TempDir(), "store")
	}
	cfg.Log = zerolog.Nop()
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A pull fetches each layer once; the same reference again is served from
// the store without a blob fetch, and a fresh pull (cached=false) of an
// unchanged image fetches no layer again.
func TestGetCachesLayers(t *testing.T) {
	needRoot(t)
	reg := testimage.StartRegistry(t, "", "")
	ref := reg.Push(t, "test/busybox:1", testimage.Busybox(t, "marker-1", 0))
	s := openStore(t, Config{})
	img, err := s.Get(context.Background(), ref, true)
	if err != nil {
		t.Fatal(err)
	}
	first := reg.BlobGets.Load()
	if len(img.Layers) != 2 || first != 3 { // two layers and the config
		t.Fatalf("%d layers, %d blob fetches; want 2 and 3", len(img.Layers), first)
	}
	if img.Config.Cmd[0] != "cat" || img.Config.Env[1] != "IMAGE_VAR=from-image" {
		t.Errorf("runtime config %+v", img.Config)
	}
	if _, err := s.Get(context.Background(), ref, true); err != nil || reg.BlobGets.Load() != first {
		t.Errorf("cached get: %v, %d blob fetches after %d", err, reg.BlobGets.Load(), first)
	}
	if _, err := s.Get(context.Background(), ref, false); err != nil || s.Stats().LayerPulls != 2 {
		t.Errorf("fresh get: %v, %d layer pulls; want 2", err, s.Stats().LayerPulls)
	}
	// A new Store on the same directory remembers the image.
	s2 := openStore(t, Config{Dir: s.cfg.Dir})
	before := reg.BlobGets.Load()
	if _, err := s2.Get(context.Background(), ref, true); err != nil || reg.BlobGets.Load() != before {
		t.Errorf("after reopening: %v, %d blob fetches after %d", err, reg.BlobGets.Load(), before)
	}
}

// Both backends assemble the image's files, a later layer's whiteout
// removing a file of an earlier one; Release leaves nothing behind.
func TestProvisionBackends(t *testing.T) {
	needRoot(t)
	reg := testimage.StartRegistry(t, "", "")
	ref := reg.Push(t, "test/busybox:1", testimage.Busybox(t, "marker-1", 0))
	for _, backend := range []string{"overlay", "copy"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "overlay" {
				if err := tryOverlay(t.TempDir()); err != nil {
					t.Skip("no overlayfs here: " + err.Error())
				}
			}
			s := openStore(t, Config{Backend: backend})
			if b, why := s.Backend(); b != backend || why == "" {
				t.Fatalf("backend %q (%s), want %s", b, why, backend)
			}
			img, err := s.Get(context.Background(), ref, true)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "c1")
			rootfs, err := s.Provision(img, dir)
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(rootfs, "marker.txt")); err != nil || string(b) != "marker-1" {
				t.Errorf("marker: %q %v", b, err)
			}
			if b, _ := os.ReadFile(filepath.Join(rootfs, "etc/os-release")); string(b) != testimage.OSRelease {
				t.Errorf("os-release: %q", b)
			}
			if l, err := os.Readlink(filepath.Join(rootfs, "bin/sh")); err != nil || l != "busybox" {
				t.Errorf("bin/sh: %q %v", l, err)
			}
			if _, err := os.Lstat(filepath.Join(rootfs, "etc/doomed")); err == nil {
				t.Error("etc/doomed survived its whiteout")
			}
			// Writes go to the container's own layer, not the store's.
			os.WriteFile(filepath.Join(rootfs, "marker.txt"), []byte("changed"), 0o644)
			if err := s.Release(dir); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "rootfs")); err == nil {
				t.Error("rootfs left after Release")
			}
			if err := s.Release(dir); err != nil {
				t.Errorf("second Release: %v", err)
			}
			rootfs2, err := s.Provision(img, filepath.Join(t.TempDir(), "c2"))
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(rootfs2, "marker.txt")); string(b) != "marker-1" {
				t.Errorf("a container's write reached the store: %q", b)
			}
			s.Release(filepath.Dir(rootfs2))
		})
	}
}

// Over its cap, the store removes the layers no container uses, least
// recently used first, never the image just pulled nor one in use; an
// image that lost a layer is pulled again when asked for.
func TestGCRemovesUnusedLayers(t *testing.T) {
	needRoot(t)
	reg := testimage.StartRegistry(t, "", "")
	refA := reg.Push(t, "test/a:1", testimage.Busybox(t, "a", 64<<10))
	refB := reg.Push(t, "test/b:1", testimage.Busybox(t, "b", 64<<10))
	refC := reg.Push(t, "test/c:1", testimage.Busybox(t, "c", 64<<10))
	s := openStore(t, Config{MaxBytes: 1, Backend: "copy"})
	ctx := context.Background()
	a, err := s.Get(ctx, refA, true)
	if err != nil {
		t.Fatal(err)
	}
	dirA := filepath.Join(t.TempDir(), "a")
	if _, err := s.Provision(a, dirA); err != nil {
		t.Fatal(err)
	}
	b, err := s.Get(ctx, refB, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, hex := range append(a.Layers, b.Layers...) {
		if !s.layerPresent(hex) {
			t.Fatalf("layer %s removed while in use or just pulled", hex[:12])
		}
	}
	s.Release(dirA)
	c, err := s.Get(ctx, refC, true)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Layers != len(c.Layers) || st.Images != 1 {
		t.Errorf("after GC: %+v; want only c's %d layers", st, len(c.Layers))
	}
	if s.lookup(a.Ref) != nil || s.lookup(b.Ref) != nil {
		t.Error("an image whose layers were collected is still served from the store")
	}
	before := reg.BlobGets.Load()
	if _, err := s.Get(ctx, refA, true); err != nil || reg.BlobGets.Load() == before {
		t.Errorf("a collected image: %v, no fetch", err)
	}
}

// A registry behind basic auth answers a pull without credentials, or with
// wrong ones, with an error; the docker config's credentials open it.
func TestPullCredentials(t *testing.T) {
	needRoot(t)
	reg := testimage.StartRegistry(t, "alice", "s3cret")
	ref := reg.Push(t, "private/busybox:1", testimage.Busybox(t, "private", 0))
	conf := func(user, pass string) string {
		return `{"auths":{"` + reg.Host + `":{"auth":"` + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)) + `"}}}`
	}
	for _, tc := range []struct{ name, config, wantErr string }{
		{"none", "", "401"},
		{"wrong", conf("alice", "guess"), "401"},
		{"right", conf("alice", "s3cret"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, Config{DockerConfig: tc.config})
			_, err := s.Get(context.Background(), ref, true)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), ref)) {
				t.Fatalf("Get = %v; want error %q naming %s", err, tc.wantErr, ref)
			}
		})
	}
}

func TestKeychain(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(file, []byte(`{"auths":{
		"https://index.docker.io/v1/":{"auth":"`+base64.StdEncoding.EncodeToString([]byte("hub:pw"))+`"},
		"registry.example.com:5000":{"username":"u","password":"p"},
		"https://ghcr.io":{"identitytoken":"tok"}}}`), 0o600)
	kc, err := loadKeychain(file)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref  string
		want authn.AuthConfig
	}{
		{"busybox", authn.AuthConfig{Username: "hub", Password: "pw"}},
		{"registry.example.com:5000/x/y:1", authn.AuthConfig{Username: "u", Password: "p"}},
		{"ghcr.io/o/i", authn.AuthConfig{IdentityToken: "tok"}},
		{"quay.io/o/i", authn.AuthConfig{}},
	}
	for _, tc := range tests {
		r, _ := name.ParseReference(tc.ref)
		a, _ := kc.Resolve(r.Context())
		got, _ := a.Authorization()
		if *got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.ref, *got, tc.want)
		}
	}
	if _, err := loadKeychain(`{"auths":{"x":{"auth":"not base64!"}}}`); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("bad auth: %v", err)
	}
	if _, err := loadKeychain("/no/such/config.json"); err == nil {
		t.Error("a missing docker config file is not an error")
	}
}

func isRoot() bool { return os.Geteuid() == 0 }
