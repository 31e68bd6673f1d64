package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Reader decodes a log line by line into typed events.
type Reader struct {
	r    *bufio.Reader
	line int
}

// NewReader reads a log from r.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 64<<10)} }

// Next returns the next event, or io.EOF after the last. Blank lines are
// skipped; a line of a kind this package does not know comes back as
// *Unknown rather than as an error, so old readers survive new writers.
func (r *Reader) Next() (Event, error) {
	for {
		b, err := r.r.ReadBytes('\n')
		if len(b) == 0 && err != nil {
			return nil, err
		}
		r.line++
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		ev, derr := decode(b)
		if derr != nil {
			return nil, fmt.Errorf("event log line %d: %w", r.line, derr)
		}
		return ev, nil
	}
}

func decode(b []byte) (Event, error) {
	var head struct {
		Event string  `json:"event"`
		Time  float64 `json:"time"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, err
	}
	ev := newEvent(head.Event)
	if ev == nil {
		return &Unknown{Event: head.Event, Time: head.Time, Raw: bytes.Clone(b)}, nil
	}
	if err := json.Unmarshal(b, ev); err != nil {
		return nil, fmt.Errorf("%s: %w", head.Event, err)
	}
	return ev, nil
}

// ReadAll reads every event up to the end of r.
func ReadAll(r io.Reader) ([]Event, error) {
	rd := NewReader(r)
	var out []Event
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// ReadFile reads every event of the log at path.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f)
}
