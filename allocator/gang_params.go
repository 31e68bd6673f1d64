package allocator

import (
	"fmt"
	"math"

	"github.com/allot-sched/allot/profile"
)

// GangParams parameterise the gang criteria (prophet, tetris-peak).
type GangParams struct {
	// Score holds eta and the normalisation across disk and network.
	Score profile.Options
	// Combine turns the E per-agent scores into the application's.
	Combine profile.Combine
	// Fraction is the longest-waiting fraction of the pending applications
	// that fit which are candidates each round, in (0, 1].
	Fraction float64
	// DeadlineFactor: an application's deadline is its arrival plus this
	// times the mean wait of the applications placed before it arrived.
	DeadlineFactor float64
	// DeadlineMean is whose mean wait the deadline multiplies.
	DeadlineMean DeadlineMean
}

// DeadlineMean says which waits "the current average waiting time" of
// the paper's deadline rule averages. The paper assigns each application
// a deadline when it arrives, "according to current average waiting time
// (e.g. three times of its average)", for "starvation avoidance", and
// says no more.
type DeadlineMean int

const (
	// DeadlinePlaced averages the waits (declaration to first offer) of
	// the applications placed so far. In a backlog that grows, as the
	// paper's 90 applications in 1200 s, those waits lag the waits ahead:
	// the early applications, placed at once, pull the mean towards zero,
	// and deadlines expire within seconds of arrival.
	DeadlinePlaced DeadlineMean = iota
	// DeadlinePending averages how long the applications still waiting
	// at the arrival have waited so far: the queue's current average
	// waiting time. With none waiting (or all just arrived) there is no
	// deadline, as before the first placement under DeadlinePlaced.
	DeadlinePending
)

func (d DeadlineMean) String() string {
	switch d {
	case DeadlinePlaced:
		return "placed"
	case DeadlinePending:
		return "pending"
	}
	return fmt.Sprintf("DeadlineMean(%d)", int(d))
}

// DefaultGangParams are the paper's: eta 0.3, raw areas, the mean of the E
// scores, the longest-waiting half, deadlines at 3x the mean wait.
func DefaultGangParams() GangParams {
	return GangParams{Score: profile.PaperOptions, Combine: profile.CombineMean, Fraction: 0.5, DeadlineFactor: 3}
}

// Validate reports a parameter out of range.
func (p GangParams) Validate() error {
	if err := p.Score.Validate(); err != nil {
		return err
	}
	if p.Combine != profile.CombineMean && p.Combine != profile.CombineSum && p.Combine != profile.CombineMax {
		return fmt.Errorf("gang: unknown combine %v", p.Combine)
	}
	if !(p.Fraction > 0 && p.Fraction <= 1) {
		return fmt.Errorf("gang: fraction %v is not in (0, 1]", p.Fraction)
	}
	if p.DeadlineMean != DeadlinePlaced && p.DeadlineMean != DeadlinePending {
		return fmt.Errorf("gang: unknown deadline mean %v", p.DeadlineMean)
	}
	if !(p.DeadlineFactor >= 0) || math.IsInf(p.DeadlineFactor, 0) {
		return fmt.Errorf("gang: deadline factor %v must be a finite number >= 0", p.DeadlineFactor)
	}
	return nil
}
