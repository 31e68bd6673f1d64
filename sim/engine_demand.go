package sim

import (
	"github.com/allot-sched/allot/allocator"
	allocpolicy "github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/resources"
)

// The frameworks' side of the engine: jobs arrive and their stages become
// ready, and each framework tells the allocator what it wants (sync).

// arrive makes a job's first stage ready.
func (e *engine) arrive(ji int32) {
	j := &e.jobs[ji]
	j.arrived, j.arrive = true, e.now
	f := e.fws[j.fw]
	if !f.alive {
		if err := e.al.AddFramework(f.id, f.role); err != nil {
			panic(err) // ids are unique by construction
		}
		f.alive = true
		// a fresh framework wants nothing until sync declares its demand
		f.suppressed = false
		f.want = -1
	}
	if j.job.Type != "" {
		must(e.al.Observe(allocpolicy.JobType{Framework: f.id, Type: j.job.Type}))
	}
	if f.active++; f.active == 1 {
		f.activeAt = len(e.activeFws)
		e.activeFws = append(e.activeFws, f.idx)
	}
	if e.sizes != nil {
		e.sizes.arrived(e, ji)
	}
	if j.amGroup >= 0 {
		e.admitAM(ji)
		return
	}
	e.readyStage(ji)
}

func (e *engine) readyStage(ji int32) {
	j := &e.jobs[ji]
	f := e.fws[j.fw]
	j.left = 0
	for gi := range j.job.Stages[j.stage].Groups {
		idx := j.firstGroup + int32(gi)
		for s := 0; s < j.stage; s++ {
			idx += int32(len(j.job.Stages[s].Groups))
		}
		g := &e.groups[idx]
		g.ready = true
		g.pending = int64(g.g.Tasks)
		j.left += g.pending
		f.ready = append(f.ready, idx)
		f.pending += g.pending
	}
	e.queueSync(f)
}

func (e *engine) queueSync(f *simFramework) {
	if !f.syncQueued {
		f.syncQueued = true
		e.syncQ = append(e.syncQ, f.idx)
	}
}

// settle finishes the work an event or a cycle leaves: new bandwidth
// rates, and each touched framework's answer to the allocator.
func (e *engine) settle() {
	for _, ai := range e.rerate {
		e.rerateMark[ai] = false
		e.rerateAgent(ai)
	}
	e.rerate = e.rerate[:0]
	for _, fi := range e.syncQ {
		e.sync(e.fws[fi])
	}
	e.syncQ = e.syncQ[:0]
}

// sync tells the allocator what framework f wants now: nothing (suppress,
// or unregister when its last job is done), or its head-of-line demand.
func (e *engine) sync(f *simFramework) {
	f.syncQueued = false
	if !f.alive {
		return
	}
	if f.jobsLeft == 0 {
		e.setWanting(f, false)
		must(e.al.RemoveFramework(f.id))
		f.alive = false
		return
	}
	if f.pending == 0 {
		if !f.suppressed {
			must(e.al.Suppress(f.id))
			f.suppressed = true
		}
		e.setWanting(f, false)
		return
	}
	if e.cfg.Mode == allocator.Characterized {
		shape, n := e.head(f)
		if shape != f.declared || n != f.want {
			must(e.al.SetDemand(f.id, allocator.Demand{Task: resources.Resources{Scalars: shape}, Tasks: int(n)}))
			f.declared, f.want = shape, n
			e.markDirty()
		}
	}
	if f.suppressed {
		must(e.al.Revive(f.id))
		f.suppressed = false
		e.markDirty()
	}
	e.setWanting(f, true)
}

// setWanting keeps e.wanting, the number of frameworks with ready work
// that take offers, which decides whether a cycle is worth running.
func (e *engine) setWanting(f *simFramework, w bool) {
	if f.counted == w {
		return
	}
	f.counted = w
	if w {
		e.wanting++
		e.markDirty()
	} else {
		e.wanting--
	}
}

// head returns the reservable shape of f's oldest ready group and how many
// ready tasks have that shape.
func (e *engine) head(f *simFramework) (resources.Vector, int64) {
	e.compactReady(f)
	var shape resources.Vector
	var n int64
	found := false
	for _, gi := range f.ready[f.readyHead:] {
		g := &e.groups[gi]
		if g.pending == 0 {
			continue
		}
		if !found {
			shape, found = g.res, true
		}
		if g.res == shape {
			n += g.pending
		}
	}
	return shape, n
}

// compactReady drops launched-out groups from the front of f's queue, and
// from the middle once they are the majority.
func (e *engine) compactReady(f *simFramework) {
	for f.readyHead < len(f.ready) && e.groups[f.ready[f.readyHead]].pending == 0 {
		f.readyHead++
	}
	if f.readyHead == len(f.ready) {
		f.ready, f.readyHead = f.ready[:0], 0
		return
	}
	if f.readyHead > 32 && f.readyHead*2 > len(f.ready) {
		n := copy(f.ready, f.ready[f.readyHead:])
		f.ready, f.readyHead = f.ready[:n], 0
	}
}
