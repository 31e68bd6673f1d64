package framework

import (
	"reflect"
	"strings"
	"testing"
)

// readAll reads a block through eachRecord, failing the test if it is not
// held or does not decode.
func readAll(t testing.TB, m *blockManager, name string) []any {
	t.Helper()
	var out []any
	ok, err := m.eachRecord(name, func(v any) { out = append(out, v) })
	if !ok || err != nil {
		t.Fatalf("read %s: held %v, %v", name, ok, err)
	}
	return out
}

// memoOf is the memo state of an in-memory block (memoNone if not in memory).
func memoOf(m *blockManager, name string) (memoState, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.mem[name]
	if !ok {
		return memoNone, false
	}
	return e.Value.(*memBlock).memo, true
}

func encode(t testing.TB, recs ...any) []byte {
	t.Helper()
	b, err := EncodeRecords(recs...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A memoised read returns the records a fresh decode does, on the first
// read (which decodes) and on later ones (which share); partitions with
// records a reader could modify are not memoised.
func TestEachRecordMatchesDecode(t *testing.T) {
	cases := []struct {
		name string
		recs []any
		want memoState
	}{
		{"strings", []any{"a", "", strings.Repeat("x", 1000)}, memoShared},
		{"scalars", []any{int64(-3), 7, 2.5, true, nil}, memoShared},
		{"scalar KVs", []any{KV{"k", int64(1)}, KV{int64(2), 3.5}, KV{KV{"n", 1}, "v"}}, memoShared},
		{"empty", nil, memoShared},
		{"floats", []any{[]float64{1, 2}, []float64{3}}, memoMutable},
		{"KV of list", []any{KV{"k", []any{"a", int64(1)}}}, memoMutable},
		{"one list among strings", []any{"a", []any{"b"}, "c"}, memoMutable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newBlockManager(1<<20, t.TempDir(), &usageCounters{})
			data := encode(t, c.recs...)
			var fresh []any
			if err := decodeAll(data, func(v any) { fresh = append(fresh, v) }); err != nil {
				t.Fatal(err)
			}
			m.put("rdd_1_0", data)
			for read := 1; read <= 3; read++ {
				if got := readAll(t, m, "rdd_1_0"); !reflect.DeepEqual(got, fresh) {
					t.Fatalf("read %d: %v, fresh decode %v", read, got, fresh)
				}
			}
			if got, _ := memoOf(m, "rdd_1_0"); got != c.want {
				t.Errorf("memo %d, want %d", got, c.want)
			}
		})
	}
}

// A reader that modifies a slice record it was handed changes neither the
// block nor what the next reader sees.
func TestEachRecordMutableNotShared(t *testing.T) {
	m := newBlockManager(1<<20, t.TempDir(), &usageCounters{})
	m.put("rdd_1_0", encode(t, []float64{1, 2}, KV{"k", []any{int64(5)}}))
	for read := 0; read < 3; read++ {
		got := readAll(t, m, "rdd_1_0")
		if f := got[0].([]float64); f[0] != 1 {
			t.Fatalf("read %d sees %v: an earlier reader's change", read, f)
		}
		if l := got[1].(KV).Value.([]any); l[0] != int64(5) {
			t.Fatalf("read %d sees %v: an earlier reader's change", read, l)
		}
		got[0].([]float64)[0] = 99
		got[1].(KV).Value.([]any)[0] = "changed"
	}
}

// Whatever takes a block out of memory or replaces it drops its memo: the
// next read returns the block's current records.
func TestEachRecordMemoDropped(t *testing.T) {
	cases := []struct {
		name   string
		op     func(t *testing.T, m *blockManager) // done after a memoised read of rdd_1_0 = "old"
		want   []any
		inMem  bool
		spills int64
	}{
		{"spill (handoff room)", func(t *testing.T, m *blockManager) { m.spill("rdd_1_0") }, []any{"old"}, false, 1},
		{"evicted over the limit", func(t *testing.T, m *blockManager) { m.put("rdd_2_0", []byte(strings.Repeat("\x00", 60))) }, []any{"old"}, false, 1},
		{"replaced", func(t *testing.T, m *blockManager) { m.put("rdd_1_0", encode(t, "new")) }, []any{"new"}, true, 0},
		{"removed and put back", func(t *testing.T, m *blockManager) {
			m.mu.Lock()
			m.removeLocked("rdd_1_0")
			m.mu.Unlock()
			if m.has("rdd_1_0") {
				t.Fatal("removed block still held")
			}
			m.put("rdd_1_0", encode(t, "again"))
		}, []any{"again"}, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newBlockManager(64, t.TempDir(), &usageCounters{})
			m.put("rdd_1_0", encode(t, "old"))
			readAll(t, m, "rdd_1_0")
			if st, _ := memoOf(m, "rdd_1_0"); st != memoShared {
				t.Fatalf("memo %d after a read, want shared", st)
			}
			c.op(t, m)
			st, inMem := memoOf(m, "rdd_1_0")
			if inMem != c.inMem || st != memoNone {
				t.Fatalf("after op: in memory %v (want %v), memo %d (want none)", inMem, c.inMem, st)
			}
			if m.spills != c.spills {
				t.Errorf("spills %d, want %d", m.spills, c.spills)
			}
			if got := readAll(t, m, "rdd_1_0"); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("read after op: %v, want %v", got, c.want)
			}
			// A block read back from disk is not memoised (it is not in memory).
			if st, _ := memoOf(m, "rdd_1_0"); !c.inMem && st != memoNone {
				t.Errorf("spilled block memoised: %d", st)
			}
		})
	}
}

// BenchmarkCachedRead reads a cached partition like delta PageRank's edge
// partition (one ~16 MB string record): "decode" is the read before the
// memo (decode and copy each read), "memo" the read through eachRecord.
func BenchmarkCachedRead(b *testing.B) {
	data := encode(b, strings.Repeat("e", 16<<20))
	b.Run("decode", func(b *testing.B) {
		m := newBlockManager(1<<30, b.TempDir(), &usageCounters{})
		m.put("rdd_1_0", data)
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			blk, _ := m.get("rdd_1_0")
			if err := decodeAll(blk, func(any) {}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memo", func(b *testing.B) {
		m := newBlockManager(1<<30, b.TempDir(), &usageCounters{})
		m.put("rdd_1_0", data)
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := m.eachRecord("rdd_1_0", func(any) {}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
