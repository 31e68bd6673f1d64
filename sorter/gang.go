package sorter

// GangRule names how a Gang criterion scores an application's executors
// on an agent; the allocator's gang path (allocator/gang.go) implements
// each rule, since both need the allocator's per-agent state (Prophet's
// availability timelines, the peaks already placed).
type GangRule int

const (
	// GangProphet scores by Prophet's fragmentation and over-allocation
	// areas against the agent's predicted availability (profile.Score),
	// among the longest-waiting fraction of pending applications, with a
	// deadline override (Xu, Xu, Jiang).
	GangProphet GangRule = iota + 1
	// GangTetrisPeak is the paper's Tetris baseline: each executor reserves
	// its lifetime peak of cpus, mem, disk_bw and net_bw, fits only where
	// all four fit, and agents are chosen by the alignment of those peaks
	// with what is free (Grandl et al.), every pending application a
	// candidate.
	GangTetrisPeak
)

// Gang is a criterion that places applications, not tasks: a framework that
// declares an application demand (E executors, per-executor cpus/mem and a
// stage profile) gets all E executors on distinct agents in one cycle, or
// none. Frameworks without an application demand are served after the
// gangs, by Key (DRF), on what is left.
type Gang interface {
	Ordering
	Rule() GangRule
}

// Prophet is the gang criterion of "Prophet: Scheduling Executors with
// Time-varying Resource Demands" (Xu, Xu, Jiang, papers/). Frameworks
// without an application demand are ordered by DRF.
type Prophet struct{ DRF }

func (Prophet) Name() string { return "prophet" }

// Rule is GangProphet.
func (Prophet) Rule() GangRule { return GangProphet }

// TetrisPeak is the Tetris the Prophet paper compared against: executors
// packed by their lifetime peaks of all four resources, bandwidth reserved
// at its peak. The criterion named "tetris" is allot's per-task Tetris,
// which never reserves the advisory bandwidths. Frameworks without an
// application demand are ordered by DRF.
type TetrisPeak struct{ DRF }

func (TetrisPeak) Name() string { return "tetris-peak" }

// Rule is GangTetrisPeak.
func (TetrisPeak) Rule() GangRule { return GangTetrisPeak }

var (
	_ Gang = Prophet{}
	_ Gang = TetrisPeak{}
)
