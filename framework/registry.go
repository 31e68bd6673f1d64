package framework

import (
	"fmt"
	"sort"
	"sync"
)

// Function shapes a registered function may have. Each may also be
// registered as a factory func(arg any) <shape>, which receives the
// argument given at the call site (Dataset.Map(name, arg)); the argument is
// shipped with the task in the record codec.
type (
	// MapFunc maps one record to one record.
	MapFunc = func(any) any
	// FlatMapFunc maps one record to any number, through emit.
	FlatMapFunc = func(rec any, emit func(any))
	// FilterFunc keeps the records it returns true for.
	FilterFunc = func(any) bool
	// ReduceFunc combines two values of one key; it must be associative and
	// commutative (it also runs map-side, as a combiner).
	ReduceFunc = func(a, b any) any
	// PartitionFunc sees a whole partition at once (mapPartitions).
	PartitionFunc = func(part []any, emit func(any))

	// PairsFunc is a flatMap from a text record, given as bytes, to
	// (string key, int64 value) pairs. It is the fast shape for counting
	// jobs (wordcount): the runtime hands it lines straight from the input
	// buffer and, followed by ReduceByKey with an Int64ReduceFunc, combines
	// its pairs map-side in a map[string]int64 without boxing a record per
	// key, so no allocation happens per key seen before. key may alias rec
	// and is valid only during the call to emit. Elsewhere it behaves as a
	// flatMap of string (or []byte) records to framework.KV{string, int64}.
	PairsFunc = func(rec []byte, emit func(key []byte, value int64))
	// Int64ReduceFunc is a ReduceFunc over int64 values, which lets the
	// map-side combiner keep unboxed counters.
	Int64ReduceFunc = func(a, b int64) int64
)

var (
	// regMu guards funcs: written by Register (init time), read by every
	// task that looks a function up.
	regMu sync.RWMutex
	funcs = map[string]any{}
)

// Register makes fn callable by name in datasets. Call it from init() in
// the application's packages, so that the driver and every executor (the
// same binary) know the same names. It panics on a duplicate name or an
// unsupported signature: both are programming errors.
func Register(name string, fn any) {
	if name == "" {
		panic("framework.Register: empty name")
	}
	if kind(fn) == "" {
		panic(fmt.Sprintf("framework.Register(%q): unsupported function type %T; want func(any) any, func(any, func(any)), func(any) bool, func(any, any) any, func([]any, func(any)), func([]byte, func([]byte, int64)), func(int64, int64) int64 or func(arg any) returning one of these", name, fn))
	}
	register(name, fn)
}

func register(name string, fn any) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := funcs[name]; dup {
		panic(fmt.Sprintf("framework.Register: %q registered twice", name))
	}
	funcs[name] = fn
}

// kind names the shape of fn ("" if unsupported); factories report the
// shape they return.
func kind(fn any) string {
	switch fn.(type) {
	case MapFunc, func(any) MapFunc:
		return "map"
	case FlatMapFunc, func(any) FlatMapFunc, PairsFunc, func(any) PairsFunc:
		return "flatMap"
	case FilterFunc, func(any) FilterFunc:
		return "filter"
	case ReduceFunc, func(any) ReduceFunc, Int64ReduceFunc, func(any) Int64ReduceFunc:
		return "reduce"
	case PartitionFunc, func(any) PartitionFunc:
		return "mapPartitions"
	}
	return ""
}

// checkFunc reports whether name is registered with the shape want, with an
// error that says what to fix.
func checkFunc(name, want string) error {
	regMu.RLock()
	fn, ok := funcs[name]
	regMu.RUnlock()
	if !ok {
		return fmt.Errorf("function %q is not registered: call framework.Register(%q, fn) in an init() of the application (registered: %v)", name, name, registered())
	}
	if k := kind(fn); k != want {
		return fmt.Errorf("function %q is a %s function, but %s needs a %s function", name, k, want, want)
	}
	return nil
}

func registered() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	var out []string
	for k := range funcs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// lookup returns the function instantiated with arg (decoded).
func lookup(name string, arg []byte) (any, error) {
	regMu.RLock()
	fn, ok := funcs[name]
	regMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("function %q is not registered in this executor: register it in an init() so every process of the binary knows it", name)
	}
	var a any
	if len(arg) > 0 {
		d := decoder{b: arg}
		var err error
		if a, err = d.next(); err != nil {
			return nil, fmt.Errorf("argument of %q: %v", name, err)
		}
	}
	switch f := fn.(type) {
	case func(any) MapFunc:
		return f(a), nil
	case func(any) FlatMapFunc:
		return f(a), nil
	case func(any) FilterFunc:
		return f(a), nil
	case func(any) ReduceFunc:
		return f(a), nil
	case func(any) PartitionFunc:
		return f(a), nil
	case func(any) PairsFunc:
		return f(a), nil
	case func(any) Int64ReduceFunc:
		return f(a), nil
	}
	return fn, nil
}

// reducer resolves a registered reduce function: the generic form, and the
// unboxed int64 form when fn has that shape (nil otherwise).
func reducer(name string, arg []byte) (ReduceFunc, Int64ReduceFunc, error) {
	fn, err := lookup(name, arg)
	if err != nil {
		return nil, nil, err
	}
	switch f := fn.(type) {
	case ReduceFunc:
		return f, nil, nil
	case Int64ReduceFunc:
		// Values that are not int64 are a programming error in the job; the
		// panic is caught and reported with the function's name.
		return func(a, b any) any { return f(a.(int64), b.(int64)) }, f, nil
	}
	return nil, nil, fmt.Errorf("function %q is not a reduce function", name)
}
