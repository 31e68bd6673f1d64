package sorter

import (
	"fmt"
	"math"
	"strings"

	"github.com/allot-sched/allot/resources"
)

// AgentSelection says how the allocator chooses which agent to serve next.
type AgentSelection int

const (
	// RRR is randomized round robin: agents are visited in rounds, each
	// round a fresh random permutation (Mesos's default shuffle); on each
	// visit the criterion picks the framework.
	RRR AgentSelection = iota
	// BestFit picks the framework by the criterion, then the agent whose
	// residual capacity best matches its demand (see BestFitDistance).
	BestFit
	// Joint scores every (framework, agent) pair and serves the best.
	Joint
)

var selectionNames = [...]string{"rrr", "bestfit", "joint"}

func (s AgentSelection) String() string {
	if s < 0 || int(s) >= len(selectionNames) {
		return fmt.Sprintf("AgentSelection(%d)", int(s))
	}
	return selectionNames[s]
}

// ParseAgentSelection reads "rrr", "bestfit" or "joint".
func ParseAgentSelection(name string) (AgentSelection, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for i, s := range selectionNames {
		if n == s {
			return AgentSelection(i), nil
		}
	}
	if n == "best-fit" || n == "bf" {
		return BestFit, nil
	}
	return 0, fmt.Errorf("unknown agent selection %q: choose one of rrr, bestfit, joint", name)
}

// BestFitDistance is the best-fit distance of Best-Fit DRFH (Wang, Liang,
// Li, TPDS 2015): with every resource normalised by the cluster total, the
// L1 distance between the demand and the residual capacity, each divided by
// its own largest component so that only the shape of the vectors counts:
//
//	H(n,i) = || d_n / max_r d_{n,r} - avail_i / max_r avail_{i,r} ||_1
//
// (Wang et al. divide by the first component, cpus; the largest component
// makes the distance defined for demands without cpus.) Smaller is a better
// fit. Advisory bandwidths are ignored.
func BestFitDistance(d, avail, total resources.Vector) float64 {
	// Bug fix: the normalisation below rounds, so distance(d, k*avail) used
	// to differ from distance(d, avail) in the last bits (for example
	// 0.16666666666666666 vs 0.16666666666666669), and of two agents whose
	// residuals differ only in scale the allocator picked whichever rounded
	// lower instead of the lower agent index. Dividing each vector by the
	// gcd of its counted components first maps proportional vectors to the
	// same integers, hence to bit-identical distances.
	d, avail = primitive(d, total), primitive(avail, total)
	var dn, an [resources.NumKinds]float64
	var dmax, amax float64
	for k := resources.Kind(0); k < resources.NumKinds; k++ {
		if k.Advisory() || total[k] == 0 {
			continue
		}
		dn[k] = float64(d[k]) / float64(total[k])
		an[k] = float64(avail[k]) / float64(total[k])
		dmax = math.Max(dmax, dn[k])
		amax = math.Max(amax, an[k])
	}
	if dmax == 0 || amax == 0 {
		return math.Inf(1)
	}
	var h float64
	for k := range dn {
		h += math.Abs(dn[k]/dmax - an[k]/amax)
	}
	return h
}

// primitive divides v's components in the kinds BestFitDistance counts
// (reservable, nonzero total) by their greatest common divisor.
func primitive(v, total resources.Vector) resources.Vector {
	var g resources.Quantity
	for k := resources.Kind(0); k < resources.NumKinds; k++ {
		if k.Advisory() || total[k] == 0 || v[k] <= 0 {
			continue
		}
		a, b := g, v[k]
		for b != 0 {
			a, b = b, a%b
		}
		g = a
	}
	if g <= 1 {
		return v
	}
	for k := resources.Kind(0); k < resources.NumKinds; k++ {
		if !k.Advisory() && total[k] != 0 {
			v[k] /= g
		}
	}
	return v
}
