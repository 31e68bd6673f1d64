package allocator

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestLiveRanksMatchCount: liveRanks answers as counting the positions
// one by one, through seeded random removals and additions.
func TestLiveRanksMatchCount(t *testing.T) {
	for _, n := range []int{1, 2, 7, 64, 300} {
		rng := rand.New(rand.NewPCG(uint64(n), 9))
		var r liveRanks
		r.reset(n + 5) // storage from a larger cycle is reused
		r.reset(n)
		count := make([]int, n)
		for i := range count {
			count[i] = 1
		}
		for step := 0; step < 4*n; step++ {
			i := rng.IntN(n)
			d := 1
			if count[i] > 0 && rng.IntN(3) > 0 {
				d = -1
			}
			count[i] += d
			r.add(i, d)
			q := rng.IntN(n)
			want := 0
			for _, c := range count[:q+1] {
				want += c
			}
			if got := r.upTo(q); got != want {
				t.Fatalf("n=%d step %d: upTo(%d) = %d, counting gives %d", n, step, q, got, want)
			}
		}
	}
}

// TestNextLiveMatchesScan: nextLive finds the first application not done
// at or after a position, as a scan does, while applications finish in a
// seeded random order and the walks come from random positions.
func TestNextLiveMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	p := &gangPath{}
	for i := 0; i < 200; i++ {
		p.apps = append(p.apps, gangApp{next: int32(i + 1), at: int32(i)})
	}
	for _, i := range rng.Perm(len(p.apps)) {
		p.apps[i].done = true
		for k := 0; k < 5; k++ {
			from := rng.IntN(len(p.apps) + 1)
			want := from
			for want < len(p.apps) && p.apps[want].done {
				want++
			}
			if got := p.nextLive(from); got != want {
				t.Fatalf("nextLive(%d) = %d, a scan finds %d", from, got, want)
			}
		}
	}
}

// TestRankedCandidatesMatchWalk: choosing among the candidates by their
// ranks (rankCandidates) makes the decisions of the candidate walk, offer
// for offer, including the rank named in the reason: in an idle cluster
// filled by six shapes, where the best shape runs ahead of the others,
// and in gangScript's seeded mix under prophet (half the fitting
// applications are candidates) and tetris-peak (all are).
func TestRankedCandidatesMatchWalk(t *testing.T) {
	defer func(v bool) { rankedCandidates = v }(rankedCandidates)
	compare := func(t *testing.T, ranked, walked []Decisions) {
		t.Helper()
		offers := 0
		for _, d := range ranked {
			offers += len(d.Offers)
		}
		sameDecisions(t, "ranked", "walked", ranked, walked)
		if offers < 20 {
			t.Fatalf("only %d offers: the test exercises too little", offers)
		}
	}
	t.Run("idle cluster", func(t *testing.T) {
		rankedCandidates = true
		ranked, _, _ := idleFill(t, 40, 90, 4)
		rankedCandidates = false
		walked, _, _ := idleFill(t, 40, 90, 4)
		compare(t, ranked, walked)
	})
	for _, crit := range []string{"prophet", "tetris-peak"} {
		for seed := uint64(1); seed <= 6; seed++ {
			t.Run(fmt.Sprintf("script/%s/seed=%d", crit, seed), func(t *testing.T) {
				rankedCandidates = true
				ranked := gangScript(t, crit, seed)
				rankedCandidates = false
				compare(t, ranked, gangScript(t, crit, seed))
			})
		}
	}
}
