package agent

import (
	"strings"
	"testing"
)

func TestDetectResources(t *testing.T) {
	r, _, err := detectResources("cpus:2;gpus:1", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if r.Scalar("cpus") != 2000 || r.Scalar("gpus") != 1000 {
		t.Errorf("given scalars changed: %v", r)
	}
	if r.Scalar("mem") <= 0 || r.Scalar("disk") <= 0 || len(r.Ports) == 0 {
		t.Errorf("mem, disk and ports not detected: %v", r)
	}
	if _, _, err := detectResources("cpus:abc", t.TempDir()); err == nil {
		t.Error("bad --resources accepted")
	}
}

// Static reservations are kept in the text REGISTER sends, and the
// machine's defaults fill only what no role names.
func TestDetectResourcesStatic(t *testing.T) {
	r, text, err := detectResources("cpus(ads):4;mem(ads):8192;cpus:2", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if r.Scalar("cpus") != 6000 || r.Scalar("mem") != 8192000 {
		t.Errorf("total %v, want cpus 6 and mem 8192 (no machine default added to a reserved kind)", r)
	}
	if !strings.Contains(text, "cpus(ads):4;mem(ads):8192") || !strings.HasPrefix(text, "cpus:2;disk:") {
		t.Errorf("REGISTER text %q", text)
	}
	if _, _, err := detectResources("cpus(a b):4", t.TempDir()); err == nil || !strings.Contains(err.Error(), "cpus(a b):4") {
		t.Errorf("bad role: %v", err)
	}
}
