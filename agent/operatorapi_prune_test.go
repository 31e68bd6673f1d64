package agent

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	magent "github.com/mesos/mesos-go/api/v1/lib/agent"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/agent/imagestore"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/testimage"
)

func pruneCall(exclude ...mesos.Image) *magent.Call {
	return &magent.Call{Type: magent.Call_PRUNE_IMAGES, PruneImages: &magent.Call_PruneImages{ExcludedImages: exclude}}
}

func dockerImage(ref string) mesos.Image {
	return mesos.Image{Type: mesos.Image_DOCKER.Enum(), Docker: &mesos.Image_Docker{Name: ref}}
}

// PRUNE_IMAGES needs a credential with --authenticate-http-readwrite and
// is authorized by prune_images (Mesos's ACL, object images ANY or NONE);
// an excluded image that is not a named DOCKER one is a 400; an agent
// without an image store answers 200, as Mesos's, having nothing to prune.
func TestAgentPruneImagesAuthz(t *testing.T) {
	acls, err := auth.ParseACLs([]byte(`{"permissive": false,
		"prune_images": [{"principals": {"values": ["alice"]}, "images": {"type": "ANY"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a := operatorAgent(t, HTTPAuthn{Credentials: testCredentials(t), ReadWrite: true}, acls)
	h := a.httpHandler()
	appc := mesos.Image{Type: mesos.Image_APPC.Enum(), Appc: &mesos.Image_Appc{Name: "x"}}
	for _, c := range []struct {
		who  string
		call *magent.Call
		code int
		says string
	}{
		{"", pruneCall(), http.StatusUnauthorized, ""},
		{"bob", pruneCall(), http.StatusForbidden, "prune_images"},
		{"alice", pruneCall(appc), http.StatusBadRequest, "excluded_images[0]: image of type APPC"},
		{"alice", pruneCall(mesos.Image{Type: mesos.Image_DOCKER.Enum()}), http.StatusBadRequest, "without docker.name"},
		{"alice", pruneCall(), http.StatusOK, ""},
		{"alice", &magent.Call{Type: magent.Call_PRUNE_IMAGES}, http.StatusOK, ""},
	} {
		code, body, _ := callAgent(t, h, api.JSON, c.who, c.call)
		if code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("PRUNE_IMAGES as %q: %d %q, want %d saying %q", c.who, code, body, c.code, c.says)
		}
	}
}

// PRUNE_IMAGES empties the store but for an excluded image and the layers
// of a live container; the answer is 200 with no body, in either codec.
func TestAgentPruneImages(t *testing.T) {
	needRootForImages(t)
	reg := testimage.StartRegistry(t, "", "")
	refA := reg.Push(t, "test/a:1", testimage.Busybox(t, "a", 0))
	refB := reg.Push(t, "test/b:1", testimage.Busybox(t, "b", 0))
	a := operatorAgent(t, HTTPAuthn{}, nil)
	st, err := imagestore.Open(imagestore.Config{Dir: filepath.Join(t.TempDir(), "store"), Backend: "copy", Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	a.images.store = st
	h := a.httpHandler()
	// A container took a's image and gave it back; b's is held by c2.
	if _, err := st.Provision(mustGet(t, a, refA), a.containerDir("c1")); err != nil {
		t.Fatal(err)
	}
	st.Release(a.containerDir("c1"))
	if _, err := st.Provision(mustGet(t, a, refB), a.containerDir("c2")); err != nil {
		t.Fatal(err)
	}
	code, body, _ := callAgent(t, h, api.Protobuf, "", pruneCall(dockerImage(refA)))
	if code != http.StatusOK || body != "" {
		t.Fatalf("PRUNE_IMAGES excluding a: %d %q, want 200 and no body", code, body)
	}
	if s := st.Stats(); s.Images != 2 {
		t.Errorf("after pruning with a excluded and b in use: %+v, want both kept", s)
	}
	st.Release(a.containerDir("c2"))
	if code, body, _ := callAgent(t, h, api.JSON, "", pruneCall()); code != http.StatusOK {
		t.Fatalf("PRUNE_IMAGES: %d %s", code, body)
	}
	if s := st.Stats(); s.Images != 0 || s.Layers != 0 || s.Bytes != 0 {
		t.Errorf("after pruning an idle store: %+v, want it empty", s)
	}
}

func needRootForImages(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("extracting image layers (whiteouts are device files) needs root")
	}
}
