package framework

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// readText emits the lines of byte range p as strings.
func (r *taskRun) readText(n *node, p int, emit func(any)) error {
	return r.readLines(n, p, func(line []byte) { emit(string(line)) })
}

// readLines reads the lines starting in byte range p of the file, the
// Hadoop way: a split that does not start at 0 skips its first partial line
// (the previous split reads past its end to finish it). line, without its
// end of line, aliases the read buffer and is valid only during the call:
// the bytes fast path (PairsFunc) converts nothing it does not keep.
func (r *taskRun) readLines(n *node, p int, emit func(line []byte)) error {
	sp := n.Splits[p]
	f, err := os.Open(n.Path)
	if err != nil {
		return fmt.Errorf("input %s: %v (the file must be readable at the same path on every agent)", n.Path, err)
	}
	defer f.Close()
	start := sp.Off
	if start > 0 {
		start--
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return err
	}
	// File bytes are counted as they come off the file (1 MiB at a time),
	// not once the split is done: the per-second usage samples, and the
	// stage peaks Prophet's predictor learns from them, must see a split's
	// reads spread over the seconds they took, not one whole split in the
	// second it ended (which read as a burst above any throttle).
	br := bufio.NewReaderSize(countingReader{ioLimits().Disk.Reader(f), &r.ex.stats.fileBytes}, 1<<20)
	pos := start
	if sp.Off > 0 {
		skip, err := br.ReadSlice('\n')
		pos += int64(len(skip))
		if err == io.EOF {
			return nil
		}
		for err == bufio.ErrBufferFull {
			skip, err = br.ReadSlice('\n')
			pos += int64(len(skip))
		}
	}
	end := sp.Off + sp.Len
	var long []byte // a line longer than the buffer, assembled
	for pos < end {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		pos += int64(len(line))
		if len(line) > 0 {
			s := line
			if s[len(s)-1] == '\n' {
				s = s[:len(s)-1]
			}
			if len(s) > 0 && s[len(s)-1] == '\r' {
				s = s[:len(s)-1]
			}
			emit(s)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	r.m.BytesRead += pos - start
	return nil
}

// countingReader adds what it reads to n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// computeBytes pushes partition p of n as byte records: text lines come
// straight from the read buffer (valid only during emit); other datasets
// must hold string or []byte records.
func (r *taskRun) computeBytes(n *node, p int, emit func([]byte)) error {
	if n.Op == "text" && !n.Cached {
		return r.readLines(n, p, emit)
	}
	var bad error
	err := r.compute(n, p, func(v any) {
		switch x := v.(type) {
		case string:
			emit([]byte(x))
		case []byte:
			emit(x)
		default:
			if bad == nil {
				bad = fmt.Errorf("function %q needs string records, got %T", r.fn, v)
			}
		}
	})
	if err != nil {
		return err
	}
	return bad
}
