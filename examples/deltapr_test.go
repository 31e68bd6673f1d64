package examples

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/allot-sched/allot/examples/internal/gen"
	"github.com/allot-sched/allot/internal/testcluster"
)

// pagerank --tol (delta PageRank) on a real master and agents: the ranks
// equal the plain reference computation of the same delta algorithm, and
// every iteration sent from as many vertices as the reference's.
func TestDeltaPageRankOnCluster(t *testing.T) {
	c := newCluster(t)
	in := filepath.Join(t.TempDir(), "cites.txt")
	if err := gen.WriteCitationGraph(in, 3000, 0.05, 10, 5); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := c.run(t, "pagerank", "--input", in, "--tol", "1e-12", "--iterations", "1000", "--partitions", "3")
	if err != nil {
		t.Fatalf("pagerank --tol: %v\n%s", err, testcluster.Tail(stderr, 3000))
	}
	var wantSenders []int
	want, err := gen.DeltaPageRankReference(in, 1e-12, 1000, func(s gen.DeltaStep) { wantSenders = append(wantSenders, s.Senders) })
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]float64{}
	for _, r := range parseFloats(t, out) {
		got[int64(r[0])] = r[1]
	}
	if d, same := gen.MaxRankDiff(got, want); !same || d > 1e-9 {
		t.Fatalf("%d ranks, the reference has %d; max difference %g", len(got), len(want), d)
	}
	var gotSenders []int
	for _, m := range regexp.MustCompile(`delta pagerank: iteration \d+: (\d+) senders`).FindAllStringSubmatch(stderr, -1) {
		n, _ := strconv.Atoi(m[1])
		gotSenders = append(gotSenders, n)
	}
	if fmt.Sprint(gotSenders) != fmt.Sprint(wantSenders) {
		t.Fatalf("senders per iteration %v, the reference's %v", gotSenders, wantSenders)
	}
	if n := len(wantSenders); n < 40 || wantSenders[n-1] >= wantSenders[0]/100 {
		t.Fatalf("the run should converge over many iterations with senders falling: %v", wantSenders)
	}
	c.noExecutorsLeft(t)
}
