package imagestore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/rs/zerolog"
)

// Config configures a Store.
type Config struct {
	// Dir is the store's directory (the agent's <work dir>/store/docker).
	Dir string
	// MaxBytes caps the extracted layers kept; 0 is no cap.
	MaxBytes int64
	// DockerConfig is a docker config file (its "auths"), or its JSON
	// itself when it starts with "{" (Mesos's --docker_config); "" sends
	// no credentials.
	DockerConfig string
	// DefaultRegistry serves references that name none ("" is Docker Hub).
	DefaultRegistry string
	// Backend is "overlay", "copy" or "" (overlay where the kernel allows).
	Backend string
	// Transport is the registry client's (nil: http.DefaultTransport).
	Transport http.RoundTripper
	Log       zerolog.Logger
}

// Image is a pulled image: its layers bottom to top and what its config
// says a container runs.
type Image struct {
	Ref    string   `json:"ref"`
	Digest string   `json:"digest"`
	Layers []string `json:"layers"` // layer digests' hex, bottom first
	Config Runtime  `json:"config"`
}

// Runtime is the part of an image's config the docker/runtime isolator
// applies.
type Runtime struct {
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	Env        []string `json:"env,omitempty"`
	WorkingDir string   `json:"working_dir,omitempty"`
}

type layerRec struct {
	Size     int64     `json:"size"`
	LastUsed time.Time `json:"last_used"`
}

type index struct {
	Images map[string]*Image    `json:"images"`
	Layers map[string]*layerRec `json:"layers"`
}

// Store is the image store; safe for concurrent use.
type Store struct {
	cfg        Config
	keychain   *keychain
	backend    string // "overlay" or "copy"
	backendWhy string

	pullMu sync.Mutex // one registry pull at a time; cached images do not wait

	// gcGrace keeps layers used this recently from GC: an image handed
	// out by Get is not yet held by the container it is for.
	gcGrace time.Duration

	mu    sync.Mutex
	idx   index
	users map[string]map[string]bool // layer hex -> container dirs using it
	// handedOut is when Get last handed a layer out, until a container
	// takes it (use): Prune keeps such layers for gcGrace.
	handedOut map[string]time.Time
	// pulls counts layers fetched from a registry (for /state and tests).
	pulls int
}

// Open opens (or makes) the store in cfg.Dir and decides the rootfs
// backend.
func Open(cfg Config) (*Store, error) {
	kc, err := loadKeychain(cfg.DockerConfig)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"layers", "staging"} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	os.RemoveAll(filepath.Join(cfg.Dir, "staging"))
	os.MkdirAll(filepath.Join(cfg.Dir, "staging"), 0o700)
	s := &Store{cfg: cfg, keychain: kc, idx: index{Images: map[string]*Image{}, Layers: map[string]*layerRec{}},
		users: map[string]map[string]bool{}, handedOut: map[string]time.Time{}, gcGrace: time.Minute}
	if b, err := os.ReadFile(s.indexPath()); err == nil {
		if err := json.Unmarshal(b, &s.idx); err != nil {
			cfg.Log.Warn().Err(err).Msg("image store index unreadable; starting it afresh")
		}
	}
	if s.idx.Images == nil || s.idx.Layers == nil {
		s.idx = index{Images: map[string]*Image{}, Layers: map[string]*layerRec{}}
	}
	s.dropMissingLayers()
	if s.backend, s.backendWhy, err = chooseBackend(cfg.Backend, cfg.Dir); err != nil {
		return nil, err
	}
	return s, nil
}

// Backend is how root filesystems are assembled ("overlay" or "copy") and
// why.
func (s *Store) Backend() (string, string) { return s.backend, s.backendWhy }

// Stats are the store's counters.
type Stats struct {
	Images     int   `json:"images"`
	Layers     int   `json:"layers"`
	Bytes      int64 `json:"bytes"`
	MaxBytes   int64 `json:"max_bytes"`
	LayerPulls int   `json:"layer_pulls"`
}

// Stats says what the store holds.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Images: len(s.idx.Images), Layers: len(s.idx.Layers), MaxBytes: s.cfg.MaxBytes, LayerPulls: s.pulls}
	for _, l := range s.idx.Layers {
		st.Bytes += l.Size
	}
	return st
}

func (s *Store) indexPath() string            { return filepath.Join(s.cfg.Dir, "images.json") }
func (s *Store) layerDir(hex string) string   { return filepath.Join(s.cfg.Dir, "layers", hex) }
func (s *Store) layerPresent(hex string) bool { _, err := os.Stat(s.layerDir(hex)); return err == nil }

// dropMissingLayers forgets layers whose directory is gone, and images
// that lose one; and removes layer directories the index does not know
// (an extraction an earlier run did not finish recording).
func (s *Store) dropMissingLayers() {
	for hex := range s.idx.Layers {
		if !s.layerPresent(hex) {
			delete(s.idx.Layers, hex)
		}
	}
	s.dropBrokenImagesLocked()
	entries, _ := os.ReadDir(filepath.Join(s.cfg.Dir, "layers"))
	for _, e := range entries {
		if _, ok := s.idx.Layers[e.Name()]; !ok {
			os.RemoveAll(filepath.Join(s.cfg.Dir, "layers", e.Name()))
		}
	}
}

func (s *Store) dropBrokenImagesLocked() {
	for ref, img := range s.idx.Images {
		for _, l := range img.Layers {
			if _, ok := s.idx.Layers[l]; !ok {
				delete(s.idx.Images, ref)
				break
			}
		}
	}
}

func (s *Store) saveLocked() error {
	b, err := json.Marshal(&s.idx)
	if err != nil {
		return err
	}
	tmp := s.indexPath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.indexPath())
}

// Get returns the image ref names, pulling what the store lacks. With
// cached (Mesos's default), an image the store holds is used without
// asking the registry; without, the registry is asked for the reference's
// current manifest and only missing layers are fetched.
func (s *Store) Get(ctx context.Context, ref string, cached bool) (*Image, error) {
	r, err := name.ParseReference(ref, s.nameOpts()...)
	if err != nil {
		return nil, fmt.Errorf("image %q: %w", ref, err)
	}
	key := r.Name()
	if cached {
		if img := s.lookup(key); img != nil {
			return img, nil
		}
	}
	s.pullMu.Lock()
	defer s.pullMu.Unlock()
	if cached {
		if img := s.lookup(key); img != nil {
			return img, nil // pulled while this one waited
		}
	}
	img, err := s.pull(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("pulling image %q: %w", ref, err)
	}
	return img, nil
}

func (s *Store) nameOpts() []name.Option {
	if s.cfg.DefaultRegistry != "" {
		return []name.Option{name.WithDefaultRegistry(s.cfg.DefaultRegistry)}
	}
	return nil
}

func (s *Store) lookup(key string) *Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	img := s.idx.Images[key]
	if img == nil {
		return nil
	}
	for _, l := range img.Layers {
		if !s.layerPresent(l) {
			return nil
		}
	}
	s.touchLocked(img.Layers)
	return img
}

// pull fetches r's manifest (the linux image for this machine's
// architecture, from an index), its config and the layers the store lacks.
func (s *Store) pull(ctx context.Context, r name.Reference) (*Image, error) {
	start := time.Now()
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(s.keychain),
		remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH})}
	if s.cfg.Transport != nil {
		opts = append(opts, remote.WithTransport(s.cfg.Transport))
	}
	desc, err := remote.Get(r, opts...)
	if err != nil {
		return nil, err
	}
	rimg, err := desc.Image()
	if err != nil {
		return nil, err
	}
	cf, err := rimg.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	layers, err := rimg.Layers()
	if err != nil {
		return nil, err
	}
	img := &Image{Ref: r.Name(), Digest: desc.Digest.String(), Config: Runtime{Entrypoint: cf.Config.Entrypoint,
		Cmd: cf.Config.Cmd, Env: cf.Config.Env, WorkingDir: cf.Config.WorkingDir}}
	fetched := 0
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return nil, err
		}
		if d.Algorithm != "sha256" {
			return nil, fmt.Errorf("layer %s: only sha256 digests are supported", d)
		}
		img.Layers = append(img.Layers, d.Hex)
		if s.layerPresent(d.Hex) {
			continue
		}
		size, err := s.fetchLayer(l, d.Hex)
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", d, err)
		}
		fetched++
		s.mu.Lock()
		s.idx.Layers[d.Hex] = &layerRec{Size: size, LastUsed: time.Now()}
		s.pulls++
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.idx.Images[img.Ref] = img
	s.touchLocked(img.Layers)
	err = s.saveLocked()
	s.mu.Unlock()
	s.cfg.Log.Info().Str("image", img.Ref).Str("digest", img.Digest).Int("layers", len(img.Layers)).Int("fetched", fetched).
		Dur("took", time.Since(start)).Msg("image pulled")
	s.gc(img.Layers)
	return img, err
}

// fetchLayer extracts layer l into the store under hex (staged, then
// renamed, so a crash never leaves half a layer where a container looks).
func (s *Store) fetchLayer(l v1.Layer, hex string) (int64, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	stage, err := os.MkdirTemp(filepath.Join(s.cfg.Dir, "staging"), hex[:12]+"-")
	if err != nil {
		return 0, err
	}
	size, err := extract(rc, stage)
	if err == nil {
		err = os.Rename(stage, s.layerDir(hex))
	}
	if err != nil {
		os.RemoveAll(stage)
		return 0, err
	}
	return size, nil
}

// gc removes layers no container uses, least recently used first, until
// the store is under its cap; images that lose a layer are forgotten. The
// layers of keep (the image just pulled) and any used within gcGrace (an
// image Get handed out, not yet provisioned) stay.
func (s *Store) gc(keep []string) {
	if s.cfg.MaxBytes <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var total int64
	var idle []string
	for hex, l := range s.idx.Layers {
		total += l.Size
		if len(s.users[hex]) == 0 && !slices.Contains(keep, hex) && time.Since(l.LastUsed) >= s.gcGrace {
			idle = append(idle, hex)
		}
	}
	sort.Slice(idle, func(i, j int) bool { return s.idx.Layers[idle[i]].LastUsed.Before(s.idx.Layers[idle[j]].LastUsed) })
	removed := 0
	for _, hex := range idle {
		if total <= s.cfg.MaxBytes {
			break
		}
		if err := os.RemoveAll(s.layerDir(hex)); err != nil {
			s.cfg.Log.Warn().Err(err).Str("layer", hex).Msg("image store: removing a layer")
			continue
		}
		total -= s.idx.Layers[hex].Size
		delete(s.idx.Layers, hex)
		removed++
	}
	if removed > 0 {
		s.dropBrokenImagesLocked()
		s.saveLocked()
		s.cfg.Log.Info().Int("layers_removed", removed).Int64("bytes", total).Int64("max_bytes", s.cfg.MaxBytes).Msg("image store garbage collected")
	}
	if total > s.cfg.MaxBytes {
		s.cfg.Log.Warn().Int64("bytes", total).Int64("max_bytes", s.cfg.MaxBytes).Msg("image store over its cap: the rest is in use")
	}
}

// touchLocked marks layers used now. Caller holds s.mu.
func (s *Store) touchLocked(layers []string) {
	for _, hex := range layers {
		if l := s.idx.Layers[hex]; l != nil {
			l.LastUsed = time.Now()
		}
		s.handedOut[hex] = time.Now()
	}
}

// use records that container dir holds img's layers (or no longer does).
func (s *Store) use(dir string, layers []string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, hex := range layers {
		if on {
			if s.users[hex] == nil {
				s.users[hex] = map[string]bool{}
			}
			s.users[hex][dir] = true
			delete(s.handedOut, hex)
			if l := s.idx.Layers[hex]; l != nil {
				l.LastUsed = time.Now()
			}
		} else {
			delete(s.users[hex], dir)
		}
	}
}
