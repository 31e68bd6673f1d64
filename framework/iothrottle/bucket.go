package iothrottle

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// The environment an agent with --throttle-io gives its executors.
const (
	EnvDir    = "ALLOT_IO_THROTTLE_DIR" // where the agent's bucket files live
	EnvDiskBW = "ALLOT_IO_DISK_BW"      // MB/s of file I/O, all executors together
	EnvNetBW  = "ALLOT_IO_NET_BW"       // MB/s of fetched socket bytes, all executors together
)

// burstSeconds is how much unused rate a bucket saves: a tenth of a second
// lets small reads through without a lock round trip each time they come
// after a pause, and keeps the long-run rate exact.
const burstSeconds = 0.1

// Bucket is a token bucket of Rate bytes per second shared through a file.
// A nil *Bucket is unlimited. Take never refuses: a taker goes into debt
// and sleeps it off, so concurrent takers across processes share the rate
// in the order they came.
type Bucket struct {
	path string
	rate float64 // bytes per second
}

// Open returns the bucket named name in dir at mbps MB/s (10^6 bytes, as
// disk_bw and net_bw); nil when mbps <= 0 (unlimited).
func Open(dir, name string, mbps float64) (*Bucket, error) {
	if !(mbps > 0) || math.IsInf(mbps, 0) {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("iothrottle: %w", err)
	}
	return &Bucket{path: filepath.Join(dir, name), rate: mbps * 1e6}, nil
}

// Limits are an executor's two buckets.
type Limits struct {
	Disk, Net *Bucket
}

// FromEnv opens the buckets the agent's environment names; zero Limits
// (unlimited) when it names none.
func FromEnv() (Limits, error) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return Limits{}, nil
	}
	var l Limits
	var err error
	for _, b := range []struct {
		env, name string
		to        **Bucket
	}{{EnvDiskBW, "disk_bw", &l.Disk}, {EnvNetBW, "net_bw", &l.Net}} {
		v := os.Getenv(b.env)
		if v == "" {
			continue
		}
		mbps, perr := strconv.ParseFloat(v, 64)
		if perr != nil {
			return Limits{}, fmt.Errorf("iothrottle: %s=%q: %v", b.env, v, perr)
		}
		if *b.to, err = Open(dir, b.name, mbps); err != nil {
			return Limits{}, err
		}
	}
	return l, nil
}

// Take accounts n bytes and sleeps until the bucket has paid for them.
func (b *Bucket) Take(n int) {
	if b == nil || n <= 0 {
		return
	}
	d, err := b.take(float64(n), time.Now())
	if err != nil {
		return // a bucket that cannot be read throttles nothing rather than fail the task
	}
	time.Sleep(d)
}

// take updates the shared state for n bytes taken at now and returns how
// long the taker must wait. The file holds the token balance (float64
// bytes, negative in debt) and the time it was computed (Unix ns).
func (b *Bucket) take(n float64, now time.Time) (time.Duration, error) {
	f, err := os.OpenFile(b.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return 0, err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	var st [16]byte
	burst := b.rate * burstSeconds
	tokens, last := burst, now.UnixNano()
	if k, _ := f.ReadAt(st[:], 0); k == len(st) {
		tokens = math.Float64frombits(binary.LittleEndian.Uint64(st[:8]))
		last = int64(binary.LittleEndian.Uint64(st[8:]))
	}
	if el := now.UnixNano() - last; el > 0 {
		tokens = math.Min(burst, tokens+b.rate*float64(el)/1e9)
		last = now.UnixNano()
	}
	tokens -= n
	binary.LittleEndian.PutUint64(st[:8], math.Float64bits(tokens))
	binary.LittleEndian.PutUint64(st[8:], uint64(last))
	if _, err := f.WriteAt(st[:], 0); err != nil {
		return 0, err
	}
	if tokens >= 0 {
		return 0, nil
	}
	return time.Duration(-tokens / b.rate * 1e9), nil
}

// Reader throttles what is read from r (r itself when b is nil).
func (b *Bucket) Reader(r io.Reader) io.Reader {
	if b == nil {
		return r
	}
	return &reader{r, b}
}

// Writer throttles what is written to w (w itself when b is nil).
func (b *Bucket) Writer(w io.Writer) io.Writer {
	if b == nil {
		return w
	}
	return &writer{w, b}
}

type reader struct {
	r io.Reader
	b *Bucket
}

func (t *reader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.b.Take(n)
	return n, err
}

type writer struct {
	w io.Writer
	b *Bucket
}

func (t *writer) Write(p []byte) (int, error) {
	t.b.Take(len(p))
	return t.w.Write(p)
}
