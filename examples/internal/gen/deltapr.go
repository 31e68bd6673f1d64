package gen

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/allot-sched/allot/framework"
)

// Delta PageRank, as GraphX's PageRank.runUntilConvergence runs it on
// Pregel: every vertex starts with rank 0.15 and delta 0.15; in each
// iteration only the vertices whose delta (the rank they gained in the last
// iteration) is above tol send delta/outdegree along their out-edges, and a
// vertex that receives a message sum m gains 0.85*m, which is its next
// delta. Ranks converge to the fixpoint 0.15 + 0.85 * sum(rank(u)/deg(u))
// of the classic example; the set of senders, and with it each iteration's
// work, shrinks as ranks converge (the diminishing demand of the iterative
// applications iSpark targets). It stops when no vertex sends or after
// maxIters iterations.
//
// The work is split as GraphX splits it: the edges are partitioned and
// cached; the vertex state (rank and delta) is small and lives with the
// driver, which ships only the senders' deltas to the edge partitions each
// iteration (GraphX ships the active vertices' attributes to the edge
// partitions through its routing table). An edge partition is cached as one
// columnar record, as GraphX's EdgePartition keeps arrays rather than an
// object per edge, so an iteration with few senders costs little more than
// a scan of that array. Each partition sums its messages per destination
// (GraphX's map-side combine) and the driver, which holds the vertex state,
// adds the partitions' sums: a shuffle whose output is collected anyway
// would only add a stage. So an edge partition none of whose vertices send
// any more costs its executor next to nothing: the work of a late iteration
// lies where the still-changing vertices' edges are.

// DeltaStep is what one delta PageRank iteration did.
type DeltaStep struct {
	Iteration int
	Senders   int // vertices whose delta was above tol and that have out-edges
	Updated   int // vertices that received a message
}

// RegisterDeltaPageRank registers delta PageRank's functions.
func RegisterDeltaPageRank() {
	once["dpr"].Do(func() {
		// dpr.columns: a partition of "src dst" lines -> one record, the
		// partition's adjacency as little-endian uint32s [src, deg, dst_1..
		// dst_deg, src, deg, ...], sources ascending, in a string (which the
		// runtime's codec hands over with one copy).
		framework.Register("dpr.columns", func(part []any, emit func(any)) {
			adj := map[int64][]int64{}
			for _, rec := range part {
				a, b, ok := parseEdge(rec.(string))
				if ok {
					adj[a] = append(adj[a], b)
				}
			}
			srcs := make([]int64, 0, len(adj))
			for s := range adj {
				srcs = append(srcs, s)
			}
			sort.Slice(srcs, func(i, j int) bool { return srcs[i] < srcs[j] })
			col := make([]byte, 0, 4*(2*len(adj)+len(part)))
			for _, s := range srcs {
				col = binary.LittleEndian.AppendUint32(col, uint32(s))
				col = binary.LittleEndian.AppendUint32(col, uint32(len(adj[s])))
				for _, d := range adj[s] {
					col = binary.LittleEndian.AppendUint32(col, uint32(d))
				}
			}
			emit(string(col))
		})
		// dpr.contrib's argument is []any{ids []float64, contribs []float64}:
		// the senders, sorted by id, and what each sends along an out-edge
		// (its delta over its whole out-degree: a vertex's edges may lie in
		// two partitions, so the driver divides). Walking the partition's
		// sources and the senders together, it reads only the senders'
		// neighbour lists and skips the rest; it sums, per destination, what
		// the partition's senders send, and emits one record, []float64
		// [dst, sum, dst, sum, ...] (one boxed record a partition, not one a
		// destination: the driver decodes every one each iteration).
		framework.Register("dpr.contrib", func(arg any) framework.PartitionFunc {
			a := arg.([]any)
			ids, contribs := a[0].([]float64), a[1].([]float64)
			return func(part []any, emit func(any)) {
				sums := map[int64]float64{}
				for _, rec := range part {
					sendColumns(rec.(string), ids, contribs, sums)
				}
				pairs := make([]float64, 0, 2*len(sums))
				for d, v := range sums {
					pairs = append(pairs, float64(d), v)
				}
				emit(pairs)
			}
		})
	})
}

// sendColumns adds, for every source in col (dpr.columns's layout) that is
// among the sorted ids, its contrib to each of its destinations' sums.
func sendColumns(col string, ids, contribs []float64, sums map[int64]float64) {
	u32 := func(i int) uint32 {
		return uint32(col[i]) | uint32(col[i+1])<<8 | uint32(col[i+2])<<16 | uint32(col[i+3])<<24
	}
	j := 0
	for i := 0; i+8 <= len(col) && j < len(ids); {
		src, deg := float64(u32(i)), int(u32(i+4))
		next := i + 8 + 4*deg
		for j < len(ids) && ids[j] < src {
			j++
		}
		if j < len(ids) && ids[j] == src {
			for k := i + 8; k < next; k += 4 {
				sums[int64(u32(k))] += contribs[j]
			}
		}
		i = next
	}
}

func parseEdge(line string) (a, b int64, ok bool) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0, 0, false
	}
	a, err1 := strconv.ParseInt(f[0], 10, 64)
	b, err2 := strconv.ParseInt(f[1], 10, 64)
	return a, b, err1 == nil && err2 == nil
}

// deltaState is the driver's vertex state, dense and in id order, so an
// iteration's bookkeeping is a few linear passes; the reference and the
// distributed run share it, so they differ only in how messages are summed.
type deltaState struct {
	tol           float64
	verts         []int64         // vertex ids, ascending
	index         map[int64]int32 // id -> position in verts
	rank, delta   []float64
	outdeg        []int32
	msg           []float64 // this iteration's message sums
	got           []bool    // whether a vertex received a message
	ids, contribs []float64 // the current senders, ascending, and delta/outdegree
}

// newDeltaState reads the vertex set and out-degrees of the edge file:
// every vertex that appears in it starts at rank 0.15, delta 0.15.
func newDeltaState(path string, tol float64) (*deltaState, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("input file: %v (check --input)", err)
	}
	defer f.Close()
	deg := map[int64]int32{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		a, b, ok := parseEdge(sc.Text())
		if !ok {
			continue
		}
		if a < 0 || b < 0 || a > math.MaxUint32 || b > math.MaxUint32 {
			return nil, fmt.Errorf("%s: edge %d %d: delta PageRank needs vertex ids in [0, 2^32)", path, a, b)
		}
		deg[a]++
		deg[b] += 0
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	s := &deltaState{tol: tol, index: make(map[int64]int32, len(deg))}
	for v := range deg {
		s.verts = append(s.verts, v)
	}
	sort.Slice(s.verts, func(i, j int) bool { return s.verts[i] < s.verts[j] })
	n := len(s.verts)
	s.rank, s.delta, s.msg = make([]float64, n), make([]float64, n), make([]float64, n)
	s.outdeg, s.got = make([]int32, n), make([]bool, n)
	for i, v := range s.verts {
		s.index[v] = int32(i)
		s.rank[i], s.delta[i], s.outdeg[i] = 0.15, 0.15, deg[v]
	}
	return s, nil
}

// senders picks the vertices that send this iteration (delta above tol,
// with out-edges), in id order; false when there are none. It also clears
// the message sums for the iteration.
func (s *deltaState) senders() bool {
	s.ids, s.contribs = s.ids[:0], s.contribs[:0]
	for i, d := range s.delta {
		if d > s.tol && s.outdeg[i] > 0 {
			s.ids = append(s.ids, float64(s.verts[i]))
			s.contribs = append(s.contribs, d/float64(s.outdeg[i]))
		}
	}
	clear(s.msg)
	clear(s.got)
	return len(s.ids) > 0
}

// add adds m to vertex v's message sum.
func (s *deltaState) add(v int64, m float64) {
	i := s.index[v]
	s.msg[i] += m
	s.got[i] = true
}

// apply takes the iteration's message sums: every vertex's delta becomes
// 0.85 times its sum (0 without a message) and its rank gains that. It
// returns how many vertices received a message.
func (s *deltaState) apply() (updated int) {
	for i, got := range s.got {
		s.delta[i] = 0
		if got {
			s.delta[i] = 0.85 * s.msg[i]
			s.rank[i] += s.delta[i]
			updated++
		}
	}
	return updated
}

func (s *deltaState) ranks() map[int64]float64 {
	out := make(map[int64]float64, len(s.verts))
	for i, v := range s.verts {
		out[v] = s.rank[i]
	}
	return out
}

// DeltaPageRank runs delta PageRank over the edge file on the cluster:
// at most maxIters iterations, each sending only from vertices whose
// delta is above tol. onStep (if not nil) hears each iteration's figures.
func DeltaPageRank(ctx *framework.Context, path string, tol float64, maxIters, parts int, onStep func(DeltaStep)) (map[int64]float64, error) {
	s, err := newDeltaState(path, tol)
	if err != nil {
		return nil, err
	}
	edges := ctx.TextFile(path, parts).MapPartitions("dpr.columns").Cache()
	for it := 0; it < maxIters && s.senders(); it++ {
		recs, err := edges.MapPartitions("dpr.contrib", []any{s.ids, s.contribs}).Collect()
		if err != nil {
			return nil, err
		}
		// One record a partition: [dst, sum, dst, sum, ...].
		for _, r := range recs {
			pairs := r.([]float64)
			for k := 0; k+1 < len(pairs); k += 2 {
				s.add(int64(pairs[k]), pairs[k+1])
			}
		}
		n := len(s.ids)
		updated := s.apply()
		if onStep != nil {
			onStep(DeltaStep{Iteration: it, Senders: n, Updated: updated})
		}
	}
	return s.ranks(), nil
}

// DeltaPageRankReference is the same delta iteration done in one process,
// messages summed edge by edge.
func DeltaPageRankReference(path string, tol float64, maxIters int, onStep func(DeltaStep)) (map[int64]float64, error) {
	s, err := newDeltaState(path, tol)
	if err != nil {
		return nil, err
	}
	adj := map[int64][]int64{}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if a, b, ok := parseEdge(sc.Text()); ok {
			adj[a] = append(adj[a], b)
		}
	}
	f.Close()
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for it := 0; it < maxIters && s.senders(); it++ {
		for i, id := range s.ids {
			for _, d := range adj[int64(id)] {
				s.add(d, s.contribs[i])
			}
		}
		n := len(s.ids)
		updated := s.apply()
		if onStep != nil {
			onStep(DeltaStep{Iteration: it, Senders: n, Updated: updated})
		}
	}
	return s.ranks(), nil
}

// WriteCitationGraph writes a seeded random citation graph of n papers, in
// order of publication, as "src dst" lines: paper s cites refs/2 to
// 3*refs/2 distinct earlier papers (fewer when fewer exist; papers in
// SNAP's cit-HepTh cite 13 of the others on average), each drawn uniformly
// from the most recent papers before it: the latest fraction recent of them,
// at least 2*refs. References mostly go to recent work, and the field grows,
// so the number of papers within a few years of s grows with s.
//
// A citation graph has no cycles, so under delta PageRank a paper keeps
// receiving rank only while chains of citations reach it from newer papers;
// rank settles from the newest papers back to the oldest, the newer ones
// (whose windows are wide) first. The number of senders falls geometrically,
// by about recent/2 each iteration, as in the diminishing-return profile of
// the paper's Fig. 1 (much early, then a long tail), not all at once as on a
// random graph whose vertices converge at about the same iteration.
func WriteCitationGraph(path string, n int, recent float64, refs int, seed int64) error {
	if recent <= 0 || recent > 1 || refs < 2 {
		return fmt.Errorf("citation window %g, %d references: want a fraction in (0, 1] and at least 2 references", recent, refs)
	}
	return writeEdges(path, seed, func(r *rand.Rand, edge func(s, t int)) {
		for s := 1; s < n; s++ {
			lo := max(0, s-max(2*refs, int(recent*float64(s))))
			seen := map[int]bool{}
			deg := min(refs/2+r.Intn(refs+1), s-lo)
			for len(seen) < deg {
				t := lo + r.Intn(s-lo)
				if seen[t] {
					continue
				}
				seen[t] = true
				edge(s, t)
			}
		}
	})
}

// MaxRankDiff is the largest |a[v]-b[v]| over both maps' vertices, and
// whether they hold the same vertices.
func MaxRankDiff(a, b map[int64]float64) (float64, bool) {
	if len(a) != len(b) {
		return math.Inf(1), false
	}
	worst := 0.0
	for v, x := range a {
		y, ok := b[v]
		if !ok {
			return math.Inf(1), false
		}
		worst = math.Max(worst, math.Abs(x-y))
	}
	return worst, true
}
