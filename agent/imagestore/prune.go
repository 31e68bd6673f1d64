package imagestore

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

// Pruned is what a Prune removed and what it kept.
type Pruned struct {
	Images     []string `json:"images"`      // references forgotten
	Layers     int      `json:"layers"`      // layers removed
	Bytes      int64    `json:"bytes"`       // their size
	KeptImages []string `json:"kept_images"` // references kept: excluded or in use
	KeptLayers int      `json:"kept_layers"` // layers kept
}

// Prune removes every image and layer that no live container uses, except
// the images excluded names (references as a task names them; one the
// store does not hold is ignored), as Mesos's PRUNE_IMAGES does, whatever
// the size cap. An image is kept when it is excluded or when a live
// container holds all its layers; a layer when a kept image or a live
// container uses it, or when Get handed it out within the GC grace and no
// container has taken it yet (an image being provisioned). It waits for a
// pull under way to finish, and no pull starts while it runs.
func (s *Store) Prune(excluded []string) (Pruned, error) {
	keys := make([]string, 0, len(excluded))
	for _, ref := range excluded {
		r, err := name.ParseReference(ref, s.nameOpts()...)
		if err != nil {
			return Pruned{}, fmt.Errorf("excluded image %q: %w", ref, err)
		}
		keys = append(keys, r.Name())
	}
	s.pullMu.Lock()
	defer s.pullMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out Pruned
	keep := map[string]bool{}
	for hex := range s.idx.Layers {
		if len(s.users[hex]) > 0 || s.handedOutLocked(hex) {
			keep[hex] = true
		}
	}
	for ref, img := range s.idx.Images {
		inUse := len(img.Layers) > 0
		for _, hex := range img.Layers {
			inUse = inUse && len(s.users[hex]) > 0
		}
		if !inUse && !slices.Contains(keys, ref) {
			out.Images = append(out.Images, ref)
			delete(s.idx.Images, ref)
			continue
		}
		out.KeptImages = append(out.KeptImages, ref)
		for _, hex := range img.Layers {
			keep[hex] = true
		}
	}
	for hex, l := range s.idx.Layers {
		if keep[hex] {
			continue
		}
		if err := os.RemoveAll(s.layerDir(hex)); err != nil {
			s.cfg.Log.Warn().Err(err).Str("layer", hex).Msg("image store: pruning a layer")
			continue
		}
		out.Layers++
		out.Bytes += l.Size
		delete(s.idx.Layers, hex)
	}
	out.KeptLayers = len(s.idx.Layers)
	s.dropBrokenImagesLocked()
	sort.Strings(out.Images)
	sort.Strings(out.KeptImages)
	err := s.saveLocked()
	s.cfg.Log.Info().Strs("images_removed", out.Images).Int("layers_removed", out.Layers).Int64("bytes", out.Bytes).
		Strs("images_kept", out.KeptImages).Int("layers_kept", out.KeptLayers).Msg("image store pruned")
	return out, err
}

// handedOutLocked reports whether Get handed layer hex out within the GC
// grace and no container has taken it since. Caller holds s.mu.
func (s *Store) handedOutLocked(hex string) bool {
	at, ok := s.handedOut[hex]
	return ok && time.Since(at) < s.gcGrace
}
