package placement

import (
	"fmt"
	"sort"
	"time"

	"github.com/allot-sched/allot/profile"
)

// Mode is how a driver chooses among the agents it holds offers on.
type Mode string

const (
	// First keeps the offers' order: one executor per offer per round,
	// the library's behaviour before Prophet.
	First Mode = "first"
	// Prophet orders the agents by Prophet's score, lowest first.
	Prophet Mode = "prophet"
)

// ParseMode reads a --placement value ("" is First).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", First:
		return First, nil
	case Prophet:
		return Prophet, nil
	}
	return "", fmt.Errorf("placement %q: want first or prophet", s)
}

// Candidate is an agent the driver holds an offer on, with its predicted
// availability timeline (nil: unknown, scored last).
type Candidate struct {
	Agent    string
	Timeline *profile.Timeline
}

// Choice is one chosen agent and its score (the Euclidean norm of the
// weighted F and O areas, lower is better).
type Choice struct {
	Index int // into the candidates
	Agent string
	Score float64
}

// Choose picks up to n candidates on distinct agents for executors that
// will follow p from now, best score first, as the master's gang path picks
// an application's E agents: each executor is scored alone against its
// agent's timeline, and since no two share an agent, the E best are the E
// lowest scores. Candidates without a timeline come after every scored one;
// ties keep the candidates' order, so equal scores (an empty profile, idle
// agents) choose exactly what First would.
func Choose(now time.Time, p *profile.Profile, cands []Candidate, n int, o profile.Options) []Choice {
	if n <= 0 {
		return nil
	}
	seen := map[string]bool{}
	var scored, unknown []Choice
	for i, c := range cands {
		if seen[c.Agent] {
			continue
		}
		seen[c.Agent] = true
		if c.Timeline == nil {
			unknown = append(unknown, Choice{Index: i, Agent: c.Agent})
			continue
		}
		scored = append(scored, Choice{Index: i, Agent: c.Agent, Score: c.Timeline.Score(now, p, o).Norm})
	}
	sort.SliceStable(scored, func(i, j int) bool { return scored[i].Score < scored[j].Score })
	out := append(scored, unknown...)
	if len(out) > n {
		out = out[:n]
	}
	return out
}
