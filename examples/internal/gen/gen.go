// Package gen holds the examples' registered functions, their jobs, data
// generators and the plain single-process references tests compare with.
// Each example binary calls the Register function it needs from init(), so
// the driver and its executors (the same binary) know the same names.
package gen

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/allot-sched/allot/framework"
)

var once = map[string]*sync.Once{"wc": {}, "km": {}, "pr": {}, "dpr": {}}

// RegisterWordCount registers wordcount's functions.
func RegisterWordCount() {
	once["wc"].Do(func() {
		// The bytes shapes (PairsFunc, Int64ReduceFunc) let the runtime
		// count words without a record, a string or a boxed value per word.
		framework.Register("wc.pairs", func(line []byte, emit func([]byte, int64)) {
			SplitWords(line, func(w []byte) { emit(w, 1) })
		})
		framework.Register("wc.sum", func(a, b int64) int64 { return a + b })
	})
}

// asciiSpace marks the bytes strings.Fields splits ASCII text on.
var asciiSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// SplitWords calls emit with each word of line as strings.Fields would
// split it, without allocating for ASCII lines (w aliases line). Lines with
// non-ASCII bytes go through bytes.Fields, whose Unicode spaces agree with
// strings.Fields.
func SplitWords(line []byte, emit func(w []byte)) {
	for _, c := range line {
		if c >= 0x80 {
			for _, w := range bytes.Fields(line) {
				emit(w)
			}
			return
		}
	}
	start := -1
	for i, c := range line {
		if asciiSpace[c] {
			if start >= 0 {
				emit(line[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		emit(line[start:])
	}
}

// WordCount counts the words of the file at path, sorted by word.
func WordCount(ctx *framework.Context, path string, parts int) ([]framework.KV, error) {
	recs, err := ctx.TextFile(path, parts).FlatMap("wc.pairs").ReduceByKey("wc.sum", 0).SortByKey(0).Collect()
	if err != nil {
		return nil, err
	}
	out := make([]framework.KV, len(recs))
	for i, r := range recs {
		out[i] = r.(framework.KV)
	}
	return out, nil
}

// WriteText writes about size bytes of words drawn from a Zipf-like
// vocabulary (seeded), 10 to 20 words a line.
func WriteText(path string, size int64, seed int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewSource(seed))
	z := rand.NewZipf(r, 1.1, 1, 49999)
	vocab := make([]string, 50000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x", i*2654435761%1000003)
	}
	var n int64
	for n < size {
		words := 10 + r.Intn(11)
		for i := 0; i < words; i++ {
			if i > 0 {
				w.WriteByte(' ')
				n++
			}
			s := vocab[z.Uint64()]
			w.WriteString(s)
			n += int64(len(s))
		}
		w.WriteByte('\n')
		n++
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// RegisterKMeans registers kmeans's functions.
func RegisterKMeans() {
	once["km"].Do(func() {
		framework.Register("km.parse", func(rec any) any {
			f := strings.Fields(rec.(string))
			p := make([]float64, len(f))
			for i, s := range f {
				p[i], _ = strconv.ParseFloat(s, 64)
			}
			return p
		})
		// km.assign's argument is the current centres ([]any of []float64).
		framework.Register("km.assign", func(arg any) framework.MapFunc {
			var centres [][]float64
			for _, c := range arg.([]any) {
				centres = append(centres, c.([]float64))
			}
			return func(rec any) any {
				p := rec.([]float64)
				return framework.KV{Key: int64(Closest(centres, p)), Value: []any{p, int64(1)}}
			}
		})
		framework.Register("km.add", func(a, b any) any {
			x, y := a.([]any), b.([]any)
			px, py := x[0].([]float64), y[0].([]float64)
			s := make([]float64, len(px))
			for i := range s {
				s[i] = px[i] + py[i]
			}
			return []any{s, x[1].(int64) + y[1].(int64)}
		})
	})
}

// Closest is the index of the centre nearest p (ties to the lower index).
func Closest(centres [][]float64, p []float64) int {
	best, bestD := 0, math.Inf(1)
	for i, c := range centres {
		d := 0.0
		for j := range p {
			d += (p[j] - c[j]) * (p[j] - c[j])
		}
		if d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

// KMeans runs iters Lloyd iterations from the first k points of the file
// (one point per line, coordinates separated by spaces), points cached.
// readPoints reads the first k points (all with k < 0).
func KMeans(ctx *framework.Context, path string, k, iters, parts int, onIter func(int)) ([][]float64, error) {
	points := ctx.TextFile(path, parts).Map("km.parse").Cache()
	first, err := readPoints(path, k)
	if err != nil {
		return nil, err
	}
	centres := first
	for it := 0; it < iters; it++ {
		arg := make([]any, len(centres))
		for i, c := range centres {
			arg[i] = c
		}
		recs, err := points.Map("km.assign", arg).ReduceByKey("km.add", 0).Collect()
		if err != nil {
			return nil, err
		}
		next := make([][]float64, len(centres))
		copy(next, centres)
		for _, r := range recs {
			kv := r.(framework.KV)
			v := kv.Value.([]any)
			sum, n := v[0].([]float64), v[1].(int64)
			c := make([]float64, len(sum))
			for i := range sum {
				c[i] = sum[i] / float64(n)
			}
			next[kv.Key.(int64)] = c
		}
		centres = next
		if onIter != nil {
			onIter(it)
		}
	}
	return centres, nil
}

func readPoints(path string, k int) ([][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("input file: %v (check --input)", err)
	}
	defer f.Close()
	var out [][]float64
	sc := bufio.NewScanner(f)
	for sc.Scan() && (k < 0 || len(out) < k) {
		var p []float64
		for _, s := range strings.Fields(sc.Text()) {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a number", path, s)
			}
			p = append(p, v)
		}
		out = append(out, p)
	}
	if k >= 0 && len(out) < k {
		return nil, fmt.Errorf("%s has %d points, fewer than k=%d", path, len(out), k)
	}
	return out, sc.Err()
}

// LloydReference is the plain single-process k-means with the same start.
func LloydReference(path string, k, iters int) ([][]float64, error) {
	all, err := readPoints(path, -1)
	if err != nil {
		return nil, err
	}
	if len(all) < k {
		return nil, fmt.Errorf("%s has %d points, fewer than k=%d", path, len(all), k)
	}
	centres := make([][]float64, k)
	copy(centres, all[:k])
	for it := 0; it < iters; it++ {
		sums := make([][]float64, k)
		counts := make([]int, k)
		for _, p := range all {
			c := Closest(centres, p)
			if sums[c] == nil {
				sums[c] = make([]float64, len(p))
			}
			for j := range p {
				sums[c][j] += p[j]
			}
			counts[c]++
		}
		for i := range centres {
			if counts[i] > 0 {
				c := make([]float64, len(sums[i]))
				for j := range c {
					c[j] = sums[i][j] / float64(counts[i])
				}
				centres[i] = c
			}
		}
	}
	return centres, nil
}

// WritePoints writes n points of dim coordinates around k seeded centres.
func WritePoints(path string, n, dim, k int, seed int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	r := rand.New(rand.NewSource(seed))
	centres := make([][]float64, k)
	for i := range centres {
		centres[i] = make([]float64, dim)
		for j := range centres[i] {
			centres[i][j] = r.Float64() * 100
		}
	}
	for i := 0; i < n; i++ {
		c := centres[r.Intn(k)]
		for j := 0; j < dim; j++ {
			if j > 0 {
				w.WriteByte(' ')
			}
			w.WriteString(strconv.FormatFloat(c[j]+r.NormFloat64()*5, 'f', 4, 64))
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// RegisterPageRank registers pagerank's functions.
func RegisterPageRank() {
	once["pr"].Do(func() {
		framework.Register("pr.parse", func(rec any) any {
			f := strings.Fields(rec.(string))
			a, _ := strconv.ParseInt(f[0], 10, 64)
			b, _ := strconv.ParseInt(f[1], 10, 64)
			return framework.KV{Key: a, Value: b}
		})
		framework.Register("pr.one", func(rec any) any { return framework.KV{Key: rec.(framework.KV).Key, Value: 1.0} })
		// pr.contrib: KV{src, [neighbours []any, rank]} -> KV{dst, rank/deg}
		framework.Register("pr.contrib", func(rec any, emit func(any)) {
			v := rec.(framework.KV).Value.([]any)
			nbrs, rank := v[0].([]any), v[1].(float64)
			for _, d := range nbrs {
				emit(framework.KV{Key: d, Value: rank / float64(len(nbrs))})
			}
		})
		framework.Register("pr.sum", func(a, b any) any { return a.(float64) + b.(float64) })
		framework.Register("pr.damp", func(rec any) any {
			kv := rec.(framework.KV)
			return framework.KV{Key: kv.Key, Value: 0.15 + 0.85*kv.Value.(float64)}
		})
	})
}

// PageRank runs Spark's classic PageRank example for iters iterations over
// an edge file ("src dst" lines) and returns node -> rank.
func PageRank(ctx *framework.Context, path string, iters, parts int) (map[int64]float64, error) {
	links := ctx.TextFile(path, parts).Map("pr.parse").GroupByKey(parts).Cache()
	ranks := links.Map("pr.one")
	for i := 0; i < iters; i++ {
		ranks = links.Join(ranks, parts).FlatMap("pr.contrib").ReduceByKey("pr.sum", parts).Map("pr.damp")
	}
	recs, err := ranks.Collect()
	if err != nil {
		return nil, err
	}
	out := map[int64]float64{}
	for _, r := range recs {
		kv := r.(framework.KV)
		out[kv.Key.(int64)] = kv.Value.(float64)
	}
	return out, nil
}

// PageRankReference is the same iteration done with plain maps.
func PageRankReference(path string, iters int) (map[int64]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	links := map[int64][]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var a, b int64
		fmt.Sscan(sc.Text(), &a, &b)
		links[a] = append(links[a], b)
	}
	ranks := map[int64]float64{}
	for s := range links {
		ranks[s] = 1
	}
	for i := 0; i < iters; i++ {
		contrib := map[int64]float64{}
		for s, ds := range links {
			r, ok := ranks[s]
			if !ok {
				continue
			}
			for _, d := range ds {
				contrib[d] += r / float64(len(ds))
			}
		}
		ranks = map[int64]float64{}
		for d, c := range contrib {
			ranks[d] = 0.15 + 0.85*c
		}
	}
	return ranks, nil
}

// WriteGraph writes a seeded random graph of n nodes, each with 1 to 5
// distinct out-edges, as "src dst" lines.
func WriteGraph(path string, n int, seed int64) error {
	return writeEdges(path, seed, func(r *rand.Rand, edge func(s, t int)) {
		for s := 0; s < n; s++ {
			seen := map[int]bool{}
			for d := 0; d < 1+r.Intn(5); d++ {
				t := r.Intn(n)
				if t == s || seen[t] {
					continue
				}
				seen[t] = true
				edge(s, t)
			}
		}
	})
}

// writeEdges writes the edges gen produces, drawing from a generator seeded
// with seed, as "src dst" lines.
func writeEdges(path string, seed int64, gen func(r *rand.Rand, edge func(s, t int))) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	gen(rand.New(rand.NewSource(seed)), func(s, t int) { fmt.Fprintf(w, "%d %d\n", s, t) })
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CountWords is the plain single-process, all-cores word count: the file is
// split in one chunk per core, each counted into its own map, then merged.
func CountWords(path string, workers int) (map[string]int64, error) {
	return countWords(path, workers, false)
}

// CountWordsBytes is CountWords written as carefully as the runtime's fast
// path (SplitWords over the read buffer, a map lookup per word that
// allocates only for new words), so the benchmark can also compare like
// with like rather than only with the plain strings.Fields loop.
func CountWordsBytes(path string, workers int) (map[string]int64, error) {
	return countWords(path, workers, true)
}

func countWords(path string, workers int, fast bool) (map[string]int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	size := st.Size()
	maps := make([]map[string]int64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			lo, hi := size*int64(i)/int64(workers), size*int64(i+1)/int64(workers)
			maps[i], errs[i] = countRange(path, lo, hi, fast)
		}(i)
	}
	wg.Wait()
	total := map[string]int64{}
	for i, m := range maps {
		if errs[i] != nil {
			return nil, errs[i]
		}
		for k, v := range m {
			total[k] += v
		}
	}
	return total, nil
}

// countRange counts the words of the lines starting in [lo, hi).
func countRange(path string, lo, hi int64, fast bool) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	start := lo
	if lo > 0 {
		start--
	}
	f.Seek(start, 0)
	br := bufio.NewReaderSize(f, 1<<20)
	pos := start
	if lo > 0 {
		s, err := br.ReadString('\n')
		pos += int64(len(s))
		if err != nil {
			return map[string]int64{}, nil
		}
	}
	m := map[string]int64{}
	index := map[string]int32{} // fast: word -> slot in counts
	var words []string
	var counts []int64
	count := func(w []byte) {
		if i, ok := index[string(w)]; ok {
			counts[i]++
			return
		}
		index[string(w)] = int32(len(words))
		words = append(words, string(w))
		counts = append(counts, 1)
	}
	for pos < hi {
		line, err := br.ReadSlice('\n')
		pos += int64(len(line))
		if fast {
			SplitWords(line, count)
		} else {
			for _, w := range strings.Fields(string(line)) {
				m[w]++
			}
		}
		if err != nil {
			break
		}
	}
	for i, w := range words {
		m[w] = counts[i]
	}
	return m, nil
}

// SortedCounts turns a count map into word-sorted KVs.
func SortedCounts(m map[string]int64) []framework.KV {
	out := make([]framework.KV, 0, len(m))
	for k, v := range m {
		out = append(out, framework.KV{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.(string) < out[j].Key.(string) })
	return out
}
