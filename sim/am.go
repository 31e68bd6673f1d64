package sim

import (
	"math"

	"github.com/allot-sched/allot/resources"
)

// Application masters. A YARN job runs its application master (AM) in a
// container of its own before it asks for any task container, and holds
// that container until the job ends; the AM does no work the job is sized
// by (the FSPY paper subtracts it in VSC). A Job with a non-zero AM is run
// that way:
//
//   - at arrival only the AM is ready: one task of shape AM, placed by the
//     policy like any other container (a new job under fair sharing holds
//     nothing, so its AM goes first);
//   - AMStartup seconds after its launch (the master's JVM starting) the
//     job's first stage becomes ready; the AM's container stays allocated;
//   - when the job's last task finishes, the AM's container returns.
//
// Admission (YARN's maxAMShare). A job's AM is made ready only while the
// AMs ready or running hold at most Config.AMShare of the cluster's memory
// with it (the first AM always fits); other jobs wait, in arrival order,
// and are admitted as AMs end. Without the cap, a policy that grants every
// new job its AM first (fair sharing does: the new job holds nothing) can
// fill the cluster with AMs whose tasks never fit, which YARN's fair
// scheduler prevents the same way (maxAMShare, default 0.5 of the queue's
// fair share: the cluster, for the one queue here). Among waiting jobs the
// fair scheduler serves the earliest started (they all hold nothing); the
// FSPY paper does not say how its scheduler admits AMs, so every policy
// admits in arrival order and differs only in what it does with the
// containers of admitted jobs.
//
// The AM counts among the engine's tasks (running, finished) so progress
// and the consistency check see its container, but not among the job's
// Tasks or in its size.

// DefaultAMShare is YARN's fair scheduler's default maxAMShare.
const DefaultAMShare = 0.5

// amAdmission is the engine's AM admission state.
type amAdmission struct {
	held float64 // MB of AMs admitted and not ended
	wait []int32 // jobs waiting for admission, oldest first
	head int
}

// admitAM admits job ji's AM or queues it.
func (e *engine) admitAM(ji int32) {
	e.ams.wait = append(e.ams.wait, ji)
	e.admitWaiting()
}

// admitWaiting admits waiting AMs, oldest first, while they fit.
func (e *engine) admitWaiting() {
	share := e.cfg.AMShare
	if share == 0 {
		share = DefaultAMShare
	}
	limit := math.Inf(1)
	if share > 0 {
		limit = share * e.total[resources.Mem].Units()
	}
	a := &e.ams
	for a.head < len(a.wait) {
		ji := a.wait[a.head]
		mb := e.jobs[ji].job.AM[resources.Mem].Units()
		if a.held > 0 && a.held+mb > limit {
			break
		}
		a.held += mb
		a.head++
		e.readyAM(ji)
	}
	if a.head == len(a.wait) {
		a.wait, a.head = a.wait[:0], 0
	}
}

// addAM gives job ji its AM group, if it has one.
func (e *engine) addAM(ji int32) {
	j := &e.jobs[ji]
	j.amGroup, j.amRun = -1, -1
	if j.job.AM == (resources.Vector{}) {
		return
	}
	g := &Group{Tasks: 1, Duration: j.job.AMStartup, Demand: j.job.AM}
	j.amGroup = int32(len(e.groups))
	e.groups = append(e.groups, simGroup{g: g, job: ji, index: -1, am: true, res: reservable(g.Demand)})
	e.total64++
}

// readyAM makes job ji's AM ready to be placed.
func (e *engine) readyAM(ji int32) {
	j := &e.jobs[ji]
	f := e.fws[j.fw]
	g := &e.groups[j.amGroup]
	g.ready, g.pending = true, 1
	f.ready = append(f.ready, j.amGroup)
	f.pending++
	e.queueSync(f)
}

// amStarted: the AM of run ri is up; its job's first stage becomes ready
// and the AM keeps its container.
func (e *engine) amStarted(ri int32) {
	ji := e.groups[e.runs[ri].group].job
	e.jobs[ji].amRun = ri
	e.readyStage(ji)
}

// endAM returns job ji's AM container when the job is done.
func (e *engine) endAM(ji int32) {
	j := &e.jobs[ji]
	if j.amRun < 0 {
		return
	}
	ri := j.amRun
	j.amRun = -1
	if _, err := e.release(ri); err != nil {
		panic(err) // the allocator granted this container: it takes it back
	}
	e.ams.held -= j.job.AM[resources.Mem].Units()
	e.admitWaiting()
}

// YARNAMMemMB is a MapReduce AM's container on YARN: Hadoop 2's default
// yarn.app.mapreduce.am.resource.mb (1536 MB) rounded up, as YARN's
// schedulers normalize requests, to a multiple of the 1024 MB allocation
// increment.
const YARNAMMemMB = 2048
