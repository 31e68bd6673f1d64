//go:build unix

package allocator

import "syscall"

// processCPU is the CPU time the process has used (every thread, the
// collector's included), in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
