package allocator

import (
	"fmt"
	"math"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Recover returns resources a framework held on an agent: a declined offer,
// the unused part of an accepted one, or the resources of finished tasks.
// With a filter, the agent's resources r are not offered to the framework
// again for max(allocation interval, refuse_seconds). Recovering more than
// the framework holds there is an error and changes nothing.
func (a *Allocator) Recover(fwID, agentID string, r resources.Resources, fl *Filter) error {
	return a.recover(fwID, agentID, source{}, r, fl)
}

// RecoverFor is Recover for resources allocated to the framework for
// role, from role pool's reservation ("" for unreserved resources), as a
// master knows them from an offer's Role and Reserved or a task's
// allocation and reservations. Recover and RecoverReserved, which do not
// say the allocation role, take from any of a multi-role framework's.
func (a *Allocator) RecoverFor(fwID, agentID, role, pool string, r resources.Resources, fl *Filter) error {
	if pool == resources.Unreserved {
		pool = ""
	}
	return a.recover(fwID, agentID, source{role: role, pool: pool, strict: true}, r, fl)
}

// source says where recovered resources were allocated from: for which
// allocation role ("" any) and, when strict, from exactly which pool (""
// unreserved); not strict, unreserved parts are taken first.
type source struct {
	role, pool string
	strict     bool
}

// recover is Recover, RecoverReserved and RecoverFor.
func (a *Allocator) recover(fwID, agentID string, src source, r resources.Resources, fl *Filter) error {
	f, err := a.framework(fwID)
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	ag, err := a.agent(agentID)
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	if fl != nil && (math.IsNaN(fl.RefuseSeconds) || math.IsInf(fl.RefuseSeconds, 0)) {
		return fmt.Errorf("recover: refuse_seconds %v is not a finite number", fl.RefuseSeconds)
	}
	r = r.Reservable()
	if src.strict && a.rm {
		if held := a.heldFrom(ag, f, src); !held.Contains(r) {
			return fmt.Errorf("recover %s: framework %q holds only %s %s on agent %q", r, fwID, held, src, agentID)
		}
	}
	hi := -1
	for i := range ag.holds {
		if ag.holds[i].fw == f.idx {
			hi = i
			break
		}
	}
	if hi < 0 {
		if !r.IsEmpty() {
			return fmt.Errorf("recover %s: framework %q holds nothing on agent %q", r, fwID, agentID)
		}
	} else {
		h := &ag.holds[hi]
		held := h.res()
		if !held.Contains(r) {
			return fmt.Errorf("recover %s: framework %q holds only %s on agent %q", r, fwID, held, agentID)
		}
		held = held.Sub(r)
		h.set(held)
		// tasks' worth left: as many of the demand as still fit in what is
		// held, never more than before, none once nothing is held
		oldTasks := h.tasks
		if f.hasDemand {
			if fit := sorter.TaskCapacity(f.demand.Scalars, h.scalars); fit < h.tasks {
				h.tasks = fit
			}
		}
		newTasks := h.tasks
		if held.IsEmpty() {
			newTasks = 0
			ag.holds = append(ag.holds[:hi], ag.holds[hi+1:]...) // h is stale from here
		}
		ag.avail = ag.avail.Add(r)
		ag.view.Available = ag.avail.Scalars
		if a.rm {
			a.takeParts(ag, f, src, r)
		}
		old := a.keysOf(f)
		f.alloc = f.alloc.Sub(resources.Resources{Scalars: r.Scalars, Extra: r.Extra})
		f.view.Tasks -= oldTasks - newTasks
		a.syncView(f)
		a.reposition(f, old)
	}
	if fl != nil && fl.RefuseSeconds > 0 && !r.IsEmpty() {
		d := time.Duration(fl.RefuseSeconds * float64(time.Second))
		if d < a.cfg.AllocationInterval {
			d = a.cfg.AllocationInterval
		}
		ag.filters = append(ag.filters, filter{fw: f.idx, until: a.clock.Now().Add(d), res: r})
		f.nfilters++
		a.noteFilterAgent(f, ag.idx)
	}
	if len(a.models) > 0 {
		a.tell(policy.Event{Kind: policy.Recovered, Framework: fwID, Agent: agentID, Res: r})
	}
	return nil
}
