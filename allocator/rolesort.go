package allocator

import (
	"slices"
	"sort"
)

// The order of roles among their siblings, which the role-aware cycle
// (rolefill.go) walks: by weighted dominant share of what each subtree
// holds, then by name. It is sorted once per cycle and kept sorted as
// grants raise the shares.

// rankRoleNames numbers the roles in name order, the tie-break of the
// role order, so that sorting compares numbers rather than names.
func (a *Allocator) rankRoleNames() {
	names := make([]string, 0, len(a.roleTree))
	for name := range a.roleTree {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		a.roleTree[name].nameRank = i
	}
	a.roleOrderDirty = false
}

// roleShare sets n's share (its subtree's holdings) and its virtual
// leaf's (its own frameworks'), by the weight noted for the cycle. Only a
// role with children has a virtual leaf to compare (walkRole): a leaf's
// own share is its share, and is not computed a second time.
func (a *Allocator) roleShare(n *roleNode) {
	n.share = dominantShare(&n.alloc.Scalars, &a.cluster.Total) / n.weight
	if len(n.kids) > 0 {
		n.ownShare = dominantShare(&n.own.Scalars, &a.cluster.Total) / n.weight
	}
}

// roleLess orders siblings by share, then name (by its rank).
func roleLess(x, y *roleNode) bool {
	if x.share != y.share {
		return x.share < y.share
	}
	return x.nameRank < y.nameRank
}

func sortRoles(s []*roleNode) {
	sort.Slice(s, func(i, j int) bool { return roleLess(s[i], s[j]) })
}

// resortPath recomputes the shares from n up and moves each node to its
// place among its siblings: found by pointer, placed by binary search on
// the side it moves to, and only the siblings it passes are shifted (a
// granted role moves right, usually far; one copy of the whole list in
// and one out was most of the re-sort).
func (a *Allocator) resortPath(n *roleNode) {
	for m := n; m != nil; m = m.parent {
		a.roleShare(m)
		sibp := &a.roleTop
		if m.parent != nil {
			sibp = &m.parent.kids
		}
		sib := *sibp
		i := slices.Index(sib, m)
		if right := sib[i+1:]; len(right) > 0 && roleLess(right[0], m) {
			j := sort.Search(len(right), func(k int) bool { return roleLess(m, right[k]) })
			*sibp = moveRight(sib, i, j)
			continue
		}
		left := sib[:i]
		j := sort.Search(len(left), func(k int) bool { return roleLess(m, left[k]) })
		copy(sib[j+1:i+1], sib[j:i])
		sib[j] = m
	}
}

// moveRight moves s[i] past the j nodes right of it and returns the list.
// The cheaper of two shifts: those j nodes one place left, or, where fewer
// lie before i and after the new place (a role granted on an agent
// usually goes from the front to the back), those before i one place
// right and those after the new place one place right, the list sliding
// right in its backing array, which is regrown with room at its end when
// it has none.
func moveRight(s []*roleNode, i, j int) []*roleNode {
	m := s[i]
	if tail := len(s) - 1 - (i + j); i+tail >= j {
		copy(s[i:i+j], s[i+1:i+j+1])
		s[i+j] = m
		return s
	}
	if cap(s) == len(s) {
		s = append(make([]*roleNode, 0, 4*len(s)+8), s...)
	}
	copy(s[1:i+1], s[:i])
	s = s[1 : len(s)+1]
	copy(s[i+j+1:], s[i+j:len(s)-1])
	s[i+j] = m
	return s
}
