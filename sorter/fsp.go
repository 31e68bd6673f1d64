package sorter

import (
	"math"

	"github.com/allot-sched/allot/resources"
)

// VirtualState says where FSP's virtual fair cluster has a framework's
// head job.
type VirtualState uint8

const (
	// VirtualNone: the framework declared no job (or the policy keeps no
	// virtual cluster). FSP serves it as an unknown-size job that is owed
	// nothing: in the fair queue, after the size-based queue.
	VirtualNone VirtualState = iota
	// VirtualUnknown: a job of unknown size, served fairly (the paper's
	// fair queue) until a size is declared for it.
	VirtualUnknown
	// VirtualKnown: a job of known or predicted size still running in the
	// virtual cluster (the size-based queue).
	VirtualKnown
	// VirtualDone: a job of known size whose virtual size reached zero
	// while the real job still runs: it is late against fair sharing.
	VirtualDone
	// VirtualProbe: the framework runs a probing job (FSPY's probing
	// queue), which is not in the virtual cluster: served FIFO within the
	// probing share, after everything else beyond it.
	VirtualProbe
)

// Virtual is the view of a framework's head job in FSP's virtual fair
// cluster. The allocator's virtual cluster model (allocator/policy/fsp/virtual.go)
// fills it at each cycle's refresh; nothing else writes it.
type Virtual struct {
	State VirtualState
	// Remaining is the job's remaining virtual size in MB x s
	// (VirtualKnown). For VirtualDone it is minus the seconds since the
	// job's virtual finish (<= 0): the earlier a job finished virtually,
	// the smaller, so late jobs are ordered by virtual finish time.
	Remaining float64
	// Resource is the memory (MB) the virtual fair cluster gives the job
	// (the paper's VRA): a fair-queue job is owed this much.
	Resource float64
	// Rate is how fast the job's virtual size shrinks, MB (its virtual
	// resource less its AM): Remaining / Rate projects its virtual finish.
	Rate float64
	// Ahead is, for VirtualProbe, the memory (MB) the probes declared up
	// to and including this one, oldest first: the probe is within the
	// probing share when Ahead is at most the share. Remaining is then
	// minus the seconds since the probe was declared (FIFO: oldest first).
	Ahead float64
}

// FSP is the Fair Sojourn Protocol as FSPY builds it for YARN (Liu, Zeng,
// Piao; papers/fspy-size-based-yarn.md, section III.C) over the virtual
// fair cluster the allocator keeps (Framework.Virtual). Frameworks are
// served in four tiers, smallest key first:
//
//  1. fair-queue jobs (unknown size) holding less memory than their
//     virtual resource, least allocated memory first;
//  2. jobs of known size whose virtual size reached zero while they still
//     run, earliest virtual finish first (the paper is silent; a late job
//     is the one FSP's guarantee is about, so it goes first);
//  3. jobs of known size, smallest remaining virtual size first (the
//     size-based queue);
//  4. the other fair-queue jobs and frameworks that declared no job,
//     least allocated memory first: they take what the size-based queue
//     leaves (the paper hands resources the chosen queue rejects to the
//     other queue).
//
// The paper serves the fair queue while its real holdings are below its
// jobs' summed virtual resources. A key may depend on its framework
// alone (the allocator re-keys only the framework it grants to), so the
// rule is applied per job: a fair-queue job comes first while it holds
// less than its own virtual resource. The two agree whenever every
// fair-queue job can use its virtual share; the per-job rule does not let
// one fair-queue job take another's unused share ahead of the size-based
// queue (it gets it in tier 4).
//
// Probing queue (the paper's probing share, section III.C). Probing jobs
// are frameworks of their own that declare themselves probes
// (VirtualProbe); they are not in the virtual cluster. Probes whose
// declared memory, summed FIFO up to and including theirs, fits in
// ProbeShare of the cluster's memory come before every tier above,
// oldest first (tier 0); the others come after every tier (tier 5),
// oldest first: they borrow what production leaves idle, as production
// borrows the idle part of the probing share (the tiers only order who is
// offered what is free; nothing is preempted). The FIFO sum is over
// declared probes, running or waiting, which is the probing queue's
// holdings plus its demand when each probe asks one container (FSPY's
// probes run in uber mode, one container each).
//
// Oracle names the variant: "fsp" is fed true sizes at submission,
// "fspy" predicted ones after a probe; the ordering is the same.
// ProbeShare is the probing queue's share of the cluster's memory: 0 for
// DefaultProbeShare, negative for none (every probe borrows).
//
// Beyond the paper, DRF shares the virtual cluster's cpus and memory by
// DRF over each job's APB vector (allocator/policy/fsp/vra_drf.go) instead of memory
// alone, and Finish orders the size-based queue by projected virtual
// finish time, Remaining / Rate seconds from now, instead of remaining
// virtual size: FSP's own rule (serve the job fair sharing would finish
// first), which the remaining size gives only when every job shrinks at
// the same rate. Both: "fspy-drf" and "fsp-drf".
type FSP struct {
	Oracle     bool
	ProbeShare float64
	DRF        bool
	Finish     bool
}

// DefaultProbeShare is the probing queue's share when FSP.ProbeShare is 0.
// The paper leaves it to configuration; a tenth of the cluster holds
// several uber-mode probes at once, more than FB-2009's arrivals (one job
// every ~15 s, probes of ~10 s) keep busy on average, and leaves the rest
// to production.
const DefaultProbeShare = 0.1

func (f FSP) probeShare() float64 {
	switch {
	case f.ProbeShare == 0:
		return DefaultProbeShare
	case f.ProbeShare < 0:
		return 0
	}
	return f.ProbeShare
}

func (f FSP) Name() string {
	n := "fspy"
	if f.Oracle {
		n = "fsp"
	}
	if f.DRF || f.Finish {
		n += "-drf"
	}
	return n
}

// fspTier bounds the key ranges of the fair tiers: far beyond any virtual
// size in MB x s or lateness in seconds, yet multiplying a share in [0, 1]
// keeps its full precision.
const fspTier = 1e300

// Key is the framework's place in the tiers above.
func (p FSP) Key(f *Framework, c *Cluster) float64 {
	v := &f.Virtual
	switch v.State {
	case VirtualKnown:
		if p.Finish {
			if v.Rate <= 0 {
				return fspTier / 2 // never finishes at this rate: last of tier 3
			}
			return math.Min(v.Remaining/v.Rate, fspTier/2)
		}
		return v.Remaining
	case VirtualDone:
		return v.Remaining
	case VirtualProbe:
		age := math.Max(0, -v.Remaining)
		old := age / (1 + age) // in [0, 1): the older, the larger
		if v.Ahead <= p.probeShare()*c.Total[resources.Mem].Units() {
			return -fspTier * (3 + old) // tier 0: in (-4e300, -3e300]
		}
		return fspTier * (4 - old) // tier 5: in (3e300, 4e300]
	}
	held := f.Allocated[resources.Mem]
	share := held.Ratio(c.Total[resources.Mem]) / f.Weight
	if v.State == VirtualUnknown && held.Units() < v.Resource {
		return -fspTier * (2 - share) // tier 1: in [-2e300, -1e300)
	}
	return fspTier * (1 + share) // tier 4: in [1e300, 2e300]
}
