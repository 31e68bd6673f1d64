package sim

import (
	"fmt"
	"strings"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/sorter"
)

// Policy is one way of allocating: a framework-selection criterion and an
// agent-selection rule, named as the papers name the pair.
type Policy struct {
	// Name labels the policy in tables and plots ("drf", "bf-drf", ...).
	Name      string
	Sorter    sorter.Criterion
	Selection sorter.AgentSelection
}

// policyAliases are the papers' names for criterion x selection pairs and
// the baselines' names the issue uses.
var policyAliases = map[string]struct {
	sorter string
	sel    sorter.AgentSelection
}{
	"bf-drf": {"drf", sorter.BestFit},
	"bfdrf":  {"drf", sorter.BestFit},
	"fair":   {"drf", sorter.RRR}, // YARN's fair scheduler in its DRF policy
}

// fspVariants are sorter.FSP's options beyond the paper, by the names
// sorter.FSP.Name gives them (not in the master's sorter table).
var fspVariants = map[string]sorter.FSP{
	"fspy-drf": {DRF: true, Finish: true},
	"fsp-drf":  {Oracle: true, DRF: true, Finish: true},
}

// ParsePolicy reads "drf", "psdsf/joint", "bf-drf", "fair"...: a criterion
// name (see sorter.Names), optionally followed by /rrr, /bestfit or /joint;
// without one, sel applies. The label is the name as given, lower-cased,
// with the selection appended when it is not sel.
func ParsePolicy(s string, sel sorter.AgentSelection) (Policy, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	name, selName, hasSel := strings.Cut(s, "/")
	crit := name
	if a, ok := policyAliases[name]; ok {
		crit = a.sorter
		if name != "fair" {
			sel = a.sel
		}
	}
	if hasSel {
		var err error
		if sel, err = sorter.ParseAgentSelection(selName); err != nil {
			return Policy{}, err
		}
	}
	if v, ok := fspVariants[name]; ok && !hasSel {
		return Policy{Name: name, Sorter: v, Selection: sel}, nil
	}
	c, err := sorter.Lookup(crit)
	if err != nil {
		return Policy{}, fmt.Errorf("%v (or bf-drf, fair)", err)
	}
	return Policy{Name: name, Sorter: c, Selection: sel}, nil
}

// Label is the policy's name with its agent selection when that is not
// the criterion's usual one (RRR, or best fit for bf-drf).
func (p Policy) Label() string {
	if a, ok := policyAliases[p.Name]; ok && a.sel == p.Selection {
		return p.Name
	}
	if p.Selection == sorter.RRR {
		return p.Name
	}
	return p.Name + "/" + p.Selection.String()
}

// Check reports whether the allocator accepts the policy in mode m (for
// example best fit needs an agent-independent criterion).
func (p Policy) Check(m allocator.Mode) error {
	_, err := allocator.New(allocator.Config{Sorter: p.Sorter, AgentSelection: p.Selection, Mode: m, Clock: &allocator.ManualClock{}})
	return err
}
