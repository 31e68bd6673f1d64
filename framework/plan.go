package framework

import "fmt"

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

func cacheBlock(node, part int) string { return fmt.Sprintf("rdd_%d_%d", node, part) }
func shuffleBlock(shuffle, mapPart, reducePart int) string {
	return fmt.Sprintf("shuffle_%d_%d_%d", shuffle, mapPart, reducePart)
}
