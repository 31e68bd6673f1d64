package iothrottle

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// The shared state makes two buckets on one file one bucket: takers after
// the burst wait for the debt at the rate, whoever took before them.
func TestTakeSharesTheRate(t *testing.T) {
	dir := t.TempDir()
	a, _ := Open(dir, "disk_bw", 10) // 10 MB/s: burst 1 MB
	b, _ := Open(dir, "disk_bw", 10)
	t0 := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		who  *Bucket
		at   time.Duration
		n    float64
		wait time.Duration
	}{
		{a, 0, 1e6, 0},                      // the burst
		{b, 0, 1e6, 100 * time.Millisecond}, // in debt 1 MB: 0.1 s
		{a, 0, 2e6, 300 * time.Millisecond}, // 3 MB of debt
		{b, time.Second, 0.5e6, 0},          // after 1 s the 3 MB debt is paid and the bucket full again (1 MB)
		{a, time.Second, 1e6, 50 * time.Millisecond},
	} {
		got, err := c.who.take(c.n, t0.Add(c.at))
		if err != nil {
			t.Fatal(err)
		}
		if d := got - c.wait; d > time.Millisecond || d < -time.Millisecond {
			t.Errorf("take %v at +%v: wait %v, want %v", c.n, c.at, got, c.wait)
		}
	}
}

func TestNilIsUnlimited(t *testing.T) {
	b, err := Open(t.TempDir(), "x", 0)
	if err != nil || b != nil {
		t.Fatalf("Open at 0 MB/s = %v, %v; want nil (unlimited)", b, err)
	}
	b.Take(1 << 30) // returns at once
	var buf bytes.Buffer
	if b.Writer(&buf) != io.Writer(&buf) {
		t.Error("a nil bucket wrapped the writer")
	}
	l, err := FromEnv()
	if err != nil || l.Disk != nil || l.Net != nil {
		t.Errorf("FromEnv without the environment = %+v, %v", l, err)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvDir, t.TempDir())
	t.Setenv(EnvDiskBW, "20")
	l, err := FromEnv()
	if err != nil || l.Disk == nil || l.Disk.rate != 20e6 || l.Net != nil {
		t.Fatalf("FromEnv = %+v, %v; want a 20 MB/s disk and no net limit", l, err)
	}
	t.Setenv(EnvNetBW, "fast")
	if _, err := FromEnv(); err == nil {
		t.Error("a bad rate was accepted")
	}
}
