package gen

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/allot-sched/allot/framework"
)

func writeEdgeList(t *testing.T, edges [][2]int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edges.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edges {
		fmt.Fprintf(f, "%d %d\n", e[0], e[1])
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// The reference against figures worked by hand, and against the classic
// power iteration's fixpoint on a graph where every vertex has in-links
// (the classic example drops vertices without them, so only there do the
// two agree).
func TestDeltaPageRankReference(t *testing.T) {
	ring := func(n int) [][2]int {
		var out [][2]int
		for i := 0; i < n; i++ {
			out = append(out, [2]int{i, (i + 1) % n}, [2]int{i, (i*7 + 3) % n})
		}
		return out
	}
	cases := []struct {
		name  string
		edges [][2]int
		tol   float64
		want  map[int64]float64 // nil: the classic iteration's, 300 rounds
		steps int               // -1: don't check
	}{
		// 1 -> 0: 0 gains 0.85*0.15 in the first iteration; then nothing
		// sends (1 got no message, 0 has no out-edges).
		{"one edge", [][2]int{{1, 0}}, 1e-9, map[int64]float64{0: 0.15 + 0.85*0.15, 1: 0.15}, 1},
		// tol above the starting delta: nothing sends.
		{"tol above start", [][2]int{{0, 1}, {1, 0}}, 0.2, map[int64]float64{0: 0.15, 1: 0.15}, 0},
		// A 3-cycle's fixpoint is 1 everywhere.
		{"cycle", [][2]int{{0, 1}, {1, 2}, {2, 0}}, 1e-14, map[int64]float64{0: 1, 1: 1, 2: 1}, -1},
		// tol between 0.85*0.15 and 0.15: every vertex sends once, then
		// none (each delta is then 0.1275).
		{"tol stops", [][2]int{{0, 1}, {1, 2}, {2, 0}}, 0.14, map[int64]float64{0: 0.15 + 0.85*0.15, 1: 0.15 + 0.85*0.15, 2: 0.15 + 0.85*0.15}, 1},
		{"ring with chords", ring(50), 1e-14, nil, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeEdgeList(t, c.edges)
			steps := 0
			got, err := DeltaPageRankReference(path, c.tol, 10000, func(DeltaStep) { steps++ })
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if want == nil {
				if want, err = PageRankReference(path, 300); err != nil {
					t.Fatal(err)
				}
			}
			if d, same := MaxRankDiff(got, want); !same || d > 1e-9 {
				t.Fatalf("ranks %v, want %v (max diff %g, same vertices %v)", got, want, d, same)
			}
			if c.steps >= 0 && steps != c.steps {
				t.Fatalf("%d iterations, want %d", steps, c.steps)
			}
		})
	}
}

// On a citation graph the senders fall iteration by iteration (the
// diminishing demand the scenario needs), and the run ends by itself.
func TestDeltaPageRankSendersDiminish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cites.txt")
	if err := WriteCitationGraph(path, 4000, 0.05, 10, 1); err != nil {
		t.Fatal(err)
	}
	var senders []int
	if _, err := DeltaPageRankReference(path, 1e-13, 10000, func(s DeltaStep) { senders = append(senders, s.Senders) }); err != nil {
		t.Fatal(err)
	}
	n := len(senders)
	if n < 40 || n >= 10000 {
		t.Fatalf("%d iterations; want a run of at least 40 that converges", n)
	}
	if !(senders[n/4] < senders[0]*3/4 && senders[n/2] < senders[0]/3 && senders[n-1] < senders[0]/100) {
		t.Fatalf("senders do not diminish: first %d, at 1/4 %d, at 1/2 %d, last %d", senders[0], senders[n/4], senders[n/2], senders[n-1])
	}
}

// The runtime's delta PageRank (local executors, over HTTP) sends from
// exactly the reference's vertices every iteration and ends with its ranks
// (up to the order floating-point sums are taken in).
func TestDeltaPageRankMatchesReference(t *testing.T) {
	RegisterDeltaPageRank()
	path := filepath.Join(t.TempDir(), "cites.txt")
	if err := WriteCitationGraph(path, 3000, 0.05, 10, 2); err != nil {
		t.Fatal(err)
	}
	var wantSteps, gotSteps []DeltaStep
	want, err := DeltaPageRankReference(path, 1e-12, 10000, func(s DeltaStep) { wantSteps = append(wantSteps, s) })
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := framework.NewContext(framework.Config{App: "deltapr", Local: true, Executors: 2, Cores: 1, EventLogDir: t.TempDir(), Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close(nil)
	got, err := DeltaPageRank(ctx, path, 1e-12, 10000, 3, func(s DeltaStep) { gotSteps = append(gotSteps, s) })
	if err != nil {
		t.Fatal(err)
	}
	if d, same := MaxRankDiff(got, want); !same || d > 1e-9 {
		t.Fatalf("ranks differ from the reference: max diff %g, same vertices %v", d, same)
	}
	if fmt.Sprint(gotSteps) != fmt.Sprint(wantSteps) {
		t.Fatalf("iterations differ from the reference:\n got %v\nwant %v", gotSteps, wantSteps)
	}
	if math.IsNaN(got[0]) || got[0] <= 0.15 {
		t.Fatalf("the oldest paper's rank %v: it is cited, so above 0.15", got[0])
	}
}
