package sorter

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// The co-location bandit's math (Thamsen et al., "Learning efficient
// co-locations for scheduling distributed dataflows in shared clusters";
// shared/papers/colocation-gradient-bandits.md): the goodness G of a node's
// measured usage (eq. 1), a matrix of preferences H(a | a') of queued job
// type a given running type a', the softmax policy over it, and the
// gradient-bandit update with a baseline (eqs. 2-3). Pure: no clock, no
// random source; the allocator passes uniform numbers from its seeded
// source and owns the Preferences as part of its model.
//
// Where the paper is silent, the choices made here:
//
// Which running job is a' when several run on a node. Options: (a) one of
// them (the longest-running, the largest, the most recent); (b) every
// distinct resident type, pooling their rows. Default (b): the policy is
// softmax(sum over resident types r of H(. | r)), log-linear pooling of the
// rows. With one resident it is exactly the paper's pi(a | a'); with none
// (an empty node) it is uniform, as the paper's initial state; and the
// gradient of log pi with respect to H(a | r) is the same (1[a] - pi(a)) for
// every resident r, so Update moves every resident's row by the paper's
// eqs. 2-3 with the pooled pi. (a) would throw away what the other
// residents say, and the paper's best co-location (Table 3) was a triple.
// Residents count once per type: three containers of one job are one
// neighbour, not three votes.
//
// Whether a pair updates both ways. When a is placed beside a', the node's
// G says as much about "a' then a" as "a then a'". Options: update H(a|a')
// only, or also H(a'|a). Default: one way, the decision that was actually
// drawn. The gradient-bandit update is REINFORCE: it is an unbiased step
// only for an action sampled from the policy being updated, and a' was
// never drawn from row a. A caller that wants both ways (to learn faster
// from symmetric G) calls Update a second time with the roles swapped.
//
// Whether the baseline is global or per row. The paper's G-bar is "the
// average of all previous goodness measures, including G_t": one global
// mean. Options: global, per row (per running type a'), per pair. Default:
// per row (BaselinePerRow). Each row is its own bandit problem, and its
// baseline should be that problem's mean reward: with a global mean, a
// running type whose co-locations all score high (a CPU-bound job always
// raises u_cpu) pushes up whatever was drawn in its row, good or bad, and
// a type whose co-locations all score low pushes everything down. Any
// action-independent baseline keeps the step unbiased; the row's own mean
// has the smaller variance. BaselineGlobal keeps the paper's letter for
// comparison. Both means are kept, so the choice can change on restore.
// Either way the mean includes G_t, as the paper says, so a row's first
// update moves nothing (G equals its own mean), and it is a sample mean
// over all time (the paper's), not an exponential one.
//
// Over which types pi is taken in an update. The paper writes pi over S,
// all types. The draw is among the distinct types of the window (the first
// n queued jobs that fit), i.e. pi conditioned on the window. Update takes
// that window: the step is then the exact gradient of the distribution that
// drew the choice, and types that were not candidates are not penalised for
// a co-location they had no part in. A nil window updates over all known
// types, the paper's letter (for callers that no longer know the window).
//
// The window's types, not its jobs: softmax runs over the distinct types in
// the window and the allocator then runs the earliest queued job of the
// drawn type. Softmax over jobs would weight a type by how many of its jobs
// are queued, which is the batch of similar jobs (the paper's queue A) the
// bandit is meant to break up.

// DefaultBanditStep is the step size gamma used when none is given. The
// paper gives none. G lies in [e, 50.8] and good and bad
// co-locations differ by a few units, so 0.1 (Sutton and Barto's usual
// value) moves a preference by a few tenths per update. A placeholder
// until a sweep of the step picks a better one.
const DefaultBanditStep = 0.1

// NodeUsage is a node's measured usage over one interval (api.UsageRates
// of its agent) and the bandwidths it advertises.
type NodeUsage struct {
	// CPU and IOWait are fractions of the node's CPU time, in [0, 1]: the
	// paper's u_cpu and u_wait.
	CPU, IOWait float64
	// Throughputs in MB/s.
	DiskReadMBps, DiskWriteMBps float64
	NetRxMBps, NetTxMBps        float64
	// DiskBW and NetBW are the node's advertised disk_bw and net_bw (MB/s),
	// the paper's r_max and w_max (reads and writes share one advertised
	// limit). Zero means not advertised: that resource's term is then 0,
	// since a rate cannot be judged against an unknown limit.
	DiskBW, NetBW float64
}

// Goodness is the paper's eq. 1:
//
//	G = f(u_cpu + (h(r_disk, w_disk) + h(r_net, w_net)) l(u_wait))
//	f(x) = exp(1 + x), h(r, w) = tanh(r/r_max + w/w_max), l(x) = exp(-5x)
//
// so G runs from e (an idle node) to e^(2 + 2 tanh 2), about 50.8 (CPU
// and both I/O resources saturated with no I/O wait).
func Goodness(u NodeUsage) float64 {
	io := ioTerm(u.DiskReadMBps, u.DiskWriteMBps, u.DiskBW) + ioTerm(u.NetRxMBps, u.NetTxMBps, u.NetBW)
	return math.Exp(1 + u.CPU + io*math.Exp(-5*u.IOWait))
}

// ioTerm is h(r, w) with r_max = w_max = bw, or 0 when bw is unknown.
func ioTerm(r, w, bw float64) float64 {
	if bw <= 0 {
		return 0
	}
	return math.Tanh(r/bw + w/bw)
}

// Softmax returns e^h_i / sum_j e^h_j, computed after subtracting the
// largest h so that large preferences do not overflow.
func Softmax(h []float64) []float64 {
	p := make([]float64, len(h))
	if len(h) == 0 {
		return p
	}
	m := h[0]
	for _, v := range h[1:] {
		m = math.Max(m, v)
	}
	var sum float64
	for i, v := range h {
		p[i] = math.Exp(v - m)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// Draw picks index i with probability probs[i] given u uniform in [0, 1):
// the first i whose cumulative probability exceeds u. Rounding can leave
// the sum a hair below 1; a u beyond it picks the last index with positive
// probability. It returns -1 when no index has positive probability.
func Draw(probs []float64, u float64) int {
	var cum float64
	last := -1
	for i, p := range probs {
		if p <= 0 {
			continue
		}
		cum += p
		last = i
		if u < cum {
			return i
		}
	}
	return last
}

// BaselineScope says which mean reward G-bar the update subtracts.
type BaselineScope int

const (
	// BaselinePerRow uses the mean G of the running type's row (default).
	BaselinePerRow BaselineScope = iota
	// BaselineGlobal uses the mean of every G observed (the paper's).
	BaselineGlobal
)

// Preferences is the matrix H(a | a'): rows are running job types a',
// columns queued job types a, indexed alike by the order in which types
// were first seen. A type never seen has preference 0 everywhere, so the
// matrix grows only on Update. Not safe for concurrent use; the allocator
// owns it.
type Preferences struct {
	// Step is gamma, the step size; 0 freezes the matrix (random choice in
	// the window, the control that tells learning from reordering).
	Step float64
	// Scope selects the baseline.
	Scope BaselineScope

	types []string
	index map[string]int
	h     [][]float64 // h[row][col]
	rowN  []int64     // goodness samples per row, for its mean
	rowG  []float64   // mean G per row
	allN  int64
	allG  float64
}

// NewPreferences returns an empty matrix (all preferences 0).
func NewPreferences(step float64, scope BaselineScope) *Preferences {
	return &Preferences{Step: step, Scope: scope, index: map[string]int{}}
}

// Types lists the known job types in index order.
func (p *Preferences) Types() []string { return append([]string(nil), p.types...) }

// H returns H(queued | running), 0 for unknown types.
func (p *Preferences) H(running, queued string) float64 {
	r, ok1 := p.index[running]
	q, ok2 := p.index[queued]
	if !ok1 || !ok2 {
		return 0
	}
	return p.h[r][q]
}

// Baseline returns the G-bar an update of running's row would subtract
// now (before adding a new G), per the Scope.
func (p *Preferences) Baseline(running string) float64 {
	if p.Scope == BaselineGlobal {
		return p.allG
	}
	if r, ok := p.index[running]; ok {
		return p.rowG[r]
	}
	return 0
}

// Policy returns the distinct types of window, in order of first
// appearance, and the pooled softmax probability of each given the node's
// residents: pi(a) proportional to exp(sum over distinct residents r of
// H(a | r)). No residents gives the uniform distribution.
func (p *Preferences) Policy(residents, window []string) (types []string, probs []float64) {
	types = distinct(window)
	return types, Softmax(p.logits(distinct(residents), types))
}

// Choose draws a type from Policy with u uniform in [0, 1) (from the
// allocator's seeded source). It returns "" for an empty window.
func (p *Preferences) Choose(residents, window []string, u float64) string {
	types, probs := p.Policy(residents, window)
	if i := Draw(probs, u); i >= 0 {
		return types[i]
	}
	return ""
}

// logits returns sum over residents r of H(a | r) for each a in types.
func (p *Preferences) logits(residents, types []string) []float64 {
	z := make([]float64, len(types))
	for _, r := range residents {
		for i, a := range types {
			z[i] += p.H(r, a)
		}
	}
	return z
}

// Update applies eqs. 2-3 after chosen was placed beside residents and
// the node then measured goodness g. For every distinct resident type r:
//
//	H(chosen | r) += Step (g - Gbar_r) (1 - pi(chosen))
//	H(b | r)      -= Step (g - Gbar_r) pi(b)      for every other b
//
// where pi is the pooled policy over window's distinct types (over every
// known type when window is nil) before the update, and Gbar_r is the
// baseline including g. chosen is added to the window if missing. With no
// residents there is no co-location and nothing is learned.
func (p *Preferences) Update(residents, window []string, chosen string, g float64) {
	rs := distinct(residents)
	if len(rs) == 0 {
		return
	}
	cols := distinct(append(append(append([]string(nil), rs...), chosen), window...))
	for _, t := range cols {
		p.ensure(t)
	}
	if window == nil {
		cols = p.Types()
	} else {
		cols = distinct(append(append([]string(nil), window...), chosen))
	}
	pi := Softmax(p.logits(rs, cols))
	p.allN++
	p.allG += (g - p.allG) / float64(p.allN)
	for _, r := range rs {
		ri := p.index[r]
		p.rowN[ri]++
		p.rowG[ri] += (g - p.rowG[ri]) / float64(p.rowN[ri])
		step := p.Step * (g - p.Baseline(r))
		for i, b := range cols {
			bi := p.index[b]
			if b == chosen {
				p.h[ri][bi] += step * (1 - pi[i])
			} else {
				p.h[ri][bi] -= step * pi[i]
			}
		}
	}
}

// ensure returns t's index, adding a zero row and column for a new type.
func (p *Preferences) ensure(t string) int {
	if i, ok := p.index[t]; ok {
		return i
	}
	if p.index == nil { // the zero Preferences is usable
		p.index = map[string]int{}
	}
	i := len(p.types)
	p.types = append(p.types, t)
	p.index[t] = i
	for r := range p.h {
		p.h[r] = append(p.h[r], 0)
	}
	p.h = append(p.h, make([]float64, i+1))
	p.rowN = append(p.rowN, 0)
	p.rowG = append(p.rowG, 0)
	return i
}

func distinct(xs []string) []string {
	seen := make(map[string]bool, len(xs))
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// prefsWire is the snapshot encoding: JSON, so an exported matrix (the
// paper's RA*, a warm start) can be read and edited by a person, and float
// values round-trip exactly (Go writes the shortest exact form). Step and
// Scope are configuration (flags), not learned state, and are not stored.
type prefsWire struct {
	Version int         `json:"version"`
	Types   []string    `json:"types"`
	H       [][]float64 `json:"h"`
	RowN    []int64     `json:"row_n"`
	RowMean []float64   `json:"row_mean"`
	AllN    int64       `json:"all_n"`
	AllMean float64     `json:"all_mean"`
}

const prefsVersion = 1

// Snapshot encodes the learned state (types, preferences, baselines).
func (p *Preferences) Snapshot() ([]byte, error) {
	h := make([][]float64, len(p.h))
	for i := range p.h {
		h[i] = append([]float64(nil), p.h[i]...)
	}
	return json.Marshal(prefsWire{Version: prefsVersion, Types: p.Types(), H: h,
		RowN: append([]int64(nil), p.rowN...), RowMean: append([]float64(nil), p.rowG...),
		AllN: p.allN, AllMean: p.allG})
}

// Restore replaces the learned state with a snapshot's, keeping Step and
// Scope. On error p is unchanged.
func (p *Preferences) Restore(b []byte) error {
	var w prefsWire
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("preferences: %w", err)
	}
	if err := w.validate(); err != nil {
		return err
	}
	index := make(map[string]int, len(w.Types))
	for i, t := range w.Types {
		index[t] = i
	}
	p.types, p.index, p.h = w.Types, index, w.H
	p.rowN, p.rowG, p.allN, p.allG = w.RowN, w.RowMean, w.AllN, w.AllMean
	return nil
}

func (w *prefsWire) validate() error {
	if w.Version != prefsVersion {
		return fmt.Errorf("preferences: snapshot version %d, want %d", w.Version, prefsVersion)
	}
	n := len(w.Types)
	if len(w.H) != n || len(w.RowN) != n || len(w.RowMean) != n {
		return fmt.Errorf("preferences: %d types but %d rows, %d counts, %d means", n, len(w.H), len(w.RowN), len(w.RowMean))
	}
	if len(distinct(w.Types)) != n {
		return errors.New("preferences: a type is listed twice")
	}
	for i, row := range w.H {
		if len(row) != n {
			return fmt.Errorf("preferences: row %q has %d columns, want %d", w.Types[i], len(row), n)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("preferences: H(%s | %s) is %g", w.Types[j], w.Types[i], v)
			}
		}
	}
	return nil
}
