package eventlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

// flushEvery bounds how far a reader following the file (or a crashed
// driver's log) can be behind the events written.
const flushEvery = time.Second

// Writer appends events to a log, one JSON line each. It is safe for
// concurrent use; each event is one line, never interleaved with another.
type Writer struct {
	path string

	// mu guards w, c and last. It is a leaf lock: callers may hold their
	// own locks while writing, and nothing is called with mu held.
	mu   sync.Mutex
	w    *bufio.Writer // nil once closed
	c    io.Closer     // the file, or nil
	last time.Time     // last flush
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Create opens a new log for an application run in dir (created if
// needed), named <app>-<yyyymmdd-hhmmss>-<pid>.jsonl.
func Create(dir, app string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("event log dir %s: %w", dir, err)
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-%s-%d", unsafeName.ReplaceAllString(app, "_"), time.Now().Format("20060102-150405"), os.Getpid()))
	// Two runs of one application started by one process within a second
	// (tests, a driver looping over settings to profile them) would share
	// the name: the later one gets a -2, -3, ... suffix instead of
	// truncating the earlier log, which the demand predictor learns from.
	path := base + ".jsonl"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	for n := 2; errors.Is(err, fs.ErrExist) && n < 1000; n++ {
		path = fmt.Sprintf("%s-%d.jsonl", base, n)
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	}
	if err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	w := NewWriter(f)
	w.path, w.c = path, f
	return w, nil
}

// NewWriter writes a log to w (Close flushes it but does not close w).
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), last: time.Now()}
}

// Path is the file Create opened ("" for NewWriter).
func (l *Writer) Path() string { return l.path }

// Write appends one event, setting its "event" field to its kind. Writing
// to a closed log does nothing.
func (l *Writer) Write(ev Event) error {
	var b []byte
	if u, ok := ev.(*Unknown); ok {
		b = u.Raw
	} else {
		ev.stamp()
		var err error
		if b, err = json.Marshal(ev); err != nil {
			return fmt.Errorf("event log: encoding %s: %w", ev.Kind(), err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return nil
	}
	l.w.Write(b)
	err := l.w.WriteByte('\n')
	if time.Since(l.last) > flushEvery {
		err = l.w.Flush()
		l.last = time.Now()
	}
	return err
}

// Close flushes the log and closes the file Create opened.
func (l *Writer) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return nil
	}
	err := l.w.Flush()
	l.w = nil
	if l.c != nil {
		if cerr := l.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
