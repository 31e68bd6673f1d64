package scalebench

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Latencies collects duration samples from many goroutines (up to a cap, so
// that a long run cannot grow without bound).
type Latencies struct {
	mu      sync.Mutex
	samples []time.Duration
	dropped int
}

const maxSamples = 1 << 21

func (l *Latencies) Add(d time.Duration) {
	l.mu.Lock()
	if len(l.samples) < maxSamples {
		l.samples = append(l.samples, d)
	} else {
		l.dropped++
	}
	l.mu.Unlock()
}

// Summary is a latency distribution in milliseconds.
type Summary struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// Summary sorts a copy of the samples taken so far.
func (l *Latencies) Summary() Summary {
	l.mu.Lock()
	s := append([]time.Duration(nil), l.samples...)
	l.mu.Unlock()
	if len(s) == 0 {
		return Summary{}
	}
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return ms(s[max(i, 0)])
	}
	return Summary{N: len(s), P50: q(0.5), P99: q(0.99), Max: ms(s[len(s)-1])}
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

// procStats are a process's CPU seconds and memory from /proc.
type procStats struct {
	CPUSeconds float64
	RSS, HWM   int64 // bytes: resident now, and its peak (VmHWM)
}

// readProc reads /proc/<pid>/stat (utime, stime) and /proc/<pid>/status.
func readProc(pid int) (procStats, error) {
	var ps procStats
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ps, err
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is field 3, utime 14 and stime 15 (1-based).
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return ps, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	ps.CPUSeconds = (ut + st) / 100 // USER_HZ is 100 on Linux
	fh, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ps, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			ps.RSS = n << 10
		case "VmHWM":
			ps.HWM = n << 10
		}
	}
	return ps, nil
}

// runQueueWait is the time all of pid's threads have spent runnable but
// waiting for a CPU (the second field of /proc/<pid>/task/*/schedstat): on
// a shared host, the part of a latency that is nobody's code.
func runQueueWait(pid int) time.Duration {
	dirs, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var sum time.Duration
	for _, d := range dirs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, d.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) >= 2 {
			ns, _ := strconv.ParseInt(f[1], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

// loadAvg is the host's 1-minute load average ("" if unreadable).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// histogram is one Prometheus histogram scraped from /metrics: cumulative
// counts at upper bounds.
type histogram struct {
	bounds []float64
	counts []float64
}

// scrapeHistogram fetches name's buckets from http://addr/metrics.
func scrapeHistogram(c *http.Client, addr, name string) (histogram, error) {
	var h histogram
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	prefix := name + `_bucket{le="`
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		le, val, ok := strings.Cut(line[len(prefix):], `"} `)
		if !ok {
			continue
		}
		b, err1 := strconv.ParseFloat(le, 64)
		n, err2 := strconv.ParseFloat(val, 64)
		if err1 == nil && err2 == nil {
			h.bounds, h.counts = append(h.bounds, b), append(h.counts, n)
		}
	}
	return h, sc.Err()
}

// quantile interpolates linearly inside the bucket holding q (seconds);
// NaN without samples. A quantile in the +Inf bucket is its lower bound.
func (h histogram) quantile(q float64) float64 {
	if len(h.counts) == 0 || h.counts[len(h.counts)-1] == 0 {
		return math.NaN()
	}
	rank := q * h.counts[len(h.counts)-1]
	lo, below := 0.0, 0.0
	for i, c := range h.counts {
		if c >= rank {
			if math.IsInf(h.bounds[i], 1) || c == below {
				return lo
			}
			return lo + (h.bounds[i]-lo)*(rank-below)/(c-below)
		}
		lo, below = h.bounds[i], c
	}
	return lo
}

// since is h without the observations o, an earlier scrape of the same
// histogram, had: what was observed in between. h as it is if the buckets
// differ.
func (h histogram) since(o histogram) histogram {
	if len(o.counts) != len(h.counts) {
		return h
	}
	d := histogram{bounds: h.bounds, counts: make([]float64, len(h.counts))}
	for i := range h.counts {
		d.counts[i] = h.counts[i] - o.counts[i]
	}
	return d
}

// count is the number of observations.
func (h histogram) count() float64 {
	if len(h.counts) == 0 {
		return 0
	}
	return h.counts[len(h.counts)-1]
}
