package framework

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

// The event log is one JSON object per line, written as things happen.
// Every line has "event" and "time" (unix seconds). The events:
//
//	application_start  app, settings{executors, cores, mem_mb, block_mem_mb, dynamic, min/max_executors, local, master}
//	executor_added     executor, host, url, cores, pid
//	executor_removed   executor, reason, lost_cached_partitions
//	executors_requested target, backlog (dynamic allocation)
//	executor_sample    executor, cpu (cores busy), mem_bytes (RSS), disk_bw (block-device B/s from
//	                   /proc/self/io), file_bw (file B/s the runtime read and wrote), net_bw (socket
//	                   B/s in+out), running, stages, block_mem, block_spill, cached_blocks — every second
//	job_start/job_end  action, result_stage, partitions / success, error, duration_s
//	stage_submitted    stage, name, kind (shuffle_map|result), tasks, partitions, parents
//	stage_completed    stage, name, start, end, duration_s, executors
//	task_end           task, stage, partition, attempt, executor, success, error, duration_s, cpu_time_s
//	                   (the task's own thread), bytes_read, shuffle_write_bytes, shuffle_fetch_bytes,
//	                   records_out, cache_hit
//	executor_stage     stage, executor, start, end, tasks, samples, and peak and mean of cpu,
//	                   mem_bytes, disk_bw, file_bw, net_bw over the executor's one-second samples
//	                   that overlap the stage's first task start to last task end on that executor;
//	                   concurrent_stages says how many samples were shared with other stages
//	                   (a sample is the whole process, so it cannot be split among stages)
//	application_end    duration_s, success, error, input_bytes
//
// Prophet reads stage start/end and executor_stage peaks; iSpark reads
// executor_sample utilisation and executor_stage means.
type eventLog struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	path string
	last time.Time
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func openEventLog(dir, app string) (*eventLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("event log dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.jsonl", unsafeName.ReplaceAllString(app, "_"), time.Now().Format("20060102-150405"), os.Getpid()))
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	return &eventLog{f: f, w: bufio.NewWriterSize(f, 64<<10), path: path, last: time.Now()}, nil
}

func (l *eventLog) emit(ev map[string]any) {
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return
	}
	l.w.Write(b)
	l.w.WriteByte('\n')
	// Flush about once a second so a reader following the file (or a
	// crashed driver's log) is never far behind.
	if time.Since(l.last) > time.Second {
		l.w.Flush()
		l.last = time.Now()
	}
}

func (l *eventLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return nil
	}
	err := l.w.Flush()
	l.w = nil
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// usageWindow is one stage's time on one executor, with task metric sums.
type usageWindow struct {
	stage                      int
	exec                       string
	start, end                 int64 // unix ns
	tasks                      int
	cpuTime, bytesRead         int64
	shuffleWrite, shuffleFetch int64
}

// flushUsage writes executor_stage events for windows whose executor has
// reported a sample past the window's end (or is gone, or final is set).
// Caller holds c.mu.
func (c *Context) flushUsage(final bool) {
	rest := c.usage[:0]
	for _, w := range c.usage {
		e := c.execs[w.exec]
		end := float64(w.end) / 1e9
		if e != nil && !final && (len(e.samples) == 0 || e.samples[len(e.samples)-1].Time < end) {
			rest = append(rest, w)
			continue
		}
		var samples []Sample
		if e != nil {
			samples = e.samples
		} else {
			samples = c.lostSamples[w.exec]
		}
		c.elog.emit(windowEvent(w, samples))
	}
	c.usage = rest
}

type stat struct{ peak, sum float64 }

func (s *stat) add(v float64) { s.peak = math.Max(s.peak, v); s.sum += v }

func windowEvent(w *usageWindow, samples []Sample) map[string]any {
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
	return map[string]any{"event": "executor_stage", "time": now(), "stage": w.stage, "executor": w.exec, "start": start, "end": end,
		"tasks": w.tasks, "samples": n, "concurrent_stages": shared,
		"task_cpu_time_s": float64(w.cpuTime) / 1e9, "bytes_read": w.bytesRead, "shuffle_write_bytes": w.shuffleWrite, "shuffle_fetch_bytes": w.shuffleFetch,
		"cpu_peak": cpu.peak, "cpu_mean": mean(cpu), "mem_peak_bytes": mem.peak, "mem_mean_bytes": mean(mem),
		"disk_bw_peak": disk.peak, "disk_bw_mean": mean(disk), "file_bw_peak": file.peak, "file_bw_mean": mean(file),
		"net_bw_peak": netw.peak, "net_bw_mean": mean(netw)}
}
