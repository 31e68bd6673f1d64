package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// OutDir writes the files of one output directory (allot sim --out and the
// experiments' --out) and remembers the paths of those it completed, so a
// caller can say what it wrote even when a later file fails.
type OutDir struct {
	dir string
	// Written holds the paths of the files completed so far.
	Written []string
}

// NewOutDir creates dir (and its parents) if needed.
func NewOutDir(dir string) (*OutDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &OutDir{dir: dir}, nil
}

// Create writes the file name, its content produced by fill through a
// buffer; the path is recorded only once the file is complete and closed.
func (o *OutDir) Create(name string, fill func(io.Writer) error) error {
	p := filepath.Join(o.dir, name)
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := fill(bw); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", p, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	o.Written = append(o.Written, p)
	return nil
}
