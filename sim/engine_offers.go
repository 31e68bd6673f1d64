package sim

import (
	"fmt"
	"math"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// The allocator's side of the engine: a cycle's offers are answered,
// tasks launch and finish, and the contention model sets their rates.

// cycle runs one allocation cycle and answers its offers.
func (e *engine) cycle() error {
	e.clock.T = e.at(e.now)
	e.dirty = false
	e.lastCycle = e.now
	offers := e.al.Allocate().Offers
	e.m.cycles++
	launched := false
	for i := range offers {
		o := &offers[i]
		e.m.offers++
		fi, ok := e.fwIx[o.Framework]
		ai, ok2 := e.agentIx[o.Agent]
		if !ok || !ok2 {
			return fmt.Errorf("allocator offered %s of %q to %q: unknown to the simulator", o.Resources, o.Agent, o.Framework)
		}
		n, err := e.answer(e.fws[fi], ai, o)
		if err != nil {
			return err
		}
		launched = launched || n > 0
	}
	e.settle()
	if e.cfg.Check {
		if err := e.check(); err != nil {
			return fmt.Errorf("t=%.3fs, after cycle %d: %w", e.now, e.m.cycles, err)
		}
	}
	// Livelock guard: with nothing running and nothing left to arrive, a
	// cycle that launches nothing can only be followed by more of the same
	// (validated tasks fit on an idle node, so this means a policy quirk).
	if e.running == 0 && !launched && !e.q.hasArrival() {
		if e.idle++; e.idle > 10000 {
			return e.stuck()
		}
	} else {
		e.idle = 0
	}
	return nil
}

// answer is framework f's reply to offer o on agent ai: launch what fits,
// decline the rest with a filter. It returns the tasks launched.
func (e *engine) answer(f *simFramework, ai int32, o *allocator.Offer) (int64, error) {
	left := o.Resources.Reservable()
	pools := offerPools(o)
	var launched int64
	var only *resources.Vector
	if o.Tasks > 0 {
		// a characterized offer: tasks of the declared shape
		only = &f.declared
		if f.want > 0 {
			f.want -= int64(o.Tasks)
			if f.want < 0 {
				f.want = 0
			}
		}
	}
	e.compactReady(f)
	for _, gi := range f.ready[f.readyHead:] {
		g := &e.groups[gi]
		if g.pending == 0 || (only != nil && g.res != *only) {
			continue
		}
		k := sorter.TaskCapacity(g.res, left.Scalars)
		if k > g.pending {
			k = g.pending
		}
		if k <= 0 {
			continue
		}
		if err := e.launch(f, ai, gi, k, takePools(pools, g.res.Times(k))); err != nil {
			return launched, err
		}
		left.Scalars = left.Scalars.Sub(g.res.Times(k))
		launched += k
		if left.Scalars == (resources.Vector{}) {
			break
		}
	}
	if !left.IsEmpty() {
		var fl *allocator.Filter
		if e.cfg.RefuseSeconds > 0 {
			fl = &allocator.Filter{RefuseSeconds: e.cfg.RefuseSeconds}
			if exp := e.now + math.Max(e.cfg.RefuseSeconds, e.iv); exp != e.lastFilter {
				e.lastFilter = exp
				e.q.push(qItem{t: exp, kind: evFilter})
			}
		}
		if err := e.recoverParts(f, &e.agents[ai], left.Scalars, pools, fl); err != nil {
			return launched, fmt.Errorf("decline: %w", err)
		}
		e.m.declines++
		e.markDirty()
	}
	e.queueSync(f)
	return launched, nil
}

// launch starts k tasks of group gi on agent ai, parts of them on the
// agent's reservation pools.
func (e *engine) launch(f *simFramework, ai int32, gi int32, k int64, parts []poolPart) error {
	g := &e.groups[gi]
	a := &e.agents[ai]
	need := g.g.Demand.Times(k)
	if !reservable(a.total).Contains(reservable(a.used.Add(need))) {
		return fmt.Errorf("t=%.3fs: over-allocation: %d tasks of %s on agent %q would use %s of %s",
			e.now, k, fmtVec(g.g.Demand), a.id, fmtVec(reservable(a.used.Add(need))), fmtVec(reservable(a.total)))
	}
	a.used = a.used.Add(need)
	f.used = f.used.Add(g.res.Times(k))
	e.roleUse(f, g.res.Times(k), +1)
	e.clusterU = e.clusterU.Add(g.res.Times(k))
	g.pending -= k
	f.pending -= k
	e.running += k
	j := &e.jobs[g.job]
	if math.IsNaN(j.start) {
		j.start = e.now
	}
	ri := e.newRun()
	r := &e.runs[ri]
	*r = simRun{group: gi, agent: ai, count: int32(k), slot: -1, work: g.g.Duration, rate: 1, since: e.now, version: r.version + 1, live: true}
	e.usePools(ri, ai, parts)
	if ((g.bw && a.bwCap) || e.inter != nil) && !g.am {
		r.slot = int32(len(a.bwRuns))
		a.bwRuns = append(a.bwRuns, ri)
		e.queueRerate(ai)
	}
	e.q.push(qItem{t: e.now + r.work, kind: evFinish, ref: ri, ver: r.version})
	e.observe(EventLaunch, g, a, int(k))
	return nil
}

func (e *engine) newRun() int32 {
	if n := len(e.freeRun); n > 0 {
		ri := e.freeRun[n-1]
		e.freeRun = e.freeRun[:n-1]
		return ri
	}
	e.runs = append(e.runs, simRun{})
	return int32(len(e.runs) - 1)
}

func (e *engine) queueRerate(ai int32) {
	if !e.rerateMark[ai] {
		e.rerateMark[ai] = true
		e.rerate = append(e.rerate, ai)
	}
}

// finishRun ends a run: its tasks are done and their resources return.
func (e *engine) finishRun(ri int32) error {
	if e.groups[e.runs[ri].group].am {
		e.amStarted(ri)
		return nil
	}
	g, err := e.release(ri)
	if err != nil {
		return err
	}
	j := &e.jobs[g.job]
	if j.left -= int64(e.runs[ri].count); j.left == 0 {
		if j.stage+1 < len(j.job.Stages) {
			j.stage++
			e.readyStage(g.job)
		} else {
			e.jobDone(g.job)
		}
	}
	return nil
}

// release ends run ri: its tasks are done and their resources return.
func (e *engine) release(ri int32) (*simGroup, error) {
	r := &e.runs[ri]
	g := &e.groups[r.group]
	a := &e.agents[r.agent]
	j := &e.jobs[g.job]
	f := e.fws[j.fw]
	k := int64(r.count)
	a.used = a.used.Sub(g.g.Demand.Times(k))
	f.used = f.used.Sub(g.res.Times(k))
	e.roleUse(f, g.res.Times(k), -1)
	e.clusterU = e.clusterU.Sub(g.res.Times(k))
	e.running -= k
	e.finished += k
	if r.slot >= 0 {
		last := a.bwRuns[len(a.bwRuns)-1]
		a.bwRuns[r.slot] = last
		e.runs[last].slot = r.slot
		a.bwRuns = a.bwRuns[:len(a.bwRuns)-1]
		e.queueRerate(r.agent)
	}
	r.live = false
	e.freeRun = append(e.freeRun, ri)
	if err := e.recoverParts(f, a, g.res.Times(k), e.releasePools(ri, r.agent), nil); err != nil {
		return nil, fmt.Errorf("t=%.3fs: recovering finished tasks: %w", e.now, err)
	}
	if err := e.tryReserve(r.agent); err != nil {
		return nil, err
	}
	e.observe(EventFinish, g, a, int(k))
	e.markDirty()
	return g, nil
}

func (e *engine) jobDone(ji int32) {
	j := &e.jobs[ji]
	j.done, j.finish = true, e.now
	e.jobsDone++
	e.endAM(ji)
	f := e.fws[j.fw]
	f.jobsLeft--
	if f.active--; f.active == 0 {
		last := e.activeFws[len(e.activeFws)-1]
		e.activeFws[f.activeAt] = last
		e.fws[last].activeAt = f.activeAt
		e.activeFws = e.activeFws[:len(e.activeFws)-1]
		f.activeAt = -1
	}
	if e.sizes != nil {
		e.sizes.finished(e, ji)
	}
	e.queueSync(f)
	for _, n := range j.after {
		e.q.push(qItem{t: math.Max(e.now, e.jobs[n].job.Submit), kind: evArrive, ref: n})
	}
}

// rerateAgent applies the contention model to the bandwidth users of an
// agent after the set of its running tasks changed.
func (e *engine) rerateAgent(ai int32) {
	if e.inter != nil {
		e.inter.rerate(e, ai) // interference.go
		return
	}
	a := &e.agents[ai]
	var frac [2]float64
	for b, k := range bwKinds {
		frac[b] = 1
		c, d := a.total[k].Units(), a.used[k].Units()
		if c > 0 && d > c {
			frac[b] = c / d
		}
		eff := 0.0
		if c > 0 {
			eff = math.Min(c, d)
		}
		e.clusterE[b] += eff - a.eff[b]
		a.eff[b] = eff
	}
	for _, ri := range a.bwRuns {
		r := &e.runs[ri]
		d := e.groups[r.group].g.Demand
		rate := 1.0
		for b, k := range bwKinds {
			if d[k] > 0 && frac[b] < rate {
				rate = frac[b]
			}
		}
		if rate == r.rate {
			continue
		}
		r.work = math.Max(0, r.work-r.rate*(e.now-r.since))
		r.since, r.rate = e.now, rate
		r.version++
		e.q.push(qItem{t: e.now + r.work/rate, kind: evFinish, ref: ri, ver: r.version})
	}
}

func (e *engine) observe(kind EventKind, g *simGroup, a *simAgent, k int) {
	if e.cfg.Observer == nil {
		return
	}
	j := &e.jobs[g.job]
	e.cfg.Observer.Observe(Event{Kind: kind, Time: e.now, Job: j.job.ID, Framework: j.job.Framework, Agent: a.id,
		Stage: int(g.stage), Group: int(g.index), Tasks: k, Demand: g.g.Demand, AgentUsed: a.used, AgentTotal: a.total})
}
