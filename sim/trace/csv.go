package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sim"
)

// The generic workload format (`--format allot`), two CSV files with a
// header row naming the columns (in any order; lines starting with # are
// comments):
//
// Jobs: job_id,submit_s,framework,tasks,duration_s,cpus,mem_mb and
// optionally gpus,disk_bw,net_bw (MB/s). One row per group of identical
// tasks; the rows of one job share job_id, framework and submit_s, and
// run in file order, each group after the previous one has finished (a
// chain of stages).
//
// Nodes: node_id,cpus,mem_mb and optionally gpus,disk_bw,net_bw,count;
// count > 1 stands for that many identical nodes named node_id-1, -2, ...
var (
	jobColumns      = []string{"job_id", "submit_s", "framework", "tasks", "duration_s", "cpus", "mem_mb"}
	jobOptColumns   = []string{"gpus", "disk_bw", "net_bw"}
	nodeColumns     = []string{"node_id", "cpus", "mem_mb"}
	nodeOptColumns  = []string{"gpus", "disk_bw", "net_bw", "count"}
	optionalKinds   = map[string]resources.Kind{"gpus": resources.GPUs, "disk_bw": resources.DiskBW, "net_bw": resources.NetBW}
	maxNodesPerLine = 1_000_000
)

// InputError is a malformed input row: the file, the line, and the column
// whose value is wrong.
type InputError struct {
	File   string
	Line   int
	Column string // empty when the row as a whole is wrong
	Value  string
	Msg    string
}

func (e *InputError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d", e.File, e.Line)
	if e.Column != "" {
		fmt.Fprintf(&b, ": column %q", e.Column)
	}
	if e.Value != "" || e.Column != "" {
		fmt.Fprintf(&b, ": value %q", e.Value)
	}
	return b.String() + ": " + e.Msg
}

// table reads a headed CSV and hands out cells by column name; it reads
// as lines and bufio.Scanner do: for t.next() { ... }, then t.err().
type table struct {
	file   string
	r      *csv.Reader
	index  map[string]int
	header []string
	row    []string
	line   int
	e      error // what stopped next
}

func newTable(r io.Reader, file string, required, optional []string) (*table, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	t := &table{file: file, r: cr, index: map[string]int{}}
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &InputError{File: file, Line: 1, Msg: "empty file: want a header row " + strings.Join(required, ",")}
	}
	if err != nil {
		return nil, t.csvErr(err)
	}
	t.line, _ = cr.FieldPos(0)
	known := map[string]bool{}
	for _, c := range append(append([]string{}, required...), optional...) {
		known[c] = true
	}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if !known[h] {
			return nil, &InputError{File: file, Line: t.line, Column: h, Value: header[i],
				Msg: fmt.Sprintf("unknown column; the columns are %s and optionally %s", strings.Join(required, ","), strings.Join(optional, ","))}
		}
		if _, dup := t.index[h]; dup {
			return nil, &InputError{File: file, Line: t.line, Column: h, Value: header[i], Msg: "column appears twice in the header"}
		}
		t.index[h] = i
	}
	for _, c := range required {
		if _, ok := t.index[c]; !ok {
			return nil, &InputError{File: file, Line: t.line, Column: c, Msg: "required column missing from the header"}
		}
	}
	t.header = header
	return t, nil
}

func (t *table) csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &InputError{File: t.file, Line: pe.Line, Msg: pe.Err.Error()}
	}
	return fmt.Errorf("%s: %w", t.file, err)
}

// next reads a row; false at the end or on an error, which err returns.
func (t *table) next() bool {
	row, err := t.r.Read()
	if err == io.EOF {
		return false
	}
	if err != nil {
		t.e = t.csvErr(err)
		return false
	}
	t.line, _ = t.r.FieldPos(0)
	if len(row) != len(t.header) {
		t.e = &InputError{File: t.file, Line: t.line, Msg: fmt.Sprintf("%d fields, but the header has %d", len(row), len(t.header))}
		return false
	}
	t.row = row
	return true
}

// err is what stopped next, nil at the end of the input.
func (t *table) err() error { return t.e }

func (t *table) has(col string) bool { _, ok := t.index[col]; return ok }

func (t *table) str(col string) string {
	i, ok := t.index[col]
	if !ok {
		return ""
	}
	return strings.TrimSpace(t.row[i])
}

func (t *table) errf(col, format string, args ...any) error {
	return &InputError{File: t.file, Line: t.line, Column: col, Value: t.str(col), Msg: fmt.Sprintf(format, args...)}
}

// num reads a finite number >= 0; an absent optional column or empty
// optional cell reads as 0.
func (t *table) num(col string, required bool) (float64, error) {
	s := t.str(col)
	if s == "" {
		if required {
			return 0, t.errf(col, "empty; want a number")
		}
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, t.errf(col, "not a number")
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, t.errf(col, "want a finite number >= 0")
	}
	return v, nil
}

// count reads a positive integer.
func (t *table) count(col string, def int) (int, error) {
	s := t.str(col)
	if s == "" {
		if def > 0 {
			return def, nil
		}
		return 0, t.errf(col, "empty; want a whole number >= 1")
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		return 0, t.errf(col, "want a whole number >= 1")
	}
	return v, nil
}

func (t *table) quantity(col string, v float64) (resources.Quantity, error) {
	q, err := resources.QuantityFromFloat(v)
	if err != nil {
		return 0, t.errf(col, "%v", err)
	}
	return q, nil
}

// vector reads cpus, mem_mb and the optional kinds of a row.
func (t *table) vector() (resources.Vector, error) {
	var v resources.Vector
	read := func(col string, k resources.Kind, required bool) error {
		x, err := t.num(col, required)
		if err != nil {
			return err
		}
		v[k], err = t.quantity(col, x)
		return err
	}
	if err := read("cpus", resources.CPUs, true); err != nil {
		return v, err
	}
	if err := read("mem_mb", resources.Mem, true); err != nil {
		return v, err
	}
	for _, col := range []string{"gpus", "disk_bw", "net_bw"} {
		if t.has(col) {
			if err := read(col, optionalKinds[col], false); err != nil {
				return v, err
			}
		}
	}
	return v, nil
}

// ReadJobsCSV parses the generic jobs format from r; file names the input
// in errors. Every malformed row is reported with its line and column.
func ReadJobsCSV(r io.Reader, file string) ([]sim.Job, error) {
	t, err := newTable(r, file, jobColumns, jobOptColumns)
	if err != nil {
		return nil, err
	}
	var jobs []sim.Job
	byID := map[string]int{}
	for t.next() {
		id := t.str("job_id")
		if id == "" {
			return nil, t.errf("job_id", "empty; want a job id")
		}
		fw := t.str("framework")
		if fw == "" {
			return nil, t.errf("framework", "empty; want a framework name")
		}
		submit, err := t.num("submit_s", true)
		if err != nil {
			return nil, err
		}
		tasks, err := t.count("tasks", 0)
		if err != nil {
			return nil, err
		}
		dur, err := t.num("duration_s", true)
		if err != nil {
			return nil, err
		}
		if dur == 0 {
			return nil, t.errf("duration_s", "want a duration > 0")
		}
		d, err := t.vector()
		if err != nil {
			return nil, err
		}
		if d[resources.CPUs] == 0 && d[resources.Mem] == 0 {
			return nil, t.errf("cpus", "a task must ask for cpus or mem (both are 0)")
		}
		g := sim.Group{Tasks: tasks, Duration: dur, Demand: d, Line: t.line}
		if i, seen := byID[id]; seen {
			j := &jobs[i]
			if j.Framework != fw {
				return nil, t.errf("framework", "job %q was given framework %q on line %d", id, j.Framework, j.Line)
			}
			if j.Submit != submit {
				return nil, t.errf("submit_s", "job %q was submitted at %v on line %d; rows of one job share submit_s", id, j.Submit, j.Line)
			}
			j.Stages = append(j.Stages, sim.Stage{Groups: []sim.Group{g}})
			continue
		}
		byID[id] = len(jobs)
		jobs = append(jobs, sim.Job{ID: id, Framework: fw, Submit: submit, Line: t.line, Stages: []sim.Stage{{Groups: []sim.Group{g}}}})
	}
	if err := t.err(); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, &InputError{File: file, Line: t.line, Msg: "no jobs after the header"}
	}
	return jobs, nil
}

// ReadNodesCSV parses the generic nodes format.
func ReadNodesCSV(r io.Reader, file string) ([]sim.Node, error) {
	t, err := newTable(r, file, nodeColumns, nodeOptColumns)
	if err != nil {
		return nil, err
	}
	var nodes []sim.Node
	seen := map[string]int{}
	for t.next() {
		id := t.str("node_id")
		if id == "" {
			return nil, t.errf("node_id", "empty; want a node id")
		}
		v, err := t.vector()
		if err != nil {
			return nil, err
		}
		if v[resources.CPUs] == 0 && v[resources.Mem] == 0 {
			return nil, t.errf("cpus", "a node needs cpus or mem (both are 0)")
		}
		n, err := t.count("count", 1)
		if err != nil {
			return nil, err
		}
		if n > maxNodesPerLine {
			return nil, t.errf("count", "at most %d nodes per line", maxNodesPerLine)
		}
		for k := 1; k <= n; k++ {
			nid := id
			if n > 1 {
				nid = fmt.Sprintf("%s-%d", id, k)
			}
			if l, dup := seen[nid]; dup {
				return nil, t.errf("node_id", "node %q already defined on line %d", nid, l)
			}
			seen[nid] = t.line
			nodes = append(nodes, sim.Node{ID: nid, Total: v, Line: t.line})
		}
	}
	if err := t.err(); err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, &InputError{File: file, Line: t.line, Msg: "no nodes after the header"}
	}
	return nodes, nil
}

// readFile opens path and parses it with read.
func readFile[T any](path string, read func(io.Reader, string) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return read(f, path)
}

// LoadJobsCSV reads a jobs file in the generic format.
func LoadJobsCSV(path string) ([]sim.Job, error) { return readFile(path, ReadJobsCSV) }

// LoadNodesCSV reads a nodes file in the generic format.
func LoadNodesCSV(path string) ([]sim.Node, error) { return readFile(path, ReadNodesCSV) }
