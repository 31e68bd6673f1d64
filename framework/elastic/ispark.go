package elastic

import (
	"fmt"
	"sort"
	"time"
)

// ISpark is the iController of iSpark (Yang et al., "Elastic Executor
// Provisioning for Iterative Workloads on Apache Spark"): scale an
// application's executors down when they are under-used and others wait,
// handing the givers' cached partitions to receivers first, and scale back
// up by one when an executor runs hot.
//
// Scale-down (Algorithm 1, eq. 3). When OthersWaiting and some executor's
// utilisation is at or below Gamma, the executors' loads are packed
// best-fit-decreasing by the factor (DF: the maximum of CPU and memory
// utilisation; CF, CPUOnly: CPU alone) into executors of capacity
// min(Theta, U_max), U_max the application's (the highest of its
// executors' UMax; see appUMax). The unit packed is one executor's whole remaining load
// (its tasks read its cached partitions, and an executor only half emptied
// cannot be released). Executors above Gamma stay and may receive; each
// under-used one, largest first, goes to the open executor it fills most
// without passing that executor's capacity, or stays and opens. One that
// went is a giver: its cached partitions move first (VIP, then highest
// partition id) to its receiver, or to another staying executor when the
// receiver is out of room after evicting partitions whose reading stages
// are done; a giver whose VIP partitions find no room stays. Givers are
// released, never below Scale.Min.
//
// Scale-up. Scale (today's IdleBacklog) still adds on backlog and releases
// idle executors without cache. Shrinking leaves tasks backlogged on fewer
// executors, which the backlog rule would answer by growing the pool
// straight back: so a shrink sets Backlog.Ceiling to the new target, and
// while others wait the backlog rule may not pass it. The reprovisioning
// rule alone passes it: when any executor's utilisation exceeds
// H x min(Theta, U_max), one executor is added (and the ceiling rises by
// one). When nobody waits any more the ceiling is lifted.
//
// Utilisation and capacity are in the same unit, a fraction of the
// executor's reservation, and the packing is only as good as they are: a
// load must be what the executor's work demands, not what a busy host let
// it have, or an executor starved with its slot full looks under-used and
// is packed onto another that has no room either; and UMax must be the
// usage the executor reached while it worked, or (an average over idle
// time too) it is no larger than the load and nothing ever fits. The
// framework runtime measures both so (framework/utilisation.go).
//
// Zero parameters take the paper's defaults: Gamma 0.5, Theta 1.0, H 1.1.
type ISpark struct {
	Gamma, Theta, H float64
	// CPUOnly is the paper's CF variant: pack and watch CPU only. The
	// default (DF) treats memory as the hard limit it is.
	CPUOnly bool
	// Scale is the backlog/idle rule underneath, and its Min and Max bound
	// the pool.
	Scale IdleBacklog
}

var _ Policy = ISpark{}

// Paper defaults (Section III-B, IV-D).
const (
	DefaultGamma = 0.5
	DefaultTheta = 1.0
	DefaultH     = 1.1
)

// WithDefaults is s with every zero parameter at the paper's default,
// as Decide uses it (and the simulator's diagnostics read it).
func (s ISpark) WithDefaults() ISpark {
	if s.Gamma == 0 {
		s.Gamma = DefaultGamma
	}
	if s.Theta == 0 {
		s.Theta = DefaultTheta
	}
	if s.H == 0 {
		s.H = DefaultH
	}
	return s
}

// Decide applies the backlog/idle rule under the shrink ceiling, then
// reprovisioning, then (when nothing runs hot) the scale-down packing.
func (s ISpark) Decide(now time.Time, p Pool) Decision {
	s = s.WithDefaults()
	d := s.Scale.Decide(now, p)
	ceiling := p.Backlog.Ceiling
	if !p.OthersWaiting {
		ceiling = 0
	}
	if ceiling > 0 && d.Additions > 0 {
		allowed := max(0, ceiling-p.Target)
		cut := d.Additions - min(d.Additions, allowed)
		d.Additions -= cut
		d.Target -= cut
		if d.Additions == 0 {
			d.Why = ""
		}
	}
	if hot := s.hot(p.Executors); hot != "" {
		if d.Additions == 0 && d.Target < s.Scale.Max {
			d.Additions, d.Target = 1, d.Target+1
			d.Why = "utilisation of " + hot + " above h x capacity"
		}
		if ceiling > 0 {
			ceiling = max(ceiling, d.Target)
		}
		d.Backlog.Ceiling = ceiling
		return d
	}
	if p.OthersWaiting && s.shrink(p, &d) > 0 {
		// Others wait and this application has more than it uses: the
		// shrink wins over a backlog addition decided above.
		if d.Additions > 0 {
			d.Target = max(s.Scale.Min, d.Target-d.Additions)
			d.Additions, d.Why = 0, ""
		}
		ceiling = d.Target
	}
	d.Backlog.Ceiling = ceiling
	return d
}

// factor is the utilisation the policy packs and watches by.
func (s ISpark) factor(cpu, mem float64) float64 {
	if s.CPUOnly {
		return cpu
	}
	return max(cpu, mem)
}

// capacity is eq. 3's min(Theta, U_max) for the application's U_max
// (appUMax); no history means Theta.
func (s ISpark) capacity(umax float64) float64 {
	if umax > 0 {
		return min(s.Theta, umax)
	}
	return s.Theta
}

// appUMax is eq. 3's U_max, "the highest usage of executor from previous
// iterations": one figure for the application, the highest of its
// executors' own. Eq. 3 indexes every term by its executor j except this
// one (sum_i x_ij u_i <= y_j min{theta, U_max}), Algorithm 1 compares each
// U_j against the same min{theta, U_max}, and the paper updates "the
// threshold" once per provisioning interval. Taken per executor instead,
// an executor added after the application's early, busy iterations (as
// most are in a full cluster, where executors trickle in) has seen only
// the diminished tail and gets a capacity near its own load: nothing fits
// beside it and it cannot receive, which is not the paper's rule.
func appUMax(execs []Executor) float64 {
	u := 0.0
	for _, e := range execs {
		u = max(u, e.UMax)
	}
	return u
}

// hot names the first executor (by id) whose utilisation exceeds H times
// the capacity, or "" if none does.
func (s ISpark) hot(execs []Executor) string {
	sorted := byID(execs)
	capacity := s.capacity(appUMax(execs))
	for _, e := range sorted {
		if s.factor(e.CPUUtil, e.MemUtil) > s.H*capacity {
			return e.ID
		}
	}
	return ""
}

func byID(execs []Executor) []Executor {
	out := append([]Executor(nil), execs...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// shrink packs, picks givers and receivers, appends their moves and
// releases to d, and returns how many executors give.
func (s ISpark) shrink(p Pool, d *Decision) int {
	released := map[string]bool{}
	for _, r := range d.Releases {
		released[r.Executor] = true
	}
	var bins []*bin
	capacity := s.capacity(appUMax(p.Executors))
	for _, e := range byID(p.Executors) {
		if !released[e.ID] {
			bins = append(bins, s.newBin(e, capacity))
		}
	}
	live, givers := len(bins), 0
	if !s.anyUnder(bins) {
		return 0
	}
	for _, b := range s.balls(bins) {
		if live > s.Scale.Min && s.give(b, bins, d) {
			live--
			givers++
			d.Target = max(s.Scale.Min, d.Target-1)
			continue
		}
		b.open = true
	}
	return givers
}

func (s ISpark) anyUnder(bins []*bin) bool {
	for _, b := range bins {
		if s.factor(b.e.CPUUtil, b.e.MemUtil) <= s.Gamma {
			return true
		}
	}
	return false
}

// balls opens the executors above Gamma and returns the rest, the
// candidates to give, largest first (ties by id).
func (s ISpark) balls(bins []*bin) []*bin {
	var out []*bin
	for _, b := range bins {
		if s.factor(b.e.CPUUtil, b.e.MemUtil) > s.Gamma {
			b.open = true
			continue
		}
		out = append(out, b)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return s.factor(out[i].e.CPUUtil, out[i].e.MemUtil) > s.factor(out[j].e.CPUUtil, out[j].e.MemUtil)
	})
	return out
}

// give tries to make b a giver: the open executor it fills most without
// passing capacity receives its load, and its cached partitions find room.
// It reports whether b gives.
func (s ISpark) give(b *bin, bins []*bin, d *Decision) bool {
	var to *bin
	best := -1.0
	for _, r := range bins {
		if !r.open {
			continue
		}
		u := r.utilWith(s, b.cpu, b.mem)
		if u <= r.cap+1e-9 && u > best {
			to, best = r, u
		}
	}
	if to == nil {
		return false
	}
	moves, dropped, ok := placeCache(b, to, bins)
	if !ok {
		return false
	}
	to.cpu += b.cpu
	to.mem += b.mem
	d.Moves = append(d.Moves, moves...)
	d.Releases = append(d.Releases, Release{Executor: b.e.ID, Receiver: to.e.ID, Dropped: dropped,
		Reason: fmt.Sprintf("iSpark: utilisation %.2f <= gamma %.2f while others wait; load packed onto %s (now %.2f of capacity %.2f)",
			s.factor(b.e.CPUUtil, b.e.MemUtil), s.Gamma, to.e.ID, best, to.cap)})
	return true
}
