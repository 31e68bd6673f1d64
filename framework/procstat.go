package framework

import (
	"bytes"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// usageCounters are byte counters the executor keeps itself: /proc has no
// per-process network counters, so sockets are wrapped, and file I/O through
// the page cache never reaches /proc/self/io's read_bytes, so the runtime
// counts the file bytes it reads and writes as well.
type usageCounters struct {
	netRx, netTx atomic.Int64
	fileBytes    atomic.Int64
}

// countingConn counts bytes through a connection.
type countingConn struct {
	net.Conn
	c *usageCounters
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.c.netRx.Add(int64(n))
	return n, err
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.c.netTx.Add(int64(n))
	return n, err
}

type countingListener struct {
	net.Listener
	c *usageCounters
}

func (l countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{conn, l.c}, nil
}

// Sample is one second of an executor's own resource use.
type Sample struct {
	Time       float64 `json:"t"`           // unix seconds at the end of the interval
	CPU        float64 `json:"cpu"`         // cores busy (process CPU time / wall time)
	MemBytes   int64   `json:"mem_bytes"`   // resident set size
	DiskBW     float64 `json:"disk_bw"`     // block-device bytes/s read+written (/proc/self/io)
	FileBW     float64 `json:"file_bw"`     // file bytes/s read+written by the runtime (input, spill, save)
	NetBW      float64 `json:"net_bw"`      // socket bytes/s received+sent
	Running    int     `json:"running"`     // tasks running at the end of the interval
	Stages     []int   `json:"stages"`      // stages with a task running during the interval
	BlockMem   int64   `json:"block_mem"`   // block manager bytes in memory
	BlockSpill int64   `json:"block_spill"` // block manager bytes on disk
}

// procReading is a snapshot of cumulative counters.
type procReading struct {
	at        time.Time
	cpu       time.Duration
	rss       int64
	disk      int64
	net, file int64
}

var clkTck = 100.0 // USER_HZ; 100 on every Linux that Go supports

func readProc(c *usageCounters) procReading {
	r := procReading{at: time.Now(), net: c.netRx.Load() + c.netTx.Load(), file: c.fileBytes.Load()}
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		// Fields after the parenthesised command name; utime and stime are
		// fields 14 and 15 of the whole line.
		if i := bytes.LastIndexByte(b, ')'); i > 0 {
			f := bytes.Fields(b[i+1:])
			if len(f) > 13 {
				ut, _ := strconv.ParseInt(string(f[11]), 10, 64)
				st, _ := strconv.ParseInt(string(f[12]), 10, 64)
				r.cpu = time.Duration(float64(ut+st) / clkTck * float64(time.Second))
			}
		}
	}
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := bytes.Fields(b); len(f) > 1 {
			pages, _ := strconv.ParseInt(string(f[1]), 10, 64)
			r.rss = pages * int64(os.Getpagesize())
		}
	}
	if b, err := os.ReadFile("/proc/self/io"); err == nil {
		for _, line := range bytes.Split(b, []byte("\n")) {
			k, v, ok := bytes.Cut(line, []byte(": "))
			if ok && (string(k) == "read_bytes" || string(k) == "write_bytes") {
				n, _ := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
				r.disk += n
			}
		}
	}
	return r
}

// sampleBetween turns two readings into a Sample.
func sampleBetween(a, b procReading) Sample {
	dt := b.at.Sub(a.at).Seconds()
	if dt <= 0 {
		dt = 1e-9
	}
	return Sample{Time: float64(b.at.UnixNano()) / 1e9, CPU: (b.cpu - a.cpu).Seconds() / dt, MemBytes: b.rss,
		DiskBW: float64(b.disk-a.disk) / dt, FileBW: float64(b.file-a.file) / dt, NetBW: float64(b.net-a.net) / dt}
}

// threadRunQueue is how long the calling OS thread has waited on a run
// queue, runnable but not running (the second field of
// /proc/thread-self/schedstat), or -1 where the kernel does not say. The
// executor reads it around a task on the task's locked thread: CPU time
// over CPU time plus this wait is the share of a core the task obtained
// while it wanted one, which tells an executor starved by other work on
// its host from one with nothing to do (docs/ispark.md).
func threadRunQueue() int64 {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return -1
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return -1
	}
	n, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return -1
	}
	return n
}
