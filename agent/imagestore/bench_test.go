package imagestore

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/allot-sched/allot/internal/testimage"
)

// BenchmarkFirstPull measures an image's first pull over loopback into an
// empty store: manifest, config and every layer fetched from an in-process
// registry, decompressed and extracted. The image is the test busybox
// (busybox-static, about 1 MB compressed) with a 4 MB layer of random
// bytes: about 5 MB as the registry serves it. It reports that size (MB)
// and ms per pull.
//
//	go test ./agent/imagestore -run '^$' -bench FirstPull -benchtime 20x
func BenchmarkFirstPull(b *testing.B) {
	if !isRoot() {
		b.Skip("extracting layers needs root")
	}
	reg := testimage.StartRegistry(b, "", "")
	img := testimage.Busybox(b, "bench", 4<<20)
	ref := reg.Push(b, "bench/busybox:1", img)
	var size int64
	layers, _ := img.Layers()
	for _, l := range layers {
		n, _ := l.Size()
		size += n
	}
	root := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(Config{Dir: filepath.Join(root, strconv.Itoa(i)), Backend: "copy"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Get(context.Background(), ref, true); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(size)/(1<<20), "image-MB")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/pull")
}
