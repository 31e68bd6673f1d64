package framework

import (
	"testing"
)

// BenchmarkTaskScheduling measures the driver's task throughput: 10,000
// tasks that each count one record, over 4 in-process executors of one core
// (real HTTP on loopback, the same dispatch path as on a cluster).
func BenchmarkTaskScheduling(b *testing.B) {
	ctx, err := NewContext(Config{App: "bench-tasks", Local: true, Executors: 4, Cores: 1, EventLogDir: b.TempDir(), Logf: func(string, ...any) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close(nil)
	// Warm up: wait for the executors with a tiny job.
	if _, err := ctx.Range(4, 4).Count(); err != nil {
		b.Fatal(err)
	}
	const tasks = 10000
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n, err := ctx.Range(tasks, tasks).Count()
		if err != nil || n != tasks {
			b.Fatalf("count = %d, %v", n, err)
		}
	}
	b.ReportMetric(float64(tasks*b.N)/b.Elapsed().Seconds(), "tasks/s")
}
