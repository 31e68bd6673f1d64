package heapq

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type ent = Entry[float64, int32, uint32]

func sorted(es []ent) []ent {
	out := slices.Clone(es)
	slices.SortStableFunc(out, func(a, b ent) int {
		if a.Key != b.Key {
			if a.Key < b.Key {
				return -1
			}
			return 1
		}
		return int(a.Tie) - int(b.Tie)
	})
	return out
}

func drain(h *Heap[float64, int32, uint32]) []ent {
	var out []ent
	for h.Len() > 0 {
		out = append(out, h.Pop())
	}
	return out
}

func TestPopOrder(t *testing.T) {
	cases := []struct {
		name string
		in   []ent
	}{
		{"empty", nil},
		{"one", []ent{{Key: 1, Tie: 0}}},
		{"keys decide", []ent{{Key: 3, Tie: 0}, {Key: 1, Tie: 5}, {Key: 2, Tie: 1}}},
		{"ties by Tie", []ent{{Key: 1, Tie: 9}, {Key: 1, Tie: 2}, {Key: 1, Tie: 4}, {Key: 0, Tie: 7}}},
		{"negative keys first", []ent{{Key: 0, Tie: 1}, {Key: -2, Tie: 3}, {Key: -1, Tie: 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var pushed, loaded Heap[float64, int32, uint32]
			for _, e := range c.in {
				pushed.Push(e)
				loaded.Append(e)
			}
			loaded.Init()
			want := sorted(c.in)
			if got := drain(&pushed); !slices.Equal(got, want) {
				t.Fatalf("push then pop: %v, want %v", got, want)
			}
			if got := drain(&loaded); !slices.Equal(got, want) {
				t.Fatalf("append, init, pop: %v, want %v", got, want)
			}
		})
	}
}

// TestRandomAgainstSort interleaves pushes and pops with random keys (many
// equal, so the tie-break is exercised) and checks every pop against a
// sorted model.
func TestRandomAgainstSort(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		var h Heap[float64, int32, uint32]
		var model []ent
		for i := 0; i < 2000; i++ {
			if rng.IntN(3) > 0 || len(model) == 0 {
				e := ent{Key: float64(rng.IntN(20)), Tie: int32(i), Val: uint32(rng.IntN(100))}
				h.Push(e)
				model = append(model, e)
				continue
			}
			model = sorted(model)
			if top := h.Top(); top != model[0] {
				t.Fatalf("seed %d step %d: top %v, want %v", seed, i, top, model[0])
			}
			if got := h.Pop(); got != model[0] {
				t.Fatalf("seed %d step %d: pop %v, want %v", seed, i, got, model[0])
			}
			model = model[1:]
			if h.Len() != len(model) {
				t.Fatalf("seed %d: len %d, want %d", seed, h.Len(), len(model))
			}
		}
	}
}

// TestFirst checks the best-first walk against a scan of the sorted
// entries, and that it leaves the heap as it was.
func TestFirst(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 2))
		var h Heap[float64, int32, uint32]
		var all []ent
		for i := 0; i < 300; i++ {
			e := ent{Key: float64(rng.IntN(50)), Tie: int32(i), Val: uint32(rng.IntN(10))}
			h.Push(e)
			all = append(all, e)
		}
		for v := uint32(0); v <= 10; v++ { // Val 10 is never present
			accept := func(e ent) bool { return e.Val == v }
			got, ok := h.First(accept)
			var want ent
			found := false
			for _, e := range sorted(all) {
				if accept(e) {
					want, found = e, true
					break
				}
			}
			if ok != found || got != want {
				t.Fatalf("seed %d val %d: First = %v %v, want %v %v", seed, v, got, ok, want, found)
			}
		}
		if got := drain(&h); !slices.Equal(got, sorted(all)) {
			t.Fatalf("seed %d: First disturbed the heap", seed)
		}
	}
	var empty Heap[float64, int32, uint32]
	if _, ok := empty.First(func(ent) bool { return true }); ok {
		t.Fatal("First on an empty heap found something")
	}
}

func TestResetKeepsStorage(t *testing.T) {
	var h Heap[float64, uint64, struct{}]
	for i := 0; i < 100; i++ {
		h.Push(Entry[float64, uint64, struct{}]{Key: float64(100 - i), Tie: uint64(i)})
	}
	c := cap(h.e)
	h.Reset()
	if h.Len() != 0 || cap(h.e) != c {
		t.Fatalf("after Reset: len %d cap %d, want 0 and %d", h.Len(), cap(h.e), c)
	}
	h.Push(Entry[float64, uint64, struct{}]{Key: 5, Tie: 1})
	if h.Pop().Key != 5 || h.Len() != 0 {
		t.Fatal("a reset heap does not work as new")
	}
}

// BenchmarkPushPop is the heap's own hot path: a lazy agent heap's push
// and pop of 16-byte entries.
func BenchmarkPushPop(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	keys := make([]float64, 1<<12)
	for i := range keys {
		keys[i] = rng.Float64()
	}
	var h Heap[float64, int32, uint32]
	for i := 0; i < 10000; i++ {
		h.Push(ent{Key: keys[i%len(keys)], Tie: int32(i)})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Push(ent{Key: keys[i%len(keys)], Tie: int32(i)})
		h.Pop()
	}
}

// TestInPlaceAgainstPop: Least with the first k popped entries taken
// finds what the (k+1)th Pop returns, and Set and RemoveAt leave the same
// entries as pop-and-push and pop-and-drop, over random heaps (few distinct
// keys, so that ties decide often).
func TestInPlaceAgainstPop(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var frontier []int
	for round := 0; round < 300; round++ {
		n := 1 + rng.IntN(60)
		var h Heap[float64, int32, uint32]
		var all []ent
		for i := 0; i < n; i++ {
			e := ent{Key: float64(rng.IntN(5)), Tie: int32(i), Val: uint32(rng.IntN(3))}
			all = append(all, e)
			h.Append(e)
		}
		h.Init()
		want := sorted(all)
		k := rng.IntN(n + 1)
		var taken []int32
		for _, e := range want[:k] {
			taken = append(taken, e.Tie)
		}
		var p int
		p, frontier = h.Least(taken, frontier)
		if k == n {
			if p != -1 {
				t.Fatalf("round %d: all taken, Least = %d", round, p)
			}
			continue
		}
		if p < 0 || h.At(p) != want[k] {
			t.Fatalf("round %d: Least with %d taken at %d, want %v", round, k, p, want[k])
		}
		// change or drop the found entry, as a lazy heap refreshes a stale one
		rest := slices.Clone(want)
		if rng.IntN(2) == 0 {
			x := ent{Key: float64(rng.IntN(7)) - 1, Tie: want[k].Tie, Val: 9}
			h.Set(p, x)
			rest[k] = x
		} else {
			h.RemoveAt(p)
			rest = slices.Delete(rest, k, k+1)
		}
		if got := drain(&h); !slices.Equal(got, sorted(rest)) {
			t.Fatalf("round %d: after the change drained %v, want %v", round, got, sorted(rest))
		}
	}
}
