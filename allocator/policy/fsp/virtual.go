package fsp

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Model is FSP's virtual fair cluster (papers/fspy-size-based-
// yarn.md, section III.B): a processor-sharing copy of the cluster in
// which every declared job runs from the moment it is declared, so that a
// job's remaining virtual size says when fair sharing would finish it.
//
//   - A job enters when its framework declares it (the JobSize signal), at the
//     event's time, and leaves when its virtual size reaches zero. A job
//     of unknown size whose real job ends (its framework is removed or
//     declares another job) leaves with it, as the paper removes a
//     fair-queue job from the virtual queue when it finishes; a job of
//     known size stays until its virtual size runs out, whether or not
//     the real one has finished (the paper's size-based queue).
//   - VRA (Algorithm 2): the cluster's memory is shared max-min fairly,
//     each job capped at its APB: jobs in increasing order of APB (ties by
//     entry), each getting min(APB, what is left / jobs left). Memory only,
//     as the paper's virtual queue (and YARN's fair scheduler) orders by
//     memory; the cluster's memory is the agents' total.
//   - VSC (Algorithm 3): a job's virtual size shrinks at (virtual resource
//   - AM) MB per second; nothing when its virtual resource is at or
//     below its AM.
//   - Time moves exactly: advance plays the processor-sharing system from
//     the last update to the event's (or cycle's) time, stopping at each
//     departure to re-run VRA, since the survivors' shares grow from then.
//     Every event that changes the virtual cluster advances it first, and
//     refresh advances it to the cycle's time, so keys follow virtual time
//     even in cycles without events.
//   - A declaration for the job a framework already declared updates it:
//     its size becomes the new one with the virtual work already done
//     kept, which is the paper's eq. 10, VS_new = S_pred - (S_init -
//     VS_cur); a job whose new size is already served leaves at once.
//
// The state is the jobs, the agents' memory and the last update time; it
// snapshots to bytes a failover restores (the master replicates them).
type Model struct {
	st virtualState
	// shown are the frameworks whose views the last refresh wrote; not
	// state (a restored model clears the views it no longer knows).
	shown map[string]bool
	// drf shares cpus and memory by DRF instead of memory alone (vra_drf.go);
	// configuration (sorter.FSP.DRF), not state.
	drf bool
}

// vjob is a job in (or, having left, still the head job of its framework
// outside) the virtual cluster. Fields are exported for gob.
type vjob struct {
	FW, Job string
	Known   bool
	Size    float64 // S, MB x s; +Inf for an unknown size without S_init
	Served  float64 // virtual work done, MB x s: the virtual size is Size - Served
	APB, AM float64 // MB
	APBCPUs float64 // cpus (DRF mode; 0: memory alone)
	Seq     uint64  // entry order, VRA's tie-break
	VR      float64 // virtual resource, MB (VRA)
	Left    bool    // its virtual size reached zero
	Finish  int64   // when it left, Unix ns
	Head    bool    // its framework's current job
	Probe   bool    // a probing job: never in the queue (sorter.VirtualProbe)
	Since   int64   // when a probe was declared, Unix ns
}

func (j *vjob) remaining() float64 { return j.Size - j.Served }

// rate is how fast the job's virtual size shrinks, MB.
func (j *vjob) rate() float64 { return math.Max(0, j.VR-j.AM) }

type virtualState struct {
	Started   bool
	Last      int64   // Unix ns of the last advance
	Total     float64 // cluster memory, MB
	Agents    map[string]float64
	CPUs      map[string]float64 // agents' cpus (DRF mode)
	TotalCPUs float64
	Queue     []*vjob // in the virtual cluster, by (APB, Seq)
	Heads     map[string]*vjob
	Seq       uint64
}

// New is an empty virtual cluster; drf shares cpus and memory by DRF
// (sorter.FSP.DRF) instead of memory alone.
func New(drf bool) *Model {
	return &Model{st: emptyVirtualState(), shown: map[string]bool{}, drf: drf}
}

// JobState is what the virtual cluster holds of one job, for inspection.
type JobState struct {
	FW, Job string
	VR      float64 // virtual resource, MB
}

// Queue is the jobs in the virtual cluster, by (APB, entry).
func (m *Model) Queue() []JobState {
	out := make([]JobState, len(m.st.Queue))
	for i, j := range m.st.Queue {
		out[i] = JobState{FW: j.FW, Job: j.Job, VR: j.VR}
	}
	return out
}

// Head is framework fw's current job, nil if it has none.
func (m *Model) Head(fw string) *JobState {
	j := m.st.Heads[fw]
	if j == nil {
		return nil
	}
	return &JobState{FW: j.FW, Job: j.Job, VR: j.VR}
}

func emptyVirtualState() virtualState {
	return virtualState{Agents: map[string]float64{}, CPUs: map[string]float64{}, Heads: map[string]*vjob{}}
}

var _ policy.Model = (*Model)(nil)

func (*Model) Name() string { return "fsp-virtual-cluster" }

func (m *Model) Observe(e policy.Event) {
	switch e.Kind {
	case policy.AgentAdded, policy.AgentUpdated:
		mb, cpus := e.Res.Scalars[resources.Mem].Units(), e.Res.Scalars[resources.CPUs].Units()
		if had, ok := m.st.Agents[e.Agent]; ok && had == mb && m.st.CPUs[e.Agent] == cpus {
			// an agent re-registering with a new leader after a
			// restore: nothing changes, and not splitting the step
			// keeps the virtual sizes bit for bit
			return
		}
		m.advance(e.At.UnixNano())
		m.st.Agents[e.Agent], m.st.CPUs[e.Agent] = mb, cpus
		m.agentsChanged()
	case policy.AgentRemoved:
		if _, ok := m.st.Agents[e.Agent]; !ok {
			return
		}
		m.advance(e.At.UnixNano())
		delete(m.st.Agents, e.Agent)
		delete(m.st.CPUs, e.Agent)
		m.agentsChanged()
	case policy.FrameworkRemoved:
		m.advance(e.At.UnixNano())
		m.detach(e.Framework)
	case policy.JobSizeSet:
		m.advance(e.At.UnixNano())
		m.declare(e.Framework, e.Size, e.At.UnixNano())
	}
}

func (m *Model) agentsChanged() {
	m.st.sumAgents()
	m.vra()
}

// sumAgents sets Total from the agents, in a fixed order: the same sum,
// bit for bit, whatever the map's order.
func (st *virtualState) sumAgents() {
	ids := make([]string, 0, len(st.Agents))
	for id := range st.Agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	st.Total, st.TotalCPUs = 0, 0
	for _, id := range ids {
		st.Total += st.Agents[id]
		st.TotalCPUs += st.CPUs[id]
	}
}

// declare enters a framework's job, or updates it (eq. 10).
func (m *Model) declare(fw string, s policy.JobSize, at int64) {
	size := s.Size
	if !s.Known && size == 0 {
		size = math.Inf(1)
	}
	h := m.st.Heads[fw]
	if s.Probe {
		m.declareProbe(fw, s, at)
		return
	}
	if h != nil && h.Probe {
		m.detach(fw)
		h = nil
	}
	if h == nil || h.Job != s.Job {
		m.detach(fw)
		m.st.Seq++
		h = &vjob{FW: fw, Job: s.Job, Seq: m.st.Seq, Head: true, Left: true}
		m.st.Heads[fw] = h
	}
	if !h.Left {
		m.leaveQueue(h)
	}
	h.Known, h.Size, h.APB, h.AM, h.APBCPUs = s.Known, size, s.APB, s.AM, s.APBCPUs
	if h.remaining() > 0 {
		h.Left = false
		m.joinQueue(h)
	} else if !h.Left {
		h.Left, h.Finish, h.Served = true, at, h.Size
	}
	m.vra()
}

// declareProbe records framework fw as running probing job s: outside
// the virtual cluster, FIFO by when it was first declared.
func (m *Model) declareProbe(fw string, s policy.JobSize, at int64) {
	h := m.st.Heads[fw]
	if h != nil && h.Probe && h.Job == s.Job {
		h.APB = s.APB
		return
	}
	m.detach(fw)
	m.st.Seq++
	m.st.Heads[fw] = &vjob{FW: fw, Job: s.Job, APB: s.APB, Seq: m.st.Seq, Head: true, Left: true, Probe: true, Since: at}
}

// forgetUnknown detaches the jobs of frameworks that were removed after
// the snapshot this model was restored from (RestorePolicies): an
// unknown-size job would otherwise hold a virtual share for good. Nothing
// moves when every framework is known, so a restore stays bit for bit.
func (m *Model) ForgetUnknown(known func(string) bool, now time.Time) {
	var gone []string
	for fw := range m.st.Heads {
		if !known(fw) {
			gone = append(gone, fw)
		}
	}
	if len(gone) == 0 {
		return
	}
	sort.Strings(gone)
	m.advance(now.UnixNano())
	for _, fw := range gone {
		m.detach(fw)
	}
}

var _ policy.Forgetter = (*Model)(nil)

// detach ends the tie between a framework and its job: an unknown-size
// job leaves the virtual cluster with its real job; a known-size one
// stays until its virtual size runs out.
func (m *Model) detach(fw string) {
	h := m.st.Heads[fw]
	if h == nil {
		return
	}
	delete(m.st.Heads, fw)
	h.Head = false
	if !h.Left && !h.Known {
		m.leaveQueue(h)
		h.Left = true
		m.vra()
	}
}

func vjobLess(a, b *vjob) int {
	if a.APB != b.APB {
		if a.APB < b.APB {
			return -1
		}
		return 1
	}
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

func (m *Model) joinQueue(j *vjob) {
	i, _ := slices.BinarySearchFunc(m.st.Queue, j, vjobLess)
	m.st.Queue = slices.Insert(m.st.Queue, i, j)
}

func (m *Model) leaveQueue(j *vjob) {
	if i, ok := slices.BinarySearchFunc(m.st.Queue, j, vjobLess); ok {
		m.st.Queue = slices.Delete(m.st.Queue, i, i+1)
	}
}

// vra is Algorithm 2: max-min fair memory capped at each job's APB (or,
// in DRF mode, its DRF version, vraDRF).
func (m *Model) vra() {
	if m.drf {
		m.vraDRF()
		return
	}
	left := m.st.Total
	n := len(m.st.Queue)
	for i, j := range m.st.Queue {
		j.VR = math.Min(j.APB, math.Max(0, left)/float64(n-i))
		left -= j.VR
	}
}

// departEps is how close to zero a virtual size counts as zero, relative
// to the job's size: what float rounding leaves after an exact step.
const departEps = 1e-9

// advance is VSC from the last update to t (Unix ns), stopping at every
// departure to re-run VRA.
func (m *Model) advance(t int64) {
	if !m.st.Started {
		m.st.Started, m.st.Last = true, t
		return
	}
	for t > m.st.Last {
		dt := float64(t-m.st.Last) / 1e9
		var first *vjob
		for _, j := range m.st.Queue {
			if r := j.rate(); r > 0 && !math.IsInf(j.Size, 1) {
				if d := j.remaining() / r; d < dt {
					dt, first = d, j
				}
			}
		}
		for _, j := range m.st.Queue {
			j.Served += j.rate() * dt
		}
		if first == nil {
			m.st.Last = t
			return
		}
		m.st.Last = min(t, m.st.Last+int64(math.Round(dt*1e9)))
		first.Served = first.Size
		m.depart()
	}
}

// depart takes the jobs whose virtual size reached zero out of the
// virtual cluster, at the last update's time, and re-runs VRA.
func (m *Model) depart() {
	w := 0
	for _, j := range m.st.Queue {
		if !math.IsInf(j.Size, 1) && j.remaining() <= departEps*j.Size {
			j.Served, j.Left, j.Finish = j.Size, true, m.st.Last
			continue
		}
		m.st.Queue[w] = j
		w++
	}
	clear(m.st.Queue[w:])
	m.st.Queue = m.st.Queue[:w]
	m.vra()
}

// refresh brings the virtual cluster to the cycle's time and writes each
// declared framework's view.
func (m *Model) Refresh(now time.Time, v policy.Views) bool {
	m.advance(now.UnixNano())
	if len(m.st.Heads) == 0 && len(m.shown) == 0 {
		return false
	}
	for fw := range m.shown {
		if _, ok := m.st.Heads[fw]; !ok {
			if f := v.Framework(fw); f != nil {
				f.Virtual = sorter.Virtual{}
			}
			delete(m.shown, fw)
		}
	}
	t := now.UnixNano()
	var probes []*vjob
	for fw, h := range m.st.Heads {
		if h.Probe {
			probes = append(probes, h)
			continue
		}
		if f := v.Framework(fw); f != nil {
			f.Virtual = h.view(t)
			m.shown[fw] = true
		}
	}
	m.showProbes(probes, t, v)
	return true
}

// showProbes writes the probes' views: oldest first, each with the memory
// declared by the probes up to and including it.
func (m *Model) showProbes(probes []*vjob, t int64, v policy.Views) {
	slices.SortFunc(probes, func(a, b *vjob) int {
		if a.Since != b.Since {
			return cmpInt64(a.Since, b.Since)
		}
		return cmpInt64(int64(a.Seq), int64(b.Seq))
	})
	var ahead float64
	for _, h := range probes {
		ahead += h.APB
		if f := v.Framework(h.FW); f != nil {
			f.Virtual = sorter.Virtual{State: sorter.VirtualProbe, Remaining: -float64(t-h.Since) / 1e9, Ahead: ahead}
			m.shown[h.FW] = true
		}
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// view is what the sorter reads of j at time t (Unix ns).
func (j *vjob) view(t int64) sorter.Virtual {
	switch {
	case j.Left:
		return sorter.Virtual{State: sorter.VirtualDone, Remaining: -float64(t-j.Finish) / 1e9}
	case j.Known:
		return sorter.Virtual{State: sorter.VirtualKnown, Remaining: j.remaining(), Resource: j.VR, Rate: j.rate()}
	}
	return sorter.Virtual{State: sorter.VirtualUnknown, Remaining: j.remaining(), Resource: j.VR, Rate: j.rate()}
}

// virtualSnapshot is the gob form of the state: pointers flattened, maps
// as sorted lists, so equal states give equal bytes.
type virtualSnapshot struct {
	Started bool
	Last    int64
	Seq     uint64
	Agents  []agentMem
	Jobs    []vjob // the queue in order, then left head jobs by framework
}

type agentMem struct {
	ID   string
	MB   float64
	CPUs float64
}

func (m *Model) Snapshot() ([]byte, error) {
	s := virtualSnapshot{Started: m.st.Started, Last: m.st.Last, Seq: m.st.Seq}
	for id, mb := range m.st.Agents {
		s.Agents = append(s.Agents, agentMem{id, mb, m.st.CPUs[id]})
	}
	sort.Slice(s.Agents, func(i, k int) bool { return s.Agents[i].ID < s.Agents[k].ID })
	for _, j := range m.st.Queue {
		s.Jobs = append(s.Jobs, *j)
	}
	var left []vjob
	for _, h := range m.st.Heads {
		if h.Left {
			left = append(left, *h)
		}
	}
	sort.Slice(left, func(i, k int) bool { return left[i].FW < left[k].FW })
	s.Jobs = append(s.Jobs, left...)
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (m *Model) Restore(data []byte) error {
	var s virtualSnapshot
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return fmt.Errorf("fsp virtual cluster: %w", err)
	}
	st := emptyVirtualState()
	st.Started, st.Last, st.Seq = s.Started, s.Last, s.Seq
	for _, a := range s.Agents {
		st.Agents[a.ID], st.CPUs[a.ID] = a.MB, a.CPUs
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.Head {
			if _, dup := st.Heads[j.FW]; dup {
				return fmt.Errorf("fsp virtual cluster: framework %q has two head jobs", j.FW)
			}
			st.Heads[j.FW] = j
		}
		if !j.Left {
			if n := len(st.Queue); n > 0 && vjobLess(st.Queue[n-1], j) >= 0 {
				return fmt.Errorf("fsp virtual cluster: queue out of order at job %q", j.Job)
			}
			st.Queue = append(st.Queue, j)
		}
	}
	st.sumAgents()
	m.st = st
	return nil
}
