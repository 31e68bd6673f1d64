package bandit

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/sorter"
)

// The co-location bandit's state (--sorter bandit; Thamsen et al.,
// shared/papers/colocation-gradient-bandits.md): the preference matrix
// H(a | a') (sorter.Preferences), the job type of each framework, and per
// agent the last Decision drawn there, which the node's measured usage
// then credits. The fill path that draws is allocator/prog_bandit.go.
//
// Credit assignment, where the paper says only "the goodness per
// combination of co-located jobs" is computed periodically:
//
//   - A Decision is a draw from the window on an agent (allocator/prog_bandit.go):
//     the resident types it was conditioned on, the window's types, the
//     drawn type and framework, and when. Placing more tasks of a job that
//     is already placed is no Decision (there was no choice) and makes
//     none. Each agent keeps only its most recent Decision: a new draw
//     there replaces the old one.
//   - Every Usage signal of the agent credits that Decision with the
//     node's goodness G (eq. 1) by the gradient-bandit update of the rows
//     of the Decision's residents (sorter.Preferences.Update), so a
//     co-location that lasts is credited once per usage interval, as the
//     paper's periodic updates are; longer co-locations weigh more.
//   - Only intervals that began after the Decision count: the first
//     observation of an agent, and one whose previous observation came
//     before the Decision, measure (partly) the node without the job and
//     are skipped, not credited.
//   - Only while the co-location is the one decided: the set of job types
//     holding resources on the agent must be exactly the Decision's
//     residents plus the drawn type, and the drawn framework must still
//     hold there. Otherwise (the job was declined or finished, a resident
//     left, another type joined) the Decision is retired and the agent's
//     usage credits nothing until the next draw there.
//   - A Decision with no residents (an empty agent) teaches nothing: there
//     was no co-location (Update is a no-op without residents).
//
// A framework without a job type (no JobType signal, or the empty type) is of
// type "": all untyped frameworks are learned as one type.

// Defaults of the bandit's parameters the paper does not give.
const (
	// DefaultWindow is n, how many of the first queued jobs that fit
	// are candidates. The paper gives no value; 8 is two blocks of queue A
	// (m = 4), so the window usually holds at least two types.
	DefaultWindow = 8
	// DefaultWaitScale is the wait weight's scale: a job that has
	// waited this long has twice the odds it had on arrival.
	DefaultWaitScale = 10 * time.Minute
)

// Config holds the co-location bandit's parameters.
type Config struct {
	// Step is gamma, the step size, used as given: 0 freezes the
	// preferences, so the draw is random in the window (the control that
	// tells learning from reordering). Flags default to
	// sorter.DefaultBanditStep.
	Step float64
	// Window is n, the number of the first queued jobs that fit among
	// which the next job is drawn; 0 means DefaultWindow.
	Window int
	// Scope is the baseline G-bar the update subtracts (per row by
	// default; sorter.BaselineGlobal is the paper's letter).
	Scope sorter.BaselineScope
	// WaitScale weighs the draw against starvation (the paper's remedy,
	// section 4.3): a candidate's softmax probability is multiplied by
	// 1 + wait/WaitScale, wait being the time since its framework
	// registered, and the products renormalised. 0 means
	// DefaultWaitScale; negative turns the weight off.
	WaitScale time.Duration
	// Chunk is how many tasks of a job one visit places on an agent, as
	// long as they fit and the job wants them: the paper's placement
	// (section 6.1) puts "triplets of containers on empty nodes", so a
	// node runs mostly a triplet of one job beside another job, the
	// co-location the draw decides. 0 or 1 is one task per visit (the
	// progressive filling every other path uses), which spreads a job over
	// every node one container at a time.
	Chunk int
	// Reward says what credits a Decision (beyond the paper):
	// RewardGoodness, the paper's G of the node's usage (the Usage signal), or
	// RewardProgress, the co-location's progress rate relative to solo
	// (the CoProgress signal). A model listens to its reward's observations only.
	Reward Reward
	// ResidentSet conditions the preferences on the set of a node's
	// resident types (one row per set, keyed "A+B") instead of pooling the
	// rows of each resident type (beyond the paper: its best co-location in
	// Table 3 was a triple, and a pair's effect need not add up).
	ResidentSet bool
}

// Reward is what a co-location bandit learns from.
type Reward int

const (
	// RewardGoodness is the paper's eq. 1 of the node's measured usage.
	RewardGoodness Reward = iota
	// RewardProgress is the mean, over the tasks on the node, of each
	// task's progress rate over its type's rate when it runs alone: 1 is
	// no interference, 0.5 each runs at half its solo speed.
	RewardProgress
)

// WindowOrDefault is the window, DefaultWindow when unset.
func (c Config) WindowOrDefault() int {
	if c.Window <= 0 {
		return DefaultWindow
	}
	return c.Window
}

// ExportPreferences returns the bandit's learned preferences and baselines
// (sorter.Preferences.Snapshot, JSON) for a warm start elsewhere (the
// paper's RA*). It fails when there is no bandit (m is nil: Of found none).
func (m *Model) ExportPreferences() ([]byte, error) {
	if m == nil {
		return nil, errors.New("export preferences: the allocator runs no bandit (--sorter bandit)")
	}
	return m.prefs.Snapshot()
}

// ImportPreferences replaces the bandit's preferences and baselines with
// exported ones, keeping its step size, scope, job types and decisions.
// On error nothing changes.
func (m *Model) ImportPreferences(b []byte) error {
	if m == nil {
		return errors.New("import preferences: the allocator runs no bandit (--sorter bandit)")
	}
	return m.prefs.Restore(b)
}

// Of is the bandit model among an allocator's models, nil if it runs none.
func Of(a interface {
	Model(name string) policy.Model
}) *Model {
	m, _ := a.Model(Name).(*Model)
	return m
}

// Decision is one draw on an agent; see the credit rules above.
type Decision struct {
	At        int64    `json:"at_unix_nano"`
	Framework string   `json:"framework"`
	Type      string   `json:"type"`
	Residents []string `json:"residents"` // distinct resident types
	// Rows are the preference rows the draw used and the update moves:
	// the residents, or their set's one key (Config.ResidentSet).
	// Empty without ResidentSet (and in older snapshots): then the
	// residents, each its own row.
	Rows   []string `json:"rows,omitempty"`
	Window []string `json:"window"` // distinct window types
}

// Model is the co-location bandit's policy.Model.
type Model struct {
	prefs     *sorter.Preferences
	types     map[string]string    // framework -> job type
	added     map[string]time.Time // framework -> registration, for the wait weight
	decisions map[string]Decision  // agent -> its most recent draw
	reward    Reward
	lastObs   map[string]time.Time // agent -> its last usage observation
	// started holds the frameworks offered tasks since they registered:
	// a job between two stages holds nothing but has started, and is
	// served first when it wants more (allocator/prog_bandit.go), not drawn again.
	started map[string]bool
}

var _ policy.Model = (*Model)(nil)

func New(c Config) *Model {
	return &Model{
		prefs: sorter.NewPreferences(c.Step, c.Scope), reward: c.Reward,
		types: map[string]string{}, added: map[string]time.Time{},
		decisions: map[string]Decision{}, lastObs: map[string]time.Time{},
		started: map[string]bool{},
	}
}

// Name is the model's record name in a policy snapshot.
const Name = "bandit"

func (m *Model) Name() string { return Name }

// TypeOf is framework's job type ("" if untyped).
func (m *Model) TypeOf(framework string) string { return m.types[framework] }

// Started says whether framework has been offered a task's worth yet.
func (m *Model) Started(framework string) bool { return m.started[framework] }

// Added is when framework registered, for the wait weight.
func (m *Model) Added(framework string) (time.Time, bool) {
	t, ok := m.added[framework]
	return t, ok
}

// Prefs is the preference matrix the draw reads.
func (m *Model) Prefs() *sorter.Preferences { return m.prefs }

func (m *Model) Observe(e policy.Event) {
	switch e.Kind {
	case policy.FrameworkAdded:
		m.added[e.Framework] = e.At
	case policy.FrameworkRemoved:
		delete(m.types, e.Framework)
		delete(m.added, e.Framework)
		delete(m.started, e.Framework)
	case policy.Offered:
		// Only an offer of tasks' worth starts a job. A whole-agent offer
		// (made to a framework before its REQUEST declared a demand, e.g.
		// an agent's leftover memory while its cpus are busy) does not: a
		// job that declined it and declares its demand later is still
		// queued and drawn, not served first as if placed.
		if e.Tasks > 0 {
			m.started[e.Framework] = true
		}
	case policy.AgentRemoved:
		delete(m.decisions, e.Agent)
		delete(m.lastObs, e.Agent)
	case policy.JobTypeSet:
		if e.JobType == "" {
			delete(m.types, e.Framework)
		} else {
			m.types[e.Framework] = e.JobType
		}
	case policy.UsageObserved:
		if m.reward == RewardGoodness {
			m.credit(e, sorter.Goodness(*e.Usage))
		}
	case policy.CoProgressObserved:
		if m.reward == RewardProgress {
			m.credit(e, e.CoProgress)
		}
	}
}

// Decide records a draw on agent (called by the fill path during a cycle).
func (m *Model) Decide(agent string, d Decision) { m.decisions[agent] = d }

// credit applies the credit rules above to one observation of the
// model's reward, whose value is reward.
func (m *Model) credit(e policy.Event, reward float64) {
	prev, seen := m.lastObs[e.Agent]
	m.lastObs[e.Agent] = e.At
	d, ok := m.decisions[e.Agent]
	if !ok {
		return
	}
	if !m.stillDecided(d, e.Holders) {
		delete(m.decisions, e.Agent)
		return
	}
	if !seen || prev.UnixNano() < d.At {
		return // the interval began before the job was placed
	}
	rows := d.Rows
	if len(rows) == 0 {
		rows = d.Residents
	}
	m.prefs.Update(rows, d.Window, d.Type, reward)
}

// stillDecided reports whether the agent still runs the co-location d
// made: d's framework holds there and the holders' types are exactly d's
// residents plus d's type.
func (m *Model) stillDecided(d Decision, holders []string) bool {
	want := map[string]bool{d.Type: true}
	for _, r := range d.Residents {
		want[r] = true
	}
	have := map[string]bool{}
	chosen := false
	for _, f := range holders {
		chosen = chosen || f == d.Framework
		have[m.TypeOf(f)] = true
	}
	if !chosen || len(have) != len(want) {
		return false
	}
	for t := range have {
		if !want[t] {
			return false
		}
	}
	return true
}

// refresh changes no view: the fill path reads the model directly.
func (m *Model) Refresh(time.Time, policy.Views) bool { return false }

type banditWire struct {
	Prefs     json.RawMessage     `json:"prefs"`
	Types     map[string]string   `json:"types"`
	Added     map[string]int64    `json:"added_unix_nano"`
	Decisions map[string]Decision `json:"decisions"`
	LastObs   map[string]int64    `json:"last_obs_unix_nano"`
	Started   map[string]bool     `json:"started"`
}

func (m *Model) Snapshot() ([]byte, error) {
	prefs, err := m.prefs.Snapshot()
	if err != nil {
		return nil, err
	}
	w := banditWire{Prefs: prefs, Types: m.types, Added: unixNanos(m.added), Decisions: m.decisions, LastObs: unixNanos(m.lastObs), Started: m.started}
	return json.Marshal(w) // maps are written with sorted keys: deterministic
}

func (m *Model) Restore(data []byte) error {
	var w banditWire
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("bandit: %w", err)
	}
	prefs := sorter.NewPreferences(m.prefs.Step, m.prefs.Scope)
	if err := prefs.Restore(w.Prefs); err != nil {
		return fmt.Errorf("bandit: %w", err)
	}
	m.prefs = prefs
	m.types = orEmpty(w.Types)
	m.added = fromUnixNanos(w.Added)
	m.decisions = orEmpty(w.Decisions)
	m.lastObs = fromUnixNanos(w.LastObs)
	m.started = orEmpty(w.Started)
	return nil
}

func unixNanos(ts map[string]time.Time) map[string]int64 {
	out := make(map[string]int64, len(ts))
	for k, t := range ts {
		out[k] = t.UnixNano()
	}
	return out
}

func fromUnixNanos(ns map[string]int64) map[string]time.Time {
	out := make(map[string]time.Time, len(ns))
	for k, n := range ns {
		out[k] = time.Unix(0, n)
	}
	return out
}

func orEmpty[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}
