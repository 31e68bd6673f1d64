package framework

import (
	"math"

	"github.com/allot-sched/allot/framework/eventlog"
)

// usageWindow is one stage's time on one executor, with task metric sums.
type usageWindow struct {
	stage                      int
	key                        string // the stage's key, stable across runs
	exec                       string
	launch                     int64 // the executor's registration, unix ns
	start, end                 int64 // unix ns
	tasks                      int
	cpuTime, bytesRead         int64
	runQueue                   int64 // the tasks' threads waiting for a CPU, ns
	shuffleWrite, shuffleFetch int64
}

// flushUsageLocked writes executor_stage events for windows whose executor
// has reported a sample past the window's end (or is gone, or final is
// set). Caller holds c.mu.
func (c *Context) flushUsageLocked(final bool) {
	rest := c.usage[:0]
	for _, w := range c.usage {
		e := c.pool.execs[w.exec]
		end := float64(w.end) / 1e9
		if e != nil && !final && (len(e.samples) == 0 || e.samples[len(e.samples)-1].Time < end) {
			rest = append(rest, w)
			continue
		}
		var samples []Sample
		if e != nil {
			samples = e.samples
		} else {
			samples = c.pool.lostSamples[w.exec]
		}
		ev := windowEvent(w, samples, c.now())
		c.noteStageUsageLocked(ev)
		c.emit(ev)
	}
	c.usage = rest
}

type stat struct{ peak, sum float64 }

func (s *stat) add(v float64) { s.peak = math.Max(s.peak, v); s.sum += v }

// windowEvent summarises the samples overlapping a usage window.
func windowEvent(w *usageWindow, samples []Sample, now float64) *eventlog.ExecutorStage {
	start, end := float64(w.start)/1e9, float64(w.end)/1e9
	var cpu, mem, disk, file, netw stat
	n, shared := 0, 0
	for _, s := range samples {
		// A sample covers the second before its time.
		if s.Time < start || s.Time-1 > end {
			continue
		}
		n++
		cpu.add(s.CPU)
		mem.add(float64(s.MemBytes))
		disk.add(s.DiskBW)
		file.add(s.FileBW)
		netw.add(s.NetBW)
		for _, st := range s.Stages {
			if st != w.stage {
				shared++
				break
			}
		}
	}
	mean := func(s stat) float64 {
		if n == 0 {
			return 0
		}
		return s.sum / float64(n)
	}
	return &eventlog.ExecutorStage{Time: now, Stage: w.stage, Executor: w.exec, Start: start, End: end,
		Tasks: w.tasks, Samples: n, ConcurrentStages: shared,
		TaskCPUTimeS: float64(w.cpuTime) / 1e9, TaskRunQueueS: float64(w.runQueue) / 1e9, BytesRead: w.bytesRead, ShuffleWriteBytes: w.shuffleWrite, ShuffleFetchBytes: w.shuffleFetch,
		CPUPeak: cpu.peak, CPUMean: mean(cpu), MemPeakBytes: mem.peak, MemMeanBytes: mean(mem),
		DiskBWPeak: disk.peak, DiskBWMean: mean(disk), FileBWPeak: file.peak, FileBWMean: mean(file),
		NetBWPeak: netw.peak, NetBWMean: mean(netw),
		// Offsets from the executor's registration (its launch as the
		// driver sees it) are what Prophet's profiles anchor at.
		StageKey: w.key, StartOffsetS: float64(w.start-w.launch) / 1e9, EndOffsetS: float64(w.end-w.launch) / 1e9}
}
