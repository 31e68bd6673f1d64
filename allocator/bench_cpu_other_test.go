//go:build !unix

package allocator

// processCPU is not measured here: the benchmarks report no cpu-ns/op.
func processCPU() int64 { return 0 }
