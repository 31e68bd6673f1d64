package agent

import "testing"

func TestDetectResources(t *testing.T) {
	r, err := detectResources("cpus:2;gpus:1", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if r.Scalar("cpus") != 2000 || r.Scalar("gpus") != 1000 {
		t.Errorf("given scalars changed: %v", r)
	}
	if r.Scalar("mem") <= 0 || r.Scalar("disk") <= 0 || len(r.Ports) == 0 {
		t.Errorf("mem, disk and ports not detected: %v", r)
	}
	if _, err := detectResources("cpus:abc", t.TempDir()); err == nil {
		t.Error("bad --resources accepted")
	}
}
