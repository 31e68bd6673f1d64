package framework

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"sort"
	"strings"
)

// KV is a key-value record; shuffles (ReduceByKey, GroupByKey, Join,
// SortByKey) need datasets of KV whose keys are comparable scalars (string,
// int, int64, float64, bool).
type KV struct {
	Key, Value any
}

// Type tags of the record codec.
const (
	tagNil byte = iota
	tagString
	tagInt64
	tagFloat64
	tagKV
	tagSlice
	tagFloats
	tagBool
	tagInt
)

// appendRecord appends v's encoding to b. The codec is closed over the
// record types documented in the package, which keeps it fast (no
// reflection) and its output stable across processes.
func appendRecord(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, tagNil), nil
	case string:
		b = append(b, tagString)
		b = binary.AppendUvarint(b, uint64(len(x)))
		return append(b, x...), nil
	case int64:
		return binary.AppendVarint(append(b, tagInt64), x), nil
	case int:
		return binary.AppendVarint(append(b, tagInt), int64(x)), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat64), math.Float64bits(x)), nil
	case bool:
		if x {
			return append(b, tagBool, 1), nil
		}
		return append(b, tagBool, 0), nil
	case KV:
		b = append(b, tagKV)
		b, err := appendRecord(b, x.Key)
		if err != nil {
			return b, err
		}
		return appendRecord(b, x.Value)
	case []any:
		b = binary.AppendUvarint(append(b, tagSlice), uint64(len(x)))
		var err error
		for _, e := range x {
			if b, err = appendRecord(b, e); err != nil {
				return b, err
			}
		}
		return b, nil
	case []float64:
		b = binary.AppendUvarint(append(b, tagFloats), uint64(len(x)))
		for _, f := range x {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
		}
		return b, nil
	}
	return b, fmt.Errorf("record of type %T cannot be encoded: use string, int, int64, float64, bool, []float64, []any or framework.KV", v)
}

// appendStringInt64 appends KV{k, v} exactly as appendRecord would, without
// boxing (the combiner's output loop).
func appendStringInt64(b []byte, k string, v int64) []byte {
	b = append(b, tagKV, tagString)
	b = binary.AppendUvarint(b, uint64(len(k)))
	b = append(b, k...)
	return binary.AppendVarint(append(b, tagInt64), v)
}

// decoder reads records appended by appendRecord.
type decoder struct {
	b   []byte
	off int
}

func (d *decoder) more() bool { return d.off < len(d.b) }

func (d *decoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		return 0, fmt.Errorf("corrupt record at byte %d", d.off)
	}
	d.off += n
	return v, nil
}

// stringInt64 decodes the next record if it is KV{string, int64}, the key
// aliasing the buffer; otherwise it consumes nothing and reports false.
func (d *decoder) stringInt64() ([]byte, int64, bool) {
	b, off := d.b, d.off
	if off+2 > len(b) || b[off] != tagKV || b[off+1] != tagString {
		return nil, 0, false
	}
	n, w := binary.Uvarint(b[off+2:])
	if w <= 0 {
		return nil, 0, false
	}
	ks := off + 2 + w
	ke := ks + int(n)
	if n > uint64(len(b)) || ke >= len(b) || b[ke] != tagInt64 {
		return nil, 0, false
	}
	v, vw := binary.Varint(b[ke+1:])
	if vw <= 0 {
		return nil, 0, false
	}
	d.off = ke + 1 + vw
	return b[ks:ke], v, true
}

func (d *decoder) next() (any, error) {
	if d.off >= len(d.b) {
		return nil, fmt.Errorf("corrupt record: truncated at byte %d", d.off)
	}
	tag := d.b[d.off]
	d.off++
	switch tag {
	case tagNil:
		return nil, nil
	case tagString:
		n, err := d.uvarint()
		if err != nil || d.off+int(n) > len(d.b) {
			return nil, fmt.Errorf("corrupt string at byte %d", d.off)
		}
		s := string(d.b[d.off : d.off+int(n)])
		d.off += int(n)
		return s, nil
	case tagInt64, tagInt:
		v, n := binary.Varint(d.b[d.off:])
		if n <= 0 {
			return nil, fmt.Errorf("corrupt int at byte %d", d.off)
		}
		d.off += n
		if tag == tagInt {
			return int(v), nil
		}
		return v, nil
	case tagFloat64:
		if d.off+8 > len(d.b) {
			return nil, fmt.Errorf("corrupt float at byte %d", d.off)
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.off:]))
		d.off += 8
		return v, nil
	case tagBool:
		if d.off >= len(d.b) {
			return nil, fmt.Errorf("corrupt bool")
		}
		d.off++
		return d.b[d.off-1] == 1, nil
	case tagKV:
		k, err := d.next()
		if err != nil {
			return nil, err
		}
		v, err := d.next()
		if err != nil {
			return nil, err
		}
		return KV{k, v}, nil
	case tagSlice:
		n, err := d.uvarint()
		if err != nil || n > uint64(len(d.b)) {
			return nil, fmt.Errorf("corrupt list at byte %d", d.off)
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = d.next(); err != nil {
				return nil, err
			}
		}
		return out, nil
	case tagFloats:
		n, err := d.uvarint()
		if err != nil || d.off+8*int(n) > len(d.b) {
			return nil, fmt.Errorf("corrupt float list at byte %d", d.off)
		}
		out := make([]float64, n)
		for i := range out {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.off:]))
			d.off += 8
		}
		return out, nil
	}
	return nil, fmt.Errorf("corrupt record: unknown tag %d at byte %d", tag, d.off-1)
}

// decodeAll calls emit for every record in b.
func decodeAll(b []byte, emit func(any)) error {
	d := decoder{b: b}
	for d.more() {
		v, err := d.next()
		if err != nil {
			return err
		}
		emit(v)
	}
	return nil
}

// EncodeRecords encodes records with the runtime's codec (for arguments of
// registered functions and for tests).
func EncodeRecords(recs ...any) ([]byte, error) {
	var b []byte
	var err error
	for _, r := range recs {
		if b, err = appendRecord(b, r); err != nil {
			return nil, err
		}
	}
	return b, nil
}

var hashSeed = maphash.MakeSeed()

// partitionOf hashes a key to one of n partitions. The hash must agree
// between processes, so it is FNV-1a over the encoding, not maphash.
func partitionOf(key any, n int) int {
	var h uint64 = 14695981039346656037
	mix := func(b byte) { h ^= uint64(b); h *= 1099511628211 }
	switch k := key.(type) {
	case string:
		for i := 0; i < len(k); i++ {
			mix(k[i])
		}
	case int:
		for i, x := 0, uint64(k); i < 8; i, x = i+1, x>>8 {
			mix(byte(x))
		}
	case int64:
		for i, x := 0, uint64(k); i < 8; i, x = i+1, x>>8 {
			mix(byte(x))
		}
	default:
		b, _ := appendRecord(nil, key)
		for _, c := range b {
			mix(c)
		}
	}
	return int(h % uint64(n))
}

var _ = hashSeed

// compareKeys orders keys of the same scalar type; keys of different types
// order by type name so that sorting never panics.
func compareKeys(a, b any) int {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case int64:
		if y, ok := b.(int64); ok {
			return cmp3(x < y, x > y)
		}
	case int:
		if y, ok := b.(int); ok {
			return cmp3(x < y, x > y)
		}
	case float64:
		if y, ok := b.(float64); ok {
			return cmp3(x < y, x > y)
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmp3(!x && y, x && !y)
		}
	}
	return strings.Compare(fmt.Sprintf("%T", a), fmt.Sprintf("%T", b))
}

func cmp3(less, more bool) int {
	switch {
	case less:
		return -1
	case more:
		return 1
	}
	return 0
}

// SortKVs sorts KV records by key (stable), a helper for tests and drivers.
func SortKVs(recs []any) {
	sort.SliceStable(recs, func(i, j int) bool {
		return compareKeys(recs[i].(KV).Key, recs[j].(KV).Key) < 0
	})
}
