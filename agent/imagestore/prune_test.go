package imagestore

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/allot-sched/allot/internal/testimage"
)

// Prune removes every image and layer that no live container uses, keeps
// the excluded images and those in use, and keeps an image Get has just
// handed out (not yet provisioned) for the grace.
func TestPruneKeepsInUseAndExcluded(t *testing.T) {
	needRoot(t)
	reg := testimage.StartRegistry(t, "", "")
	refs := map[string]string{}
	for _, n := range []string{"a", "b", "c"} {
		refs[n] = reg.Push(t, "test/"+n+":1", testimage.Busybox(t, n, 4<<10))
	}
	s := openStore(t, Config{Backend: "copy"})
	ctx := context.Background()
	imgs := map[string]*Image{}
	for n, ref := range refs {
		img, err := s.Get(ctx, ref, true)
		if err != nil {
			t.Fatal(err)
		}
		imgs[n] = img
	}
	dirA := filepath.Join(t.TempDir(), "a")
	if _, err := s.Provision(imgs["a"], dirA); err != nil {
		t.Fatal(err)
	}
	// b and c were handed out just now: within the grace they stay.
	if p, err := s.Prune(nil); err != nil || len(p.Images) != 2 || p.Layers != 0 {
		t.Fatalf("prune within the grace: %+v %v; want b and c forgotten, no layer removed", p, err)
	}
	if _, err := s.Get(ctx, refs["b"], true); err != nil { // pulls b's record again, no layer fetch
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, refs["c"], true); err != nil {
		t.Fatal(err)
	}
	s.gcGrace = 0
	p, err := s.Prune([]string{refs["b"], "127.0.0.1:1/not/held:1"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Images, []string{imgs["c"].Ref}) || !slices.Equal(p.KeptImages, []string{imgs["a"].Ref, imgs["b"].Ref}) {
		t.Errorf("prune: forgot %v kept %v; want c forgotten, a (in use) and b (excluded) kept", p.Images, p.KeptImages)
	}
	for n, img := range imgs {
		for _, hex := range img.Layers {
			inA, inB := slices.Contains(imgs["a"].Layers, hex), slices.Contains(imgs["b"].Layers, hex)
			if present := s.layerPresent(hex); present != (inA || inB) {
				t.Errorf("layer %s of %s: present %v, want %v", hex[:12], n, present, inA || inB)
			}
		}
	}
	if st := s.Stats(); st.Images != 2 || st.Layers != p.KeptLayers || p.Layers == 0 || p.Bytes <= 0 {
		t.Errorf("after prune: %+v, pruned %+v", st, p)
	}
	// Released, a is pruned too; nothing excluded leaves the store empty.
	if err := s.Release(dirA); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Prune(nil); err != nil || len(p.KeptImages) != 0 || p.KeptLayers != 0 {
		t.Fatalf("prune of an idle store: %+v %v; want it empty", p, err)
	}
	if st := s.Stats(); st.Images != 0 || st.Layers != 0 || st.Bytes != 0 {
		t.Errorf("store after pruning all: %+v", st)
	}
	// A collected image is pulled again on its next use.
	before := s.Stats().LayerPulls
	if _, err := s.Get(ctx, refs["a"], true); err != nil || s.Stats().LayerPulls == before {
		t.Errorf("get after prune: %v, layer pulls %d -> %d", err, before, s.Stats().LayerPulls)
	}
	if _, err := s.Prune([]string{"UPPER/case:bad tag"}); err == nil {
		t.Error("an unparsable excluded reference was accepted")
	}
}
