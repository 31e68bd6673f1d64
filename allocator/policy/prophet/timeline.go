package prophet

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
)

// Model is the model of the gang criteria (prophet, tetris-peak): one
// profile.Timeline per agent, sized by the agent's advertised disk_bw and
// net_bw, holding the predicted profiles of the executors placed there,
// and the applications' declarations with their waits and deadlines.
//
// An executor's profile joins its agent's timeline when its resources are
// offered (policy.Offered), anchored at the offer's time, and leaves when its
// cpus or its memory are recovered in full (declined, or the executor
// ended): an executor without either cannot run. The offer, not the
// launch, anchors it because the allocator never sees launches; the
// difference is the framework's accept latency.
type Model struct {
	agents map[string]*Agent
	apps   map[string]*App
	// waitSum and waitN are the waits (declaration to first offer) of the
	// applications placed so far; an arriving application's deadline is
	// DeadlineFactor x their mean after its arrival.
	waitSum     time.Duration
	waitN       int64
	seq         uint64 // names executors uniquely
	factor      float64
	pendingMean bool // deadlines from the pending applications' waits (allocator.DeadlinePending)
	// key is scratch for an executor's key; last and lastApp are the
	// application offered last (offered: a gang's E offers come one after
	// another), forgotten on any other event.
	key     []byte
	last    string
	lastApp *App
}

type Agent struct {
	TL    *profile.Timeline
	execs []Executor
	// Peak is the sum of the placed executors' lifetime peaks per
	// bandwidth, the reservation tetris-peak checks against capacity.
	Peak [profile.NumResources]float64
}

// Executor is one predicted executor on an agent's timeline (its JSON is
// part of the snapshot).
type Executor struct {
	Key       string
	Framework string
	Launch    int64 // Unix ns
	// Anchor is where a stage progress report re-anchored the profile
	// (Unix ns of its predicted launch), if Anchored (progress.go); both
	// are omitted until one did, so older snapshots read the same.
	Anchor    int64 `json:",omitempty"`
	Anchored  bool  `json:",omitempty"`
	Cpus, Mem float64
	Profile   profile.Profile
}

// App is one application's declaration and where it stands.
type App struct {
	Demand   profile.AppDemand
	Arrival  int64 // Unix ns of the declaration
	Deadline int64 // Unix ns; 0 = none (no application had been placed yet)
	Pending  bool  // declared and not yet offered its gang
	// shape is the profile as an exact key (shapeKey), the gang path's key for applications
	// that score alike; computed once, on first use (not snapshotted).
	shape string
	// prep is Demand.Profile prepared for the timelines, shared by every
	// executor of this declaration; computed on first use (not snapshotted).
	prep *profile.Prepared
}

// Prepared is r's profile prepared for the timelines. Demand never changes
// after declare made r (a new declaration makes a new App), so one
// preparation serves all its executors. It is nil only for a profile that
// fails Validate, which the AppDemand signal and restore never let in.
func (r *App) Prepared() *profile.Prepared {
	if r.prep == nil {
		r.prep, _ = profile.Prepare(&r.Demand.Profile)
	}
	return r.prep
}

// Shape is r's profile as an exact key, equal for equal stages: the gang
// path's key for applications that score alike; computed once.
func (r *App) Shape() string {
	if r.shape == "" {
		r.shape = shapeKey(r.Demand.Profile.Stages)
	}
	return r.shape
}

// SharePrepared makes q r's prepared profile unless r has one: the gang
// path hands every application of a shape (equal stages, to the bit) the
// shape's one preparation, so that offered does not prepare each
// declaration anew (nothing writes a Prepared).
func (r *App) SharePrepared(q *profile.Prepared) {
	if r.prep == nil {
		r.prep = q
	}
}

// shapeKey encodes stages exactly (offsets and the bits of the peaks): a
// key equal for equal profiles, as their text was, at a fraction of the
// cost of formatting them, which every declaration pays.
func shapeKey(stages []profile.Stage) string {
	b := make([]byte, 0, 32*len(stages))
	for _, st := range stages {
		b = binary.LittleEndian.AppendUint64(b, uint64(st.Start))
		b = binary.LittleEndian.AppendUint64(b, uint64(st.End))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(st.DiskBW))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(st.NetBW))
	}
	return string(b)
}

var _ policy.Model = (*Model)(nil)

// New is an empty model: an arriving application's deadline is
// deadlineFactor x the mean wait after its arrival, the mean of the
// pending applications' waits if pendingMean, else of the placed ones'.
func New(deadlineFactor float64, pendingMean bool) *Model {
	return &Model{agents: map[string]*Agent{}, apps: map[string]*App{}, factor: deadlineFactor, pendingMean: pendingMean}
}

// Name is the model's record name in a policy snapshot.
const Name = "timelines"

// Of is the timelines model among an allocator's models, nil if its
// criterion keeps none (every sorter but the gang criteria).
func Of(a interface {
	Model(name string) policy.Model
}) *Model {
	m, _ := a.Model(Name).(*Model)
	return m
}

// App is framework's declared application, nil if it has none.
func (m *Model) App(framework string) *App { return m.apps[framework] }

// Agent is agent id's timeline, nil if the model does not know it.
func (m *Model) Agent(id string) *Agent { return m.agents[id] }

// AgentIDs are the agents the model knows, sorted.
func (m *Model) AgentIDs() []string {
	ids := make([]string, 0, len(m.agents))
	for id := range m.agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Executors are the executors on the agent's timeline, oldest placement
// first; read-only.
func (ag *Agent) Executors() []Executor { return ag.execs }

func (m *Model) Name() string { return Name }

func bandwidths(r resources.Resources) (disk, net float64) {
	return r.Scalars[resources.DiskBW].Units(), r.Scalars[resources.NetBW].Units()
}

func (m *Model) Observe(e policy.Event) {
	if e.Kind != policy.Offered {
		m.last, m.lastApp = "", nil
	}
	switch e.Kind {
	case policy.AgentAdded:
		d, n := bandwidths(e.Res)
		if ag := m.agents[e.Agent]; ag != nil {
			// Known only from a restored snapshot: a new leader restores
			// the models before agents re-register, and their running
			// executors must stay on the timeline.
			_ = ag.TL.SetCapacity(d, n) // beyond profile's caps: keep the old
			break
		}
		tl, err := profile.NewTimeline(d, n)
		if err != nil { // capacity beyond profile's caps: score as none
			tl, _ = profile.NewTimeline(0, 0)
		}
		m.agents[e.Agent] = &Agent{TL: tl}
	case policy.AgentUpdated:
		if ag := m.agents[e.Agent]; ag != nil {
			d, n := bandwidths(e.Res)
			_ = ag.TL.SetCapacity(d, n) // beyond profile's caps: keep the old
		}
	case policy.AgentRemoved:
		delete(m.agents, e.Agent)
	case policy.FrameworkRemoved:
		delete(m.apps, e.Framework)
		for _, ag := range m.agents {
			ag.removeWhere(func(x *Executor) bool { return x.Framework == e.Framework })
		}
	case policy.AppDemandSet:
		m.declare(e)
	case policy.Offered:
		m.offered(e)
	case policy.Recovered:
		if ag := m.agents[e.Agent]; ag != nil {
			ag.recover(e.Framework, e.Res)
		}
	case policy.StageProgressObserved:
		if ag := m.agents[e.Agent]; ag != nil {
			ag.progress(e.Framework, e.Progress, e.At)
		}
	}
}

// declare records (or withdraws) an application's demand. Its deadline is
// fixed at arrival from the mean wait so far (GangParams.DeadlineMean says
// whose); before any application has waited at all there is no mean and
// no deadline (the candidate fraction alone then keeps the oldest
// applications in contention). A mean of zero is no mean: 3 x 0 would
// make the application overdue the moment it arrives, and in the Prophet
// experiment every application arriving after the first gangs, placed at
// once, was (534 of 540 executors placed by deadline, seed 1): the
// starvation guard replaced the score.
func (m *Model) declare(e policy.Event) {
	if e.App == nil {
		delete(m.apps, e.Framework)
		return
	}
	r := &App{Demand: CloneDemand(*e.App), Arrival: e.At.UnixNano(), Pending: true}
	if m.pendingMean {
		if mean := m.pendingWait(e.Framework, r.Arrival); mean > 0 {
			r.Deadline = r.Arrival + int64(m.factor*mean)
		}
	} else if m.waitN > 0 && m.waitSum > 0 {
		mean := float64(m.waitSum) / float64(m.waitN)
		r.Deadline = r.Arrival + int64(m.factor*mean)
	}
	m.apps[e.Framework] = r
}

// pendingWait is the mean time the applications other than fw still
// waiting for their gang have waited by now (ns); 0 if none.
func (m *Model) pendingWait(fw string, now int64) float64 {
	var sum float64
	n := 0
	for id, r := range m.apps {
		if r.Pending && id != fw {
			sum += float64(now - r.Arrival)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func (m *Model) offered(e policy.Event) {
	app := m.lastApp
	if app == nil || e.Framework != m.last {
		app = m.apps[e.Framework]
		m.last, m.lastApp = e.Framework, app
	}
	ag := m.agents[e.Agent]
	if app == nil || ag == nil {
		return
	}
	if app.Pending {
		app.Pending = false
		m.waitSum += time.Duration(e.At.UnixNano() - app.Arrival)
		m.waitN++
	}
	m.seq++
	// framework/seq, as one allocation (a concatenation of the formatted
	// number made two)
	m.key = strconv.AppendUint(append(append(m.key[:0], e.Framework...), '/'), m.seq, 10)
	// The executor shares the application's stages and its prepared
	// profile rather than copying them: nothing writes either after
	// declare (TestExecutorsShareProfile), and a copy of each for every
	// executor was most of the model's cost per offer.
	x := Executor{
		Key: string(m.key), Framework: e.Framework, Launch: e.At.UnixNano(),
		Cpus: e.Res.Scalars[resources.CPUs].Units(), Mem: e.Res.Scalars[resources.Mem].Units(),
		Profile: app.Demand.Profile,
	}
	ag.add(x, app.Prepared())
}

// add puts x on the agent's timeline, following q (x.Profile prepared; nil
// prepares it here).
func (ag *Agent) add(x Executor, q *profile.Prepared) {
	if q == nil {
		var err error
		if q, err = profile.Prepare(&x.Profile); err != nil {
			return // an invalid profile never passes the AppDemand signal or restore
		}
	}
	if ag.TL.AddPrepared(x.Key, time.Unix(0, x.anchor()), q) != nil {
		return // keys are unique (m.seq)
	}
	for r := profile.Resource(0); r < profile.NumResources; r++ {
		ag.Peak[r] += ag.Reserve(&x.Profile, r)
	}
	ag.execs = append(ag.execs, x)
}

// recover takes res of framework fw back from its executors on the agent,
// oldest first; an executor whose cpus or memory are all back leaves.
func (ag *Agent) recover(fw string, res resources.Resources) {
	cpus, mem := res.Scalars[resources.CPUs].Units(), res.Scalars[resources.Mem].Units()
	const eps = 1e-9
	for i := range ag.execs {
		x := &ag.execs[i]
		if x.Framework != fw || (cpus <= eps && mem <= eps) {
			continue
		}
		c, mm := min(cpus, x.Cpus), min(mem, x.Mem)
		x.Cpus, x.Mem, cpus, mem = x.Cpus-c, x.Mem-mm, cpus-c, mem-mm
	}
	ag.removeWhere(func(x *Executor) bool { return x.Framework == fw && (x.Cpus <= eps || x.Mem <= eps) })
}

func (ag *Agent) removeWhere(drop func(*Executor) bool) {
	w := 0
	for i := range ag.execs {
		x := &ag.execs[i]
		if !drop(x) {
			ag.execs[w] = *x
			w++
			continue
		}
		ag.TL.Remove(x.Key)
		for r := profile.Resource(0); r < profile.NumResources; r++ {
			ag.Peak[r] -= ag.Reserve(&x.Profile, r)
		}
	}
	clear(ag.execs[w:])
	ag.execs = ag.execs[:w]
}

// Reserve is what tetris-peak reserves of r for an executor: its lifetime
// peak, at most the agent's capacity.
func (ag *Agent) Reserve(p *profile.Profile, r profile.Resource) float64 {
	return min(PeakOf(p, r), ag.TL.Capacity(r))
}

// PeakOf is an executor's lifetime peak of r over its profile.
func PeakOf(p *profile.Profile, r profile.Resource) float64 {
	var v float64
	for _, s := range p.Stages {
		v = max(v, s.Peak(r))
	}
	return v
}

// CloneDemand is d with its own copy of the stages.
func CloneDemand(d profile.AppDemand) profile.AppDemand {
	d.Profile.Stages = append([]profile.Stage(nil), d.Profile.Stages...)
	return d
}

// refresh changes no view: the gang path reads the model directly.
func (m *Model) Refresh(time.Time, policy.Views) bool { return false }

type timelinesSnap struct {
	Agents  []agentSnap
	Apps    []appSnap
	WaitSum int64
	WaitN   int64
	Seq     uint64
}

type agentSnap struct {
	ID            string
	DiskBW, NetBW float64
	Execs         []Executor
}

type appSnap struct {
	Framework string
	App       App
}

// snapshot encodes the model as JSON, agents and applications sorted by id
// so that equal states give equal bytes.
func (m *Model) Snapshot() ([]byte, error) {
	s := timelinesSnap{WaitSum: int64(m.waitSum), WaitN: m.waitN, Seq: m.seq}
	for id, ag := range m.agents {
		s.Agents = append(s.Agents, agentSnap{ID: id, DiskBW: ag.TL.Capacity(profile.Disk), NetBW: ag.TL.Capacity(profile.Net), Execs: ag.execs})
	}
	sort.Slice(s.Agents, func(i, j int) bool { return s.Agents[i].ID < s.Agents[j].ID })
	for fw, r := range m.apps {
		s.Apps = append(s.Apps, appSnap{Framework: fw, App: *r})
	}
	sort.Slice(s.Apps, func(i, j int) bool { return s.Apps[i].Framework < s.Apps[j].Framework })
	return json.Marshal(s)
}

// restore rebuilds every timeline from the snapshot's executors; on any
// error the model is left as it was.
func (m *Model) Restore(data []byte) error {
	var s timelinesSnap
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("timelines snapshot: %w", err)
	}
	agents := make(map[string]*Agent, len(s.Agents))
	for _, a := range s.Agents {
		tl, err := profile.NewTimeline(a.DiskBW, a.NetBW)
		if err != nil {
			return fmt.Errorf("timelines snapshot: agent %q: %w", a.ID, err)
		}
		ag := &Agent{TL: tl}
		for _, x := range a.Execs {
			if err := x.Profile.Validate(); err != nil {
				return fmt.Errorf("timelines snapshot: executor %q: %w", x.Key, err)
			}
			ag.add(x, nil)
		}
		agents[a.ID] = ag
	}
	apps := make(map[string]*App, len(s.Apps))
	for _, a := range s.Apps {
		r := a.App
		if err := r.Demand.Validate(); err != nil {
			return fmt.Errorf("timelines snapshot: application %q: %w", a.Framework, err)
		}
		apps[a.Framework] = &r
	}
	m.agents, m.apps = agents, apps
	m.last, m.lastApp = "", nil
	m.waitSum, m.waitN, m.seq = time.Duration(s.WaitSum), s.WaitN, s.Seq
	return nil
}
