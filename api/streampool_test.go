package api

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mesos/mesos-go/api/v1/lib/recordio"
)

// NewFrame gives room for what was asked, from the class that covers it.
func TestNewFrameCapacity(t *testing.T) {
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 100_000, 1 << maxFrameClass, 1<<maxFrameClass + 1} {
		f := NewFrame(n)
		if len(f.B) != 0 || cap(f.B) < n {
			t.Errorf("NewFrame(%d): len %d cap %d, want empty with room for %d", n, len(f.B), cap(f.B), n)
		}
		if n <= 1<<maxFrameClass && cap(f.B) > 2*n && cap(f.B) > 1<<minFrameClass {
			t.Errorf("NewFrame(%d): cap %d, more than the next power of two", n, cap(f.B))
		}
		f.release()
	}
}

// Frames sent with SendFrame are written in order with raw ones, byte for
// byte, and their buffers go back to the pool once written (emptied); a
// frame a closed stream refuses goes back at once.
func TestStreamSendFrame(t *testing.T) {
	s := NewStream(Protobuf, 16)
	want := [][]byte{bytes.Repeat([]byte{1}, 700), []byte("raw"), bytes.Repeat([]byte{2}, 3000)}
	var pooled []*Frame
	for _, b := range want {
		if string(b) == "raw" {
			s.SendRaw(b)
			continue
		}
		f := NewFrame(len(b))
		f.B = append(f.B, b...)
		pooled = append(pooled, f)
		if !s.SendFrame(f) {
			t.Fatal("SendFrame refused on an open stream")
		}
	}
	s.Close("done")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := httptest.NewRecorder()
	s.Serve(rec, httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx), true, nil)
	rd := recordio.NewReader(rec.Body)
	for i, w := range want {
		got, err := rd.ReadFrame()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("frame %d: %d bytes, want %d bytes %q...", i, len(got), len(w), w[:3])
		}
	}
	for i, f := range pooled {
		if len(f.B) != 0 {
			t.Errorf("pooled frame %d still holds %d bytes after it was written", i, len(f.B))
		}
	}

	f := NewFrame(600)
	f.B = append(f.B, "late"...)
	if s.SendFrame(f) {
		t.Fatal("SendFrame on a closed stream succeeded")
	}
	if len(f.B) != 0 {
		t.Error("a refused frame was not released")
	}
}
