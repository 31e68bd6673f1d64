package framework

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"sync/atomic"
)

// node is one dataset in a job's lineage, in the form shipped to
// executors: everything an executor needs to compute a partition of it from
// its sources, its cached copy, or shuffle outputs.
type node struct {
	ID      int      `json:"id"`
	Op      string   `json:"op"` // text, range, slice, map, flatMap, filter, mapPartitions, shuffled
	Fn      string   `json:"fn,omitempty"`
	Arg     []byte   `json:"arg,omitempty"`
	Parent  int      `json:"parent,omitempty"`
	Parts   int      `json:"parts"`
	Cached  bool     `json:"cached,omitempty"`
	Name    string   `json:"name,omitempty"`
	Path    string   `json:"path,omitempty"`    // text
	Splits  []span   `json:"splits,omitempty"`  // text: byte ranges per partition
	N       int64    `json:"n,omitempty"`       // range
	PData   [][]byte `json:"pdata,omitempty"`   // slice: encoded records per partition
	Shuffle []int    `json:"shuffle,omitempty"` // shuffled: the shuffle ids read (two for join)
	Agg     string   `json:"agg,omitempty"`     // shuffled: reduce, group, sort, join
}

type span struct{ Off, Len int64 }

// shuffleDep is a shuffle boundary: the map side computes Parent and writes
// its records, partitioned by key into Parts buckets.
type shuffleDep struct {
	ID      int    `json:"id"`
	Parent  int    `json:"parent"`
	Parts   int    `json:"parts"`
	Combine string `json:"combine,omitempty"` // reduce function applied map-side
	Bounds  []byte `json:"bounds,omitempty"`  // range partitioner: encoded sorted upper bounds
}

// taskSpec is what the driver sends an executor.
type taskSpec struct {
	ID        int64         `json:"id"`
	Stage     int           `json:"stage"`
	Partition int           `json:"partition"`
	Attempt   int           `json:"attempt"`
	Top       int           `json:"top"`
	Nodes     []*node       `json:"nodes"`
	Write     *shuffleDep   `json:"write,omitempty"`  // shuffle-map task
	Action    string        `json:"action,omitempty"` // result task: collect, count, save, sample
	SavePath  string        `json:"save_path,omitempty"`
	Fetch     map[int][]loc `json:"fetch,omitempty"`      // shuffle id -> map outputs (index = map partition)
	CacheLocs map[int]loc   `json:"cache_locs,omitempty"` // node id -> executor holding the cached partition
}

type loc struct {
	Exec string `json:"exec"`
	URL  string `json:"url"`
}

// taskMetrics are measured by the executor for each task.
type taskMetrics struct {
	Start        int64 `json:"start_ns"`
	End          int64 `json:"end_ns"`
	CPUNanos     int64 `json:"cpu_ns"`
	BytesRead    int64 `json:"bytes_read"`
	ShuffleWrite int64 `json:"shuffle_write_bytes"`
	ShuffleFetch int64 `json:"shuffle_fetch_bytes"`
	RecordsOut   int64 `json:"records_out"`
	CacheHit     bool  `json:"cache_hit,omitempty"`
	// RunQueueNanos is how long the task's thread was runnable but waited
	// for a CPU (/proc/thread-self/schedstat): with CPUNanos, the share of
	// a core the task obtained while it wanted one (0 where unmeasured).
	RunQueueNanos int64 `json:"rq_ns,omitempty"`
}

type taskResult struct {
	Data     []byte      `json:"data,omitempty"`
	Count    int64       `json:"count"`
	Metrics  taskMetrics `json:"metrics"`
	Error    string      `json:"error,omitempty"`
	Fetch    *fetchFail  `json:"fetch_failed,omitempty"`
	Cached   []int       `json:"cached,omitempty"` // node ids whose partition this task stored
	Executor string      `json:"executor"`
}

// fetchFail says a shuffle output or cached block could not be fetched, so
// the driver must recompute it rather than count a task failure.
type fetchFail struct {
	Shuffle int    `json:"shuffle"`
	Map     int    `json:"map"`
	Exec    string `json:"exec"`
	Node    int    `json:"node,omitempty"`
}

func (f *fetchFail) Error() string {
	return fmt.Sprintf("fetch of shuffle %d map %d from executor %s failed", f.Shuffle, f.Map, f.Exec)
}

// taskRun is the executor side of one task: it computes a partition of the
// top node by pulling records through the lineage.
type taskRun struct {
	ex    *Executor
	spec  *taskSpec
	nodes map[int]*node
	m     *taskMetrics
	res   *taskResult
	fn    string // the registered function running, for panic messages
}

// compute pushes the records of partition p of n into emit.
func (r *taskRun) compute(n *node, p int, emit func(any)) error {
	if n.Cached {
		name := cacheBlock(n.ID, p)
		if ok, err := r.ex.blocks.eachRecord(name, emit); ok {
			r.m.CacheHit = true
			return err
		}
		if l, ok := r.spec.CacheLocs[n.ID]; ok && l.Exec != r.ex.id {
			if b, err := r.ex.fetch(l.URL, name); err == nil {
				r.m.ShuffleFetch += int64(len(b))
				return decodeAll(b, emit)
			}
			// The holder is gone: recompute from lineage below.
		}
		var buf []byte
		var encErr error
		err := r.computeFresh(n, p, func(v any) {
			if encErr == nil {
				buf, encErr = appendRecord(buf, v)
			}
			emit(v)
		})
		if err != nil {
			return err
		}
		if encErr != nil {
			return encErr
		}
		r.ex.blocks.put(name, buf)
		r.res.Cached = append(r.res.Cached, n.ID)
		return nil
	}
	return r.computeFresh(n, p, emit)
}

func (r *taskRun) parent(n *node) (*node, error) {
	pn := r.nodes[n.Parent]
	if pn == nil {
		return nil, fmt.Errorf("lineage of dataset %d is missing its parent %d", n.ID, n.Parent)
	}
	return pn, nil
}

func (r *taskRun) computeFresh(n *node, p int, emit func(any)) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("function %q panicked: %v", r.fn, x)
		}
	}()
	switch n.Op {
	case "text":
		return r.readText(n, p, emit)
	case "range":
		lo, hi := n.N*int64(p)/int64(n.Parts), n.N*int64(p+1)/int64(n.Parts)
		for i := lo; i < hi; i++ {
			emit(i)
		}
		return nil
	case "slice":
		if p >= len(n.PData) {
			return fmt.Errorf("slice dataset %d has no partition %d", n.ID, p)
		}
		r.m.BytesRead += int64(len(n.PData[p]))
		return decodeAll(n.PData[p], emit)
	case "shuffled":
		return r.readShuffle(n, p, emit)
	}
	pn, err := r.parent(n)
	if err != nil {
		return err
	}
	fn, err := lookup(n.Fn, n.Arg)
	if err != nil {
		return err
	}
	switch n.Op {
	case "map":
		f, ok := fn.(MapFunc)
		if !ok {
			return fmt.Errorf("function %q is not a map function", n.Fn)
		}
		return r.compute(pn, p, func(v any) { r.fn = n.Fn; emit(f(v)) })
	case "flatMap":
		if f, ok := fn.(PairsFunc); ok {
			pair := func(k []byte, v int64) { emit(KV{string(k), v}) }
			r.fn = n.Fn
			return r.computeBytes(pn, p, func(rec []byte) { f(rec, pair) })
		}
		f, ok := fn.(FlatMapFunc)
		if !ok {
			return fmt.Errorf("function %q is not a flatMap function", n.Fn)
		}
		return r.compute(pn, p, func(v any) { r.fn = n.Fn; f(v, emit) })
	case "filter":
		f, ok := fn.(FilterFunc)
		if !ok {
			return fmt.Errorf("function %q is not a filter function", n.Fn)
		}
		return r.compute(pn, p, func(v any) {
			r.fn = n.Fn
			if f(v) {
				emit(v)
			}
		})
	case "mapPartitions":
		f, ok := fn.(PartitionFunc)
		if !ok {
			return fmt.Errorf("function %q is not a mapPartitions function", n.Fn)
		}
		var part []any
		if err := r.compute(pn, p, func(v any) { part = append(part, v) }); err != nil {
			return err
		}
		r.fn = n.Fn
		f(part, emit)
		return nil
	}
	return fmt.Errorf("unknown operation %q", n.Op)
}

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

// readShuffle fetches partition p's buckets of every map output of the
// node's shuffles and aggregates them.
func (r *taskRun) readShuffle(n *node, p int, emit func(any)) error {
	blocks := r.shuffleBlocks(n, p)
	if n.Agg == "reduce" {
		reduce, reduce64, err := reducer(n.Fn, n.Arg)
		if err != nil {
			return err
		}
		if reduce64 != nil {
			return r.reduceInt64(blocks, n.Fn, reduce64, emit)
		}
		return aggregate(n.Agg, eachKV(blocks), reduce, emit)
	}
	return aggregate(n.Agg, eachKV(blocks), nil, emit)
}

// shuffleBlocks returns a function that calls f with each map output's
// bucket p of side i of the node's shuffle list (a join has two), from
// this executor's block manager or fetched from the executor holding it.
func (r *taskRun) shuffleBlocks(n *node, p int) func(side int, f func(sid int, b []byte) error) error {
	return func(side int, f func(sid int, b []byte) error) error {
		sid := n.Shuffle[side]
		locs := r.spec.Fetch[sid]
		for m, l := range locs {
			name := shuffleBlock(sid, m, p)
			var b []byte
			var ok bool
			if l.Exec == r.ex.id {
				b, ok = r.ex.blocks.get(name)
			}
			if !ok {
				var err error
				if b, err = r.ex.fetch(l.URL, name); err != nil {
					return &fetchFail{Shuffle: sid, Map: m, Exec: l.Exec}
				}
				r.m.ShuffleFetch += int64(len(b))
			}
			if err := f(sid, b); err != nil {
				return err
			}
		}
		return nil
	}
}

// eachKV decodes the blocks of one side into KV records.
func eachKV(blocks func(int, func(int, []byte) error) error) func(side int, f func(KV)) error {
	return func(side int, f func(KV)) error {
		return blocks(side, func(sid int, b []byte) error {
			var bad error
			if err := decodeAll(b, func(v any) {
				kv, ok := v.(KV)
				if !ok && bad == nil {
					bad = fmt.Errorf("shuffle %d holds a %T, not a framework.KV", sid, v)
				}
				f(kv)
			}); err != nil {
				return err
			}
			return bad
		})
	}
}

// aggregate is the reduce side of a shuffle: agg says how records of equal
// keys combine (reduce with the given function, group, sort, join).
func aggregate(agg string, each func(int, func(KV)) error, reduce ReduceFunc, emit func(any)) error {
	switch agg {
	case "reduce":
		acc := map[any]any{}
		if err := each(0, func(kv KV) {
			if old, ok := acc[kv.Key]; ok {
				acc[kv.Key] = reduce(old, kv.Value)
			} else {
				acc[kv.Key] = kv.Value
			}
		}); err != nil {
			return err
		}
		for k, v := range acc {
			emit(KV{k, v})
		}
	case "group":
		acc := map[any][]any{}
		if err := each(0, func(kv KV) { acc[kv.Key] = append(acc[kv.Key], kv.Value) }); err != nil {
			return err
		}
		for k, v := range acc {
			emit(KV{k, v})
		}
	case "sort":
		var all []any
		if err := each(0, func(kv KV) { all = append(all, kv) }); err != nil {
			return err
		}
		SortKVs(all)
		for _, v := range all {
			emit(v)
		}
	case "join":
		return join(each, emit)
	default:
		return fmt.Errorf("unknown shuffle aggregation %q", agg)
	}
	return nil
}

// join pairs each right-side record with every left-side value of its key.
func join(each func(int, func(KV)) error, emit func(any)) error {
	left := map[any][]any{}
	if err := each(0, func(kv KV) { left[kv.Key] = append(left[kv.Key], kv.Value) }); err != nil {
		return err
	}
	var out []any
	if err := each(1, func(kv KV) {
		for _, a := range left[kv.Key] {
			out = append(out, KV{kv.Key, []any{a, kv.Value}})
		}
	}); err != nil {
		return err
	}
	for _, v := range out {
		emit(v)
	}
	return nil
}

// reduceInt64 is the reduce side of an Int64ReduceFunc: string keys with
// int64 values (all of them, for counting jobs) are decoded straight into
// unboxed counters; any other record goes through the generic path.
func (r *taskRun) reduceInt64(blocks func(int, func(int, []byte) error) error, fn string, reduce Int64ReduceFunc, emit func(any)) error {
	index := map[string]int32{}
	var keys []string
	var vals []int64
	other := map[any]int64{}
	err := blocks(0, func(sid int, b []byte) error {
		d := decoder{b: b}
		for d.more() {
			if k, v, ok := d.stringInt64(); ok {
				if i, ok := index[string(k)]; ok {
					vals[i] = reduce(vals[i], v)
				} else {
					index[string(k)] = int32(len(keys))
					keys = append(keys, string(k))
					vals = append(vals, v)
				}
				continue
			}
			rec, err := d.next()
			if err != nil {
				return err
			}
			kv, ok := rec.(KV)
			if !ok {
				return fmt.Errorf("shuffle %d holds a %T, not a framework.KV", sid, rec)
			}
			v, ok := kv.Value.(int64)
			if !ok {
				return fmt.Errorf("function %q reduces int64 values, but shuffle %d holds a %T", fn, sid, kv.Value)
			}
			if old, ok := other[kv.Key]; ok {
				v = reduce(old, v)
			}
			other[kv.Key] = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		emit(KV{k, vals[i]})
	}
	for k, v := range other {
		emit(KV{k, v})
	}
	return nil
}

// writeShuffle computes the top node and writes its records into the
// shuffle's buckets, combining map-side when the shuffle has a combiner.
func (r *taskRun) writeShuffle(top *node) error {
	w := r.spec.Write
	var bounds []any
	if len(w.Bounds) > 0 {
		if err := decodeAll(w.Bounds, func(v any) { bounds = append(bounds, v) }); err != nil {
			return err
		}
	}
	bucket := func(key any) int {
		if bounds != nil {
			return sort.Search(len(bounds), func(i int) bool { return compareKeys(key, bounds[i]) <= 0 })
		}
		return partitionOf(key, w.Parts)
	}
	var bad error
	bufs := make([][]byte, w.Parts)
	if w.Combine != "" {
		reduce, reduce64, err := reducer(w.Combine, nil)
		if err != nil {
			return err
		}
		if reduce64 != nil && top.Op == "flatMap" && !top.Cached {
			if done, err := r.combinePairs(top, reduce64, bufs, bucket); done || err != nil {
				if err != nil {
					return err
				}
				return r.putShuffle(bufs)
			}
		}
		acc := map[any]any{}
		if err := r.compute(top, r.spec.Partition, func(v any) {
			kv, ok := v.(KV)
			if !ok {
				if bad == nil {
					bad = fmt.Errorf("reduceByKey needs framework.KV records, got %T", v)
				}
				return
			}
			if old, ok := acc[kv.Key]; ok {
				acc[kv.Key] = reduce(old, kv.Value)
			} else {
				acc[kv.Key] = kv.Value
			}
		}); err != nil {
			return err
		}
		for k, v := range acc {
			b := bucket(k)
			if bufs[b], err = appendRecord(bufs[b], KV{k, v}); err != nil && bad == nil {
				bad = err
			}
		}
	} else {
		if err := r.compute(top, r.spec.Partition, func(v any) {
			kv, ok := v.(KV)
			if !ok {
				if bad == nil {
					bad = fmt.Errorf("a shuffle needs framework.KV records, got %T", v)
				}
				return
			}
			b := bucket(kv.Key)
			var err error
			if bufs[b], err = appendRecord(bufs[b], kv); err != nil && bad == nil {
				bad = err
			}
		}); err != nil {
			return err
		}
	}
	if bad != nil {
		return bad
	}
	return r.putShuffle(bufs)
}

func (r *taskRun) putShuffle(bufs [][]byte) error {
	w := r.spec.Write
	for i, b := range bufs {
		r.m.ShuffleWrite += int64(len(b))
		r.ex.blocks.put(shuffleBlock(w.ID, r.spec.Partition, i), b)
	}
	return nil
}

// combinePairs is the map side of ReduceByKey over a PairsFunc flatMap with
// an Int64ReduceFunc: the pairs go straight from the input bytes into
// unboxed counters, and a key costs an allocation only the first time this
// partition sees it. This is what makes wordcount run at the speed of a
// plain Go loop rather than paying boxing, interface hashing and garbage
// collection per word. It reports false (having done nothing) when top's
// function is not a PairsFunc.
func (r *taskRun) combinePairs(top *node, reduce Int64ReduceFunc, bufs [][]byte, bucket func(any) int) (bool, error) {
	fn, err := lookup(top.Fn, top.Arg)
	if err != nil {
		return false, err
	}
	f, ok := fn.(PairsFunc)
	if !ok {
		return false, nil
	}
	pn, err := r.parent(top)
	if err != nil {
		return false, err
	}
	// index maps a key to its slot in keys/vals; m[string(b)] lookups do
	// not allocate, so only new keys do.
	index := map[string]int32{}
	var keys []string
	var vals []int64
	add := func(k []byte, v int64) {
		if i, ok := index[string(k)]; ok {
			vals[i] = reduce(vals[i], v)
			return
		}
		s := string(k)
		index[s] = int32(len(keys))
		keys = append(keys, s)
		vals = append(vals, v)
	}
	r.fn = top.Fn
	err = func() (err error) {
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("function %q panicked: %v", r.fn, x)
			}
		}()
		return r.computeBytes(pn, r.spec.Partition, func(rec []byte) { f(rec, add) })
	}()
	if err != nil {
		return true, err
	}
	for i, k := range keys {
		b := bucket(k)
		bufs[b] = appendStringInt64(bufs[b], k, vals[i])
	}
	return true, nil
}

func cacheBlock(node, part int) string { return fmt.Sprintf("rdd_%d_%d", node, part) }
func shuffleBlock(shuffle, mapPart, reducePart int) string {
	return fmt.Sprintf("shuffle_%d_%d_%d", shuffle, mapPart, reducePart)
}
