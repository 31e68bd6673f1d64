package bandit

import (
	"fmt"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/sorter"
)

// Options are the keys ParseOptions reads, with what each sets.
var Options = []struct{ Key, Help string }{
	{"step", fmt.Sprintf("step size gamma of the preference update (0: no learning, random in the window; default %v)", sorter.DefaultBanditStep)},
	{"window", fmt.Sprintf("the next job is drawn among the first n queued jobs that fit (default %d)", DefaultWindow)},
	{"baseline", "baseline of the update, row (mean goodness of the running type's row; the default) or global (the paper's)"},
	{"wait-scale", fmt.Sprintf("a queued job's odds are multiplied by 1 + wait/duration against starvation (negative: off; default %v)", DefaultWaitScale)},
	{"chunk", "place up to n tasks of a job per agent visit (3: the paper's triplets; 0 or 1, the default: one task per visit)"},
}

// ParseOptions is the Config v sets (the master's --policy-opt
// bandit.KEY=VALUE), from sorter.DefaultBanditStep, DefaultWindow, the
// per-row baseline, DefaultWaitScale and one task per visit. A key it does
// not read is an error naming it.
func ParseOptions(v *policy.Values) (Config, error) {
	var c Config
	var err error
	if c.Step, err = v.Float("step", sorter.DefaultBanditStep); err != nil {
		return c, err
	}
	if c.Window, err = v.Int("window", DefaultWindow); err != nil {
		return c, err
	}
	baseline := v.Text("baseline", "row")
	if c.WaitScale, err = v.Duration("wait-scale", DefaultWaitScale); err != nil {
		return c, err
	}
	if c.Chunk, err = v.Int("chunk", 0); err != nil {
		return c, err
	}
	if err := v.Unknown(); err != nil {
		return c, err
	}
	if c.Step < 0 || c.Window < 1 || c.Chunk < 0 {
		return c, fmt.Errorf("policy options: bandit.step must be >= 0, bandit.window >= 1 and bandit.chunk >= 0")
	}
	switch baseline {
	case "row":
		c.Scope = sorter.BaselinePerRow
	case "global":
		c.Scope = sorter.BaselineGlobal
	default:
		return c, fmt.Errorf("policy option bandit.baseline: want row or global, got %q", baseline)
	}
	return c, nil
}
