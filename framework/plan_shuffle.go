package framework

import (
	"fmt"
	"sort"
)

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
