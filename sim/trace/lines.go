package trace

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// lines reads a headerless trace of delimited fields (SWIM's TSV,
// Alibaba's plain CSV) in the shape of table: for l.next() { ... } moves
// record by record and l.err says what stopped it; num reads a cell and
// errf blames one, by column, so every reader reports file, line, column
// and value alike. Lines count from 1, a trailing \r is dropped, and blank
// lines (and, with comments, lines that start with #) are skipped.
type lines struct {
	sc       *bufio.Scanner
	file     string
	names    []string // the columns, in order
	sep      byte
	comments bool
	line     int
	row      []string // reused: a caller keeps strings, never the slice
}

func newLines(r io.Reader, file string, sep byte, comments bool, names []string) *lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &lines{sc: sc, file: file, names: names, sep: sep, comments: comments}
}

// next reads the next record; false at the end or on an error, which err
// returns.
func (l *lines) next() bool {
	for l.sc.Scan() {
		l.line++
		text := strings.TrimRight(l.sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || (l.comments && strings.HasPrefix(text, "#")) {
			continue
		}
		l.row = split(text, l.sep, l.row[:0])
		return true
	}
	return false
}

// err is what stopped next, nil at the end of the input.
func (l *lines) err() error {
	if err := l.sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", l.file, err)
	}
	return nil
}

// errf blames cell c of the current record.
func (l *lines) errf(c int, format string, args ...any) error {
	return &InputError{File: l.file, Line: l.line, Column: l.names[c], Value: l.row[c], Msg: fmt.Sprintf(format, args...)}
}

// num reads cell c as a finite number >= 0.
func (l *lines) num(c int) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(l.row[c]), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return 0, l.errf(c, "want a finite number >= 0")
	}
	return x, nil
}

// split splits a plain (unquoted) line at sep into out without allocating
// a new slice per line: the Alibaba file has 31,756 rows and no quoting.
func split(s string, sep byte, out []string) []string {
	for {
		i := strings.IndexByte(s, sep)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}
