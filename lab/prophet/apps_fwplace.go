package prophet

import (
	"fmt"
	"math"
	"sort"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/profile"
)

// Prophet placement in the framework under a master running another
// sorter ("drf in the master + Prophet in the framework";
// AppConfig.FrameworkPlace). The master decides which application is
// served and when (drf, characterized, as the baselines run); the
// application asks for Ask times the executors it still wants, so that
// its offers span more agents than it needs, and chooses among the
// offered agents by Prophet's score (profile.Timeline.Score, the package
// the allocator uses) against the availability timelines, which the
// master publishes and the simulator mirrors (apps_diag.go's mirror: every
// running executor's predicted profile anchored at its launch). It
// launches one executor on each of its lowest-scored agents, at most one
// per agent (the paper's executors on distinct servers) and no more than
// it still wants, declines the rest at once (no refuse filter) and asks
// again for what it still wants. Unlike the gang path it takes fewer
// than E executors when offered fewer agents: a driver under a master
// that does not place gangs cannot wait for E agents at once.

// FrameworkPlacement parameterises the framework-side placement.
type FrameworkPlacement struct {
	// Ask is how many times the executors it still wants an application
	// asks the master for (>= 1).
	Ask float64
	// Score holds eta and the normalisation.
	Score profile.Options
}

// DefaultFrameworkPlacement asks for twice what it wants and scores as
// the paper does.
var DefaultFrameworkPlacement = FrameworkPlacement{Ask: 2, Score: profile.PaperOptions}

func (f *FrameworkPlacement) validate() error {
	if !(f.Ask >= 1 && f.Ask <= 100) {
		return fmt.Errorf("sim: framework placement ask %v must be in [1, 100]", f.Ask)
	}
	return f.Score.Validate()
}

// fwAsk is the task count an application with want executors to go asks
// for.
func (f *FrameworkPlacement) fwAsk(want int) int {
	if want <= 0 {
		return 0
	}
	return int(math.Ceil(float64(want) * f.Ask))
}

// fwOffer is an agent offered to an application, with its score.
type fwOffer struct {
	o     allocator.Offer
	agent int
	norm  float64
}

// placeByScore handles one cycle's offers to application i: it launches
// on the best-scored agents and declines the rest.
func (r *appRun) placeByScore(i int, offers []allocator.Offer) error {
	fp := r.cfg.FrameworkPlace
	a := &r.apps[i]
	now := secs(r.now)
	cands := make([]fwOffer, 0, len(offers))
	for _, o := range offers {
		ag := 0
		fmt.Sscanf(o.Agent, "server-%d", &ag)
		cands = append(cands, fwOffer{o: o, agent: ag, norm: r.mirror.tls[ag].Score(now, &a.Predicted, fp.Score).Norm})
	}
	// lowest score first; ties by agent, then by offer order (one agent
	// offered twice in a cycle counts once: the second is declined)
	sort.SliceStable(cands, func(x, y int) bool {
		if cands[x].norm != cands[y].norm {
			return cands[x].norm < cands[y].norm
		}
		return cands[x].agent < cands[y].agent
	})
	used := map[int]bool{}
	one := r.execRes(i)
	for _, c := range cands {
		rest := c.o.Resources
		if r.want[i] > 0 && !used[c.agent] {
			used[c.agent] = true
			r.launch(i, c.agent, 1)
			rest = rest.Sub(one)
		}
		if !rest.IsEmpty() {
			if err := r.al.Recover(a.Name, c.o.Agent, rest, nil); err != nil {
				return err
			}
		}
	}
	return r.declare(i)
}
