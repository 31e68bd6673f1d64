package framework

import (
	"fmt"
	"os"
	"sort"
)

// Dataset is a partitioned collection defined by its lineage. Building a
// dataset does no work; actions (Collect, Count, Save) run jobs. An error in
// building (an unregistered function, a missing input) is kept and returned
// by the first action, so chains read naturally.
type Dataset struct {
	ctx *Context
	n   *node
	err error
}

func (c *Context) newNode(n *node) *Dataset {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dag.nextID++
	n.ID = c.dag.nextID
	c.dag.nodes[n.ID] = n
	return &Dataset{ctx: c, n: n}
}

func (c *Context) failed(err error) *Dataset { return &Dataset{ctx: c, err: err} }

// TextFile reads a text file as lines, in parts byte-range partitions
// (0: one per 32 MB, rounded up to a multiple of the total executor cores
// so that the last wave of tasks does not leave cores idle). The file must be
// readable at the same path wherever executors run.
func (c *Context) TextFile(path string, parts int) *Dataset {
	st, err := os.Stat(path)
	if err != nil {
		return c.failed(fmt.Errorf("input file: %v (check the path given with --input)", err))
	}
	if st.IsDir() {
		return c.failed(fmt.Errorf("input file %s is a directory: give a file", path))
	}
	size := st.Size()
	if parts <= 0 {
		cores := max(c.cfg.Executors*c.cfg.Cores, 1)
		parts = int((size + 32<<20 - 1) / (32 << 20))
		parts = max((parts+cores-1)/cores*cores, cores)
	}
	n := &node{Op: "text", Path: path, Parts: parts, Name: "textFile " + path}
	for i := 0; i < parts; i++ {
		lo, hi := size*int64(i)/int64(parts), size*int64(i+1)/int64(parts)
		n.Splits = append(n.Splits, span{lo, hi - lo})
	}
	c.mu.Lock()
	c.dag.inputBytes += size
	c.mu.Unlock()
	return c.newNode(n)
}

// Range is the int64 records 0..n-1 in parts partitions.
func (c *Context) Range(n int64, parts int) *Dataset {
	if parts <= 0 || n < 0 {
		return c.failed(fmt.Errorf("Range(%d, %d): need n >= 0 and parts > 0", n, parts))
	}
	return c.newNode(&node{Op: "range", N: n, Parts: parts, Name: fmt.Sprintf("range %d", n)})
}

// Parallelize distributes in-memory records over parts partitions (they
// travel with the tasks).
func (c *Context) Parallelize(recs []any, parts int) *Dataset {
	if parts <= 0 {
		return c.failed(fmt.Errorf("Parallelize: parts must be positive"))
	}
	n := &node{Op: "slice", Parts: parts, Name: fmt.Sprintf("parallelize %d records", len(recs))}
	n.PData = make([][]byte, parts)
	for i, r := range recs {
		p := i * parts / max(len(recs), 1)
		var err error
		if n.PData[p], err = appendRecord(n.PData[p], r); err != nil {
			return c.failed(fmt.Errorf("Parallelize: record %d: %v", i, err))
		}
	}
	return c.newNode(n)
}

func (d *Dataset) narrow(op, fn string, args []any) *Dataset {
	if d.err != nil {
		return d
	}
	if err := checkFunc(fn, op); err != nil {
		return d.ctx.failed(fmt.Errorf("%s: %w", op, err))
	}
	var arg []byte
	if len(args) > 1 {
		return d.ctx.failed(fmt.Errorf("%s(%q): at most one argument (pass a []any for several)", op, fn))
	}
	if len(args) == 1 {
		var err error
		if arg, err = appendRecord(nil, args[0]); err != nil {
			return d.ctx.failed(fmt.Errorf("%s(%q) argument: %v", op, fn, err))
		}
	}
	return d.ctx.newNode(&node{Op: op, Fn: fn, Arg: arg, Parent: d.n.ID, Parts: d.n.Parts, Name: op + " " + fn})
}

// Map applies the registered map function fn (with an optional argument
// for a factory) to every record.
func (d *Dataset) Map(fn string, arg ...any) *Dataset { return d.narrow("map", fn, arg) }

// FlatMap applies the registered flatMap function fn.
func (d *Dataset) FlatMap(fn string, arg ...any) *Dataset { return d.narrow("flatMap", fn, arg) }

// Filter keeps the records the registered filter fn accepts.
func (d *Dataset) Filter(fn string, arg ...any) *Dataset { return d.narrow("filter", fn, arg) }

// MapPartitions applies fn to whole partitions.
func (d *Dataset) MapPartitions(fn string, arg ...any) *Dataset {
	return d.narrow("mapPartitions", fn, arg)
}

// Cache keeps the dataset's partitions in the executors' block managers
// once computed (in memory up to the limit, then on disk); lost partitions
// are recomputed from lineage.
func (d *Dataset) Cache() *Dataset {
	if d.err == nil {
		d.ctx.mu.Lock()
		d.n.Cached = true
		d.ctx.mu.Unlock()
	}
	return d
}

// shuffle declares a shuffle of d into parts buckets (0: as many as d has)
// and returns its id and bucket count.
func (d *Dataset) shuffle(parts int, combine string, bounds []byte) (sid, buckets int) {
	c := d.ctx
	if parts <= 0 {
		parts = d.n.Parts
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dag.nextShuffle++
	s := &shuffleDep{ID: c.dag.nextShuffle, Parent: d.n.ID, Parts: parts, Combine: combine, Bounds: bounds}
	c.dag.shuffles[s.ID] = s
	return s.ID, parts
}

// ReduceByKey merges the values of each key with the registered reduce
// function fn (map-side first), into parts partitions (0: as many as now).
func (d *Dataset) ReduceByKey(fn string, parts int) *Dataset {
	if d.err != nil {
		return d
	}
	if err := checkFunc(fn, "reduce"); err != nil {
		return d.ctx.failed(fmt.Errorf("reduceByKey: %w", err))
	}
	sid, parts := d.shuffle(parts, fn, nil)
	return d.ctx.newNode(&node{Op: "shuffled", Agg: "reduce", Fn: fn, Shuffle: []int{sid}, Parts: parts, Name: "reduceByKey " + fn})
}

// GroupByKey gathers each key's values into a []any.
func (d *Dataset) GroupByKey(parts int) *Dataset {
	if d.err != nil {
		return d
	}
	sid, parts := d.shuffle(parts, "", nil)
	return d.ctx.newNode(&node{Op: "shuffled", Agg: "group", Shuffle: []int{sid}, Parts: parts, Name: "groupByKey"})
}

// Join pairs the values of equal keys: KV{key, []any{left, right}}.
func (d *Dataset) Join(other *Dataset, parts int) *Dataset {
	if d.err != nil {
		return d
	}
	if other.err != nil {
		return other
	}
	if parts <= 0 {
		parts = max(d.n.Parts, other.n.Parts)
	}
	a, _ := d.shuffle(parts, "", nil)
	b, _ := other.shuffle(parts, "", nil)
	return d.ctx.newNode(&node{Op: "shuffled", Agg: "join", Shuffle: []int{a, b}, Parts: parts, Name: "join"})
}

// SortByKey sorts by key across parts range partitions: partition i holds
// keys no greater than partition i+1's. It samples keys first (a small job),
// as Spark does, to choose the ranges.
func (d *Dataset) SortByKey(parts int) *Dataset {
	if d.err != nil {
		return d
	}
	if parts <= 0 {
		parts = d.n.Parts
	}
	res, err := d.ctx.runJob(d.n, "sample", "")
	if err != nil {
		return d.ctx.failed(fmt.Errorf("sortByKey sampling: %w", err))
	}
	var keys []any
	for _, r := range res {
		decodeAll(r.Data, func(v any) { keys = append(keys, v) })
	}
	sort.SliceStable(keys, func(i, j int) bool { return compareKeys(keys[i], keys[j]) < 0 })
	var bounds []byte
	for i := 1; i < parts && len(keys) > 0; i++ {
		bounds, _ = appendRecord(bounds, keys[i*len(keys)/parts])
	}
	if len(bounds) == 0 {
		parts = 1
	}
	// bounds hold parts-1 keys; one bucket more for keys above the last.
	sid, _ := d.shuffle(parts, "", bounds)
	return d.ctx.newNode(&node{Op: "shuffled", Agg: "sort", Shuffle: []int{sid}, Parts: parts, Name: "sortByKey"})
}

// Collect returns every record, partition by partition.
func (d *Dataset) Collect() ([]any, error) {
	if d.err != nil {
		return nil, d.err
	}
	res, err := d.ctx.runJob(d.n, "collect", "")
	if err != nil {
		return nil, err
	}
	var out []any
	for _, r := range res {
		if err := decodeAll(r.Data, func(v any) { out = append(out, v) }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Count returns the number of records.
func (d *Dataset) Count() (int64, error) {
	if d.err != nil {
		return 0, d.err
	}
	res, err := d.ctx.runJob(d.n, "count", "")
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range res {
		n += r.Count
	}
	return n, nil
}

// Save writes each partition as dir/part-NNNNN, one record per line (KV as
// key<TAB>value). dir must be writable at the same path by every executor.
func (d *Dataset) Save(dir string) error {
	if d.err != nil {
		return d.err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save: %w", err)
	}
	_, err := d.ctx.runJob(d.n, "save", dir)
	return err
}

// Err is the error recorded while building the dataset, if any.
func (d *Dataset) Err() error { return d.err }
