package sim

import (
	"math"
	"slices"

	allocpolicy "github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/allocator/policy/bandit"
	"github.com/allot-sched/allot/resources"
)

// Interference model (off unless Config.Interference is set; with it off
// the engine runs exactly as before). It is what the co-location bandit
// exploits: containers are not isolated, so jobs on one node compete for
// its cores, disk and network, and some pairs get in each other's way
// less than others (Thamsen et al., section 3).
//
//   - Usage profiles. Each job type (Job.Type) has a phased usage profile:
//     per stage of the job, what one task uses at full speed: CPU in cores
//     (it may exceed the one core it reserves: a container without
//     isolation uses idle cores), disk and network in MB/s. A stage beyond
//     the profile uses its last phase. A job of a type without a profile
//     uses its reserved cpus and its declared disk_bw and net_bw.
//   - Contention. On each node, for cores, disk_bw and net_bw, D is the
//     summed use at full speed of the tasks running there and c the
//     node's capacity; when D > c each task using that resource runs at
//     c / D of full speed, and a task runs at the smallest fraction over
//     the resources it uses (the engine's bandwidth rule, extended to
//     cores). Rates change, and finish times are recomputed, whenever the
//     set of tasks on the node changes.
//   - Measured usage, as an agent would report it: CPU busy fraction
//     min(1, sum of cores used at the tasks' actual rates / cores); disk
//     and network throughput at the actual rates; I/O wait synthesised
//     when disk demand exceeds capacity, as (1 - busy) (1 - c_disk /
//     D_disk): zero while the disk keeps up, tending to all of the idle
//     CPU time as it falls behind (Linux counts idle time with I/O
//     outstanding as iowait).
//   - Samples. Every SampleEvery seconds of virtual time while jobs remain,
//     each node's usage averaged over the interval is given to the
//     allocator as a policy.Usage signal, as the master does with the rates of
//     two successive agent reports. When the bandit learns from progress
//     (bandit.RewardProgress), each node's progress too: the mean over
//     its tasks, weighted by time, of a task's rate over its full speed
//     (the model's full speed is a task's rate alone on an idle node, so
//     this is the co-located rate over the solo rate), by
//     a policy.CoProgress signal.
//
// Calibration: the profiles of ColocationProfiles are set from the paper's
// pairwise measurements only (Tables 2-3, Fig. 4), never from its queue
// results; Calibrate reproduces those pairs on one node and reports the
// ratios beside the paper's.
type Interference struct {
	// Profiles by job type.
	Profiles map[string]Profile
	// SampleEvery is the usage sampling interval in seconds; 0 means 10.
	SampleEvery float64
	// Probe, if set, sees every sample as it is given to the allocator,
	// with the distinct job types running on the node (sorted): the
	// diagnostics of colocation_diag.go measure the reward with it.
	Probe func(agent string, types []string, u allocpolicy.NodeUsage)
}

// Profile is a job type's usage per task, one phase per stage.
type Profile struct{ Phases []Phase }

// Phase is what one task uses at full speed.
type Phase struct {
	CPU               float64 // cores
	DiskMBps, NetMBps float64
}

const (
	resCPU = iota
	resDisk
	resNet
)

// interference is the model's state in a run.
type interference struct {
	m      *Interference
	every  float64
	cur    []allocpolicy.NodeUsage // per agent, instantaneous
	acc    []allocpolicy.NodeUsage // per agent, integrated since the last sample
	last   float64                 // time of the last sample
	queued bool                    // a sample event is in the queue
	phases [][3]float64            // per group: use at full speed (cores, MB/s, MB/s)
	// progress: per agent, the sum over its tasks of rate and the task
	// count, instantaneous (curProg) and integrated (accProg), when the
	// bandit learns from progress (bandit.RewardProgress)
	progress         bool
	curProg, accProg [][2]float64
}

func newInterference(e *engine, m *Interference) *interference {
	st := &interference{m: m, every: m.SampleEvery,
		cur: make([]allocpolicy.NodeUsage, len(e.agents)), acc: make([]allocpolicy.NodeUsage, len(e.agents))}
	if st.every <= 0 {
		st.every = 10
	}
	if e.cfg.Bandit.Reward == bandit.RewardProgress {
		st.progress = true
		st.curProg, st.accProg = make([][2]float64, len(e.agents)), make([][2]float64, len(e.agents))
	}
	st.phases = make([][3]float64, len(e.groups))
	for gi := range e.groups {
		g := &e.groups[gi]
		p, ok := m.Profiles[e.jobs[g.job].job.Type]
		if !ok || len(p.Phases) == 0 {
			d := g.g.Demand
			st.phases[gi] = [3]float64{d[resources.CPUs].Units(), d[resources.DiskBW].Units(), d[resources.NetBW].Units()}
			continue
		}
		ph := p.Phases[min(int(g.stage), len(p.Phases)-1)]
		st.phases[gi] = [3]float64{ph.CPU, ph.DiskMBps, ph.NetMBps}
	}
	return st
}

// capacities of agent a: cores, disk_bw, net_bw.
func capacities(a *simAgent) [3]float64 {
	return [3]float64{a.total[resources.CPUs].Units(), a.total[resources.DiskBW].Units(), a.total[resources.NetBW].Units()}
}

// rerate applies the contention model to every task on agent ai (the
// engine keeps them all in bwRuns while the model is on).
func (st *interference) rerate(e *engine, ai int32) {
	a := &e.agents[ai]
	caps := capacities(a)
	var demand, frac [3]float64
	for _, ri := range a.bwRuns {
		r := &e.runs[ri]
		for k, u := range st.phases[r.group] {
			demand[k] += u * float64(r.count)
		}
	}
	for k := range frac {
		frac[k] = 1
		if caps[k] > 0 && demand[k] > caps[k] {
			frac[k] = caps[k] / demand[k]
		}
	}
	for b := range bwKinds {
		eff := 0.0
		if caps[b+1] > 0 {
			eff = math.Min(caps[b+1], demand[b+1])
		}
		e.clusterE[b] += eff - a.eff[b]
		a.eff[b] = eff
	}
	var used [3]float64
	var prog [2]float64 // sum of task rates, tasks
	for _, ri := range a.bwRuns {
		r := &e.runs[ri]
		rate := 1.0
		for k, u := range st.phases[r.group] {
			if u > 0 && frac[k] < rate {
				rate = frac[k]
			}
		}
		for k, u := range st.phases[r.group] {
			used[k] += u * float64(r.count) * rate
		}
		prog[0] += rate * float64(r.count)
		prog[1] += float64(r.count)
		st.setRate(e, ri, rate)
	}
	st.cur[ai] = nodeUsage(used, demand, caps)
	if st.progress {
		st.curProg[ai] = prog
	}
	st.schedule(e) // tasks run again after a pause: resume sampling
}

// nodeUsage is what an agent would measure with used (at actual rates)
// and demand (at full speed) against caps.
func nodeUsage(used, demand, caps [3]float64) allocpolicy.NodeUsage {
	u := allocpolicy.NodeUsage{DiskReadMBps: used[resDisk], NetRxMBps: used[resNet]}
	if caps[resCPU] > 0 {
		u.CPU = math.Min(1, used[resCPU]/caps[resCPU])
	}
	if caps[resDisk] > 0 && demand[resDisk] > caps[resDisk] {
		u.IOWait = (1 - u.CPU) * (1 - caps[resDisk]/demand[resDisk])
	}
	return u
}

// setRate changes run ri's rate, as the engine's rerateAgent does.
func (st *interference) setRate(e *engine, ri int32, rate float64) {
	r := &e.runs[ri]
	if rate == r.rate {
		return
	}
	r.work = math.Max(0, r.work-r.rate*(e.now-r.since))
	r.since, r.rate = e.now, rate
	r.version++
	e.q.push(qItem{t: e.now + r.work/rate, kind: evFinish, ref: ri, ver: r.version})
}

// accrue integrates every node's usage from e.now to t.
func (st *interference) accrue(e *engine, t float64) {
	dt := t - e.now
	if dt <= 0 {
		return
	}
	for i := range st.cur {
		c, a := &st.cur[i], &st.acc[i]
		a.CPU += c.CPU * dt
		a.IOWait += c.IOWait * dt
		a.DiskReadMBps += c.DiskReadMBps * dt
		a.NetRxMBps += c.NetRxMBps * dt
	}
	for i := range st.curProg {
		st.accProg[i][0] += st.curProg[i][0] * dt
		st.accProg[i][1] += st.curProg[i][1] * dt
	}
}

// sample gives every node's mean usage since the last sample to the
// allocator and schedules the next sample while jobs remain.
func (st *interference) sample(e *engine) {
	if dt := e.now - st.last; dt > 0 {
		e.clock.T = e.at(e.now)
		for i := range st.acc {
			a := st.acc[i]
			u := allocpolicy.NodeUsage{CPU: math.Min(1, a.CPU/dt), IOWait: math.Min(1, a.IOWait/dt),
				DiskReadMBps: a.DiskReadMBps / dt, NetRxMBps: a.NetRxMBps / dt}
			must(e.al.Observe(allocpolicy.Usage{Agent: e.agents[i].id, Rates: u}))
			if st.m.Probe != nil {
				st.m.Probe(e.agents[i].id, st.typesOn(e, i), u)
			}
			if st.progress && st.accProg[i][1] > 0 {
				// the mean task's rate over its full speed: the model's
				// full speed is a task's solo rate
				must(e.al.Observe(allocpolicy.CoProgress{Agent: e.agents[i].id, Progress: st.accProg[i][0] / st.accProg[i][1]}))
			}
			if st.progress {
				st.accProg[i] = [2]float64{}
			}
			st.acc[i] = allocpolicy.NodeUsage{}
		}
	}
	st.last = e.now
	st.queued = false
	if e.running > 0 || e.q.len() > 0 {
		st.schedule(e) // else nothing can change: rerate resumes sampling
	}
}

// schedule queues the next sample unless one is queued or the run is over.
func (st *interference) schedule(e *engine) {
	if !st.queued && e.jobsDone < len(e.jobs) {
		st.queued = true
		e.q.push(qItem{t: e.now + st.every, kind: evSample})
	}
}

// typesOn returns the distinct job types running on agent ai, sorted.
func (st *interference) typesOn(e *engine, ai int) []string {
	var ts []string
	for _, ri := range e.agents[ai].bwRuns {
		t := e.jobs[e.groups[e.runs[ri].group].job].job.Type
		if !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	return ts
}
