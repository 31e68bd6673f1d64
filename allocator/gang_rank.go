package allocator

import "slices"

// rankedCandidates switches choose from the candidate walk
// (walkCandidates) to rankCandidates; a variable so that a test can
// compare the two.
var rankedCandidates = true

// rankCandidates is walkCandidates without the walk. The walk meets the
// pending applications of fitting shapes in order, counting them (their
// rank), up to rank half; a shape is a candidate if its first pending
// application comes within that, and the walk keeps the lowest score,
// the first met on a tie. When the shape of lowest score has been placed
// ahead of the others, the walk crossed most of the queue every round
// (~220 applications a round filling 1000 agents from 1000 applications
// of six shapes) to meet the shapes behind it. Here each shape's first
// pending application comes from its own list, its rank from liveRanks
// (O(log n)), and the candidates are compared in the walk's order: the
// same application, the same rank, in O(shapes x log n) a round.
func (p *gangPath) rankCandidates(half int) (*gangApp, int) {
	p.cands = p.cands[:0]
	for _, s := range p.shapeList {
		if s.pending == 0 || !s.ok {
			continue
		}
		for p.apps[s.apps[s.first]].done { // pending > 0: one is not
			s.first++
		}
		if at := s.apps[s.first]; p.ranks.upTo(int(at)) <= half {
			p.cands = append(p.cands, at)
		}
	}
	slices.Sort(p.cands) // the walk's order
	var best *gangApp
	for _, at := range p.cands {
		if g := &p.apps[at]; best == nil || g.sh.app < best.sh.app {
			best = g
		}
	}
	if best == nil {
		return nil, 0
	}
	return best, p.ranks.upTo(int(best.at))
}

// recount puts s's pending applications into the cycle's ranks when s
// fits again, or takes them out when it no longer does: ranks count only
// the applications the walk would count. Within a cycle agents only lose
// room, so a shape stops fitting at most once; the other way is kept for
// exactness all the same.
func (p *gangPath) recount(s *shapeScores) {
	d := 1
	if s.counted {
		d = -1
	}
	for _, at := range s.apps[s.first:] {
		if !p.apps[at].done {
			p.ranks.add(int(at), d)
		}
	}
	s.counted = !s.counted
}

// liveRanks counts applications by position (a Fenwick tree): how many
// of those counted stand at or before a position, in O(log n).
type liveRanks struct {
	t []int32 // 1-based: t[k] sums the positions (k - k&-k, k]
}

// reset counts every one of n positions once, keeping the storage.
func (r *liveRanks) reset(n int) {
	if cap(r.t) < n+1 {
		r.t = make([]int32, n+1)
	}
	r.t = r.t[:n+1]
	r.t[0] = 0
	for k := 1; k <= n; k++ {
		r.t[k] = int32(k & -k) // each node sums its span of ones
	}
}

// add adds d to position i's count.
func (r *liveRanks) add(i, d int) {
	for k := i + 1; k < len(r.t); k += k & -k {
		r.t[k] += int32(d)
	}
}

// upTo is the sum of the counts of positions 0..i.
func (r *liveRanks) upTo(i int) int {
	n := 0
	for k := i + 1; k > 0; k -= k & -k {
		n += int(r.t[k])
	}
	return n
}
