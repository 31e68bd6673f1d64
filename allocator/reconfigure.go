package allocator

import (
	"fmt"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Switching policy at runtime. The fill path is chosen once, in New, from
// (criterion, agent selection, mode) — that is what keeps a cycle free of
// branches — so a switch builds a new allocator with the new choice and
// hands it everything the old one holds:
//
//   - frameworks in registration order (so ties break as before), their
//     roles, activity, suppression (per role) and declared per-task
//     demand with the tasks still wanted; role weights and quotas;
//   - reservations, and which role and pool each holding is for;
//   - agents in registration order with their totals, attributes and each
//     framework's holding, task counts included (TSF's and PS-DSF's x_n);
//   - decline filters that have not expired (a switch is no revive);
//   - application demands (Prophet), where the new criterion places
//     applications; otherwise they are dropped and reported;
//   - the state of every policy model the new allocator also has (same
//     name: switching prophet -> tetris-peak keeps the timelines).
//
// What the old allocator knew that the new criterion has no model for is
// gone; signals the master holds on the wire (job types and job sizes in
// FrameworkInfo labels) are the master's to give again. Offers outstanding
// belong to the old allocator: the caller recovers (rescinds) them first.

// Reconfiguration is what a switch changes.
type Reconfiguration struct {
	Sorter         sorter.Criterion
	AgentSelection sorter.AgentSelection
	Mode           Mode
}

// CheckReconfiguration says whether rc is a policy the allocator can run
// (the combination New accepts), without building anything from a's state.
func (a *Allocator) CheckReconfiguration(rc Reconfiguration) error {
	cfg := a.cfg
	cfg.Sorter, cfg.AgentSelection, cfg.Mode = rc.Sorter, rc.AgentSelection, rc.Mode
	_, err := New(cfg)
	return err
}

// Reconfigure returns a new allocator running rc with a's state; a is left
// unchanged (a caller that fails to install the new one keeps the old).
// dropped lists, in words, what the new criterion could not take.
func (a *Allocator) Reconfigure(rc Reconfiguration) (b *Allocator, dropped []string, err error) {
	cfg := a.cfg
	cfg.Sorter, cfg.AgentSelection, cfg.Mode = rc.Sorter, rc.AgentSelection, rc.Mode
	if b, err = New(cfg); err != nil {
		return nil, nil, err
	}
	if err := b.SetWeights(a.weights); err != nil {
		return nil, nil, fmt.Errorf("reconfigure: weights: %w", err)
	}
	if err := a.replayQuotas(b); err != nil {
		return nil, nil, err
	}
	fwMap, err := a.replayFrameworks(b)
	if err != nil {
		return nil, nil, err
	}
	if err := a.replayAgents(b, fwMap); err != nil {
		return nil, nil, err
	}
	a.carryRoleBooks(b, fwMap)
	for _, f := range a.fws {
		if f == nil || f.app == nil {
			continue
		}
		if err := b.setAppDemand(f.id, *f.app); err != nil {
			dropped = append(dropped, fmt.Sprintf("application demand of framework %q (%v)", f.id, err))
		}
	}
	dropped = append(dropped, a.carryModels(b)...)
	b.keysDirty = true
	return b, dropped, nil
}

// replayFrameworks registers a's frameworks in b and returns a's framework
// index -> b's.
func (a *Allocator) replayFrameworks(b *Allocator) (map[int32]int32, error) {
	fwMap := map[int32]int32{}
	for _, f := range a.fws {
		if f == nil {
			continue
		}
		var err error
		if err = b.AddFramework(f.id, f.role); err == nil && !f.active {
			err = b.DeactivateFramework(f.id)
		}
		if err == nil && len(f.roles) > 1 {
			err = b.SetFrameworkRoles(f.id, f.roles)
		}
		if err == nil && f.suppressed {
			err = b.Suppress(f.id)
		}
		for r := range f.roff {
			if err == nil && !f.suppressed {
				err = b.SuppressRoles(f.id, []string{r})
			}
		}
		if err == nil && f.hasDemand {
			err = b.SetDemand(f.id, Demand{Task: f.demand, Tasks: int(f.want)})
		}
		if err != nil {
			return nil, fmt.Errorf("reconfigure: framework %q: %w", f.id, err)
		}
		fwMap[f.idx] = b.fwByID[f.id]
	}
	return fwMap, nil
}

// replayAgents registers a's agents in b with the holdings, task counts and
// live filters they have in a.
func (a *Allocator) replayAgents(b *Allocator, fwMap map[int32]int32) error {
	now := a.clock.Now()
	for _, ag := range a.agents {
		if ag == nil {
			continue
		}
		used := map[string]resources.Resources{}
		for _, h := range ag.holds {
			used[a.fws[h.fw].id] = h.res()
		}
		if err := b.AddAgent(ag.id, AgentInfo{Total: ag.total, Attributes: ag.attrs, Used: used}); err != nil {
			return fmt.Errorf("reconfigure: agent %q: %w", ag.id, err)
		}
		if len(ag.pools) > 0 {
			byRole := map[string]resources.Resources{}
			for name, pl := range ag.pools {
				byRole[name] = pl.total
			}
			if err := b.SetReservations(ag.id, byRole); err != nil {
				return fmt.Errorf("reconfigure: agent %q: %w", ag.id, err)
			}
		}
		bg := b.agents[b.agentByID[ag.id]]
		for _, h := range ag.holds {
			n := fwMap[h.fw]
			for i := range bg.holds {
				if bg.holds[i].fw == n {
					bg.holds[i].tasks += h.tasks
				}
			}
			b.fws[n].view.Tasks += h.tasks
		}
		for _, fl := range ag.filters {
			if n, ok := fwMap[fl.fw]; ok && now.Before(fl.until) {
				bg.filters = append(bg.filters, filter{fw: n, until: fl.until, res: fl.res.Clone()})
				b.fws[n].nfilters++
				b.noteFilterAgent(b.fws[n], bg.idx)
			}
		}
	}
	return nil
}

// carryModels gives each of b's policy models the state of a's model of the
// same name, and says which of a's models have no counterpart in b.
func (a *Allocator) carryModels(b *Allocator) (dropped []string) {
	byName := map[string]policy.Model{}
	for _, m := range a.models {
		byName[m.Name()] = m
	}
	kept := map[string]bool{}
	for _, m := range b.models {
		old, ok := byName[m.Name()]
		if !ok {
			continue
		}
		data, err := old.Snapshot()
		if err == nil {
			err = m.Restore(data)
		}
		if err != nil {
			dropped = append(dropped, fmt.Sprintf("policy state %s (%v)", m.Name(), err))
			continue
		}
		kept[m.Name()] = true
	}
	for _, m := range a.models {
		if !kept[m.Name()] {
			dropped = append(dropped, "policy state "+m.Name()+" (the new sorter has no use for it)")
		}
	}
	return dropped
}
