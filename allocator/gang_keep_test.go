package allocator

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// TestKeptBestMatchesWalk: a shape that keeps last round's E best
// (keepBest) holds what a walk of its heap from scratch would select, at
// every round it keeps them, and the decisions are those made walking
// every round, offer for offer and score for score: in an idle cluster
// filled by a few shapes (where most shapes keep their best) and in
// gangScript's seeded mix of busy agents, refuse filters and ended
// executors, under prophet and tetris-peak.
func TestKeptBestMatchesWalk(t *testing.T) {
	defer func(v bool) { keepBest = v }(keepBest)
	defer func() { checkKept = nil }()
	checked := 0
	checkKept = func(p *gangPath, s *shapeScores) {
		checked++
		best, norms := p.selectE(s, nil, nil, nil)
		if !slices.Equal(best, s.best) || !slices.Equal(norms, s.norms) {
			t.Fatalf("kept best %v (scores %v), a walk selects %v (%v)", s.best, s.norms, best, norms)
		}
	}
	compare := func(t *testing.T, kept, walked []Decisions) {
		t.Helper()
		sameDecisions(t, "kept", "walked", kept, walked)
	}
	t.Run("idle cluster", func(t *testing.T) {
		checked = 0
		keepBest = true
		kept, _, _ := idleFill(t, 40, 60, 4)
		if checked < 100 {
			t.Fatalf("%d rounds kept a shape's best: the test exercises too little", checked)
		}
		keepBest = false
		walked, _, _ := idleFill(t, 40, 60, 4)
		compare(t, kept, walked)
	})
	for _, crit := range []string{"prophet", "tetris-peak"} {
		for seed := uint64(1); seed <= 6; seed++ {
			t.Run(fmt.Sprintf("script/%s/seed=%d", crit, seed), func(t *testing.T) {
				checked = 0
				keepBest = true
				kept := gangScript(t, crit, seed)
				if checked == 0 {
					t.Fatalf("no shape kept its best")
				}
				t.Logf("%d rounds kept a shape's best", checked)
				keepBest = false
				compare(t, kept, gangScript(t, crit, seed))
			})
		}
	}
}

// sameDecisions fails t at the first cycle whose decisions differ
// between two runs, a and b naming them.
func sameDecisions(t *testing.T, a, b string, x, y []Decisions) {
	t.Helper()
	if len(x) != len(y) {
		t.Fatalf("%d cycles %s, %d %s", len(x), a, len(y), b)
	}
	for i := range x {
		if !reflect.DeepEqual(x[i], y[i]) {
			t.Fatalf("cycle %d differs:\n%s %+v\n%s %+v", i, a, x[i].Offers, b, y[i].Offers)
		}
	}
}
