package prophet

import (
	"fmt"
	"time"

	"github.com/allot-sched/allot/profile"
)

// Diagnostics of Prophet's prediction as the simulated run goes
// (AppConfig.Diagnose): a mirror of the timeline the allocator keeps,
// built from the same predicted profiles anchored at the same launches
// (plus, with re-anchoring on, the same re-anchors), compared step by
// step with what the agents actually do. They measure why Prophet
// over-allocates: whether the timeline it scores against still says what
// the devices are doing.
type appDiag struct {
	// agent-bandwidth-steps: over-allocated in fact; of those, predicted
	// within capacity by the timeline (a miss); predicted over.
	overBW, missBW, predOverBW float64
	// executor-steps: all; predicted in another stage than the actual
	// one; predicted already finished while still running.
	execSteps, stageOff, pastEnd float64
	// agent-steps and the summed demand over capacity per bandwidth.
	agentSteps float64
	load       [2]float64
}

// AppDiagnostics is what the diagnostics measured over a run.
type AppDiagnostics struct {
	// MissFrac is the share of over-allocated agent-bandwidth-steps whose
	// timeline predicted the device within capacity at that moment.
	MissFrac float64
	// PredOverFrac is the share of over-allocated agent-bandwidth-steps
	// that the timeline predicted over capacity too.
	PredOverFrac float64
	// StageOffFrac is the share of executor-steps whose predicted stage
	// (from its anchor) is not the stage it is actually in; PastEndFrac
	// the share predicted finished while still running.
	StageOffFrac, PastEndFrac float64
	// DiskLoad and NetLoad are the mean actual demand over capacity, over
	// all agent-steps: above 1, no placement of what cpu and memory admit
	// can avoid over-allocation on average.
	DiskLoad, NetLoad float64
}

// mirror is a timeline per agent outside the allocator, built as the
// allocator's model builds its own (every launched executor's predicted
// profile, anchored at its launch, re-anchored as the model is): the
// diagnostics compare it with the run, and the framework-side placement
// (apps_fwplace.go) scores against it, as a framework scores against the
// timelines the master publishes.
type mirror struct {
	tls []*profile.Timeline
	key map[*appExec]string
	seq int
}

func newMirror(nodes []AppNode) *mirror {
	m := &mirror{key: map[*appExec]string{}}
	for _, n := range nodes {
		tl, _ := profile.NewTimeline(n.DiskBW, n.NetBW)
		m.tls = append(m.tls, tl)
	}
	return m
}

func (r *appRun) mirrorLaunch(x *appExec) {
	m := r.mirror
	if m == nil {
		return
	}
	m.seq++
	k := fmt.Sprint(m.seq)
	m.key[x] = k
	_ = m.tls[x.agent].Add(k, secs(x.start), &r.apps[x.app].Predicted)
}

func (r *appRun) mirrorExit(x *appExec) {
	m := r.mirror
	if m == nil {
		return
	}
	m.tls[x.agent].Remove(m.key[x])
	delete(m.key, x)
}

// mirrorReanchor mirrors a re-anchor of x at stage k started at t.
func (r *appRun) mirrorReanchor(x *appExec, k int, t float64) {
	if m := r.mirror; m != nil {
		_ = m.tls[x.agent].Reanchor(m.key[x], k, secs(t))
	}
}

func secs(t float64) time.Time { return time.Unix(0, int64(t*1e9)) }

// diagStep compares the timelines at now with the actual demand.
func (r *appRun) diagStep(loads [][2]float64) {
	d := r.diag
	if d == nil {
		return
	}
	tls := r.mirror.tls
	now := secs(r.now)
	for i, n := range r.nodes {
		c := [2]float64{n.DiskBW, n.NetBW}
		d.agentSteps++
		for k, res := range []profile.Resource{profile.Disk, profile.Net} {
			if c[k] > 0 {
				d.load[k] += loads[i][k] / c[k]
			}
			if c[k] <= 0 || loads[i][k] <= c[k] {
				continue
			}
			d.overBW++
			if tls[i].At(now, res) < 0 {
				d.predOverBW++
			} else {
				d.missBW++
			}
		}
	}
	for _, x := range r.execs {
		d.execSteps++
		st := r.apps[x.app].Predicted.Stages
		off := time.Duration((r.now - x.anchor) * 1e9)
		pk := len(st)
		for k, s := range st {
			if off < s.End {
				pk = k
				break
			}
		}
		if pk == len(st) {
			d.pastEnd++
		}
		if pk != x.stage {
			d.stageOff++
		}
	}
}

func (d *appDiag) result() *AppDiagnostics {
	out := &AppDiagnostics{}
	if d.overBW > 0 {
		out.MissFrac, out.PredOverFrac = d.missBW/d.overBW, d.predOverBW/d.overBW
	}
	if d.execSteps > 0 {
		out.StageOffFrac, out.PastEndFrac = d.stageOff/d.execSteps, d.pastEnd/d.execSteps
	}
	if d.agentSteps > 0 {
		out.DiskLoad, out.NetLoad = d.load[0]/d.agentSteps, d.load[1]/d.agentSteps
	}
	return out
}
