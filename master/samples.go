package master

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/allot-sched/allot/auth"
)

// The UI's charts (a framework's allocation and dominant share, an agent's
// use, the allocator page's shares) are drawn from samples the leader
// keeps, not from what a browser happened to see: a page opened or
// reloaded shows the last hour at once. The leader samples after an
// allocation cycle, at most once per SampleEvery, into a ring of
// SampleSpan/SampleEvery samples; nothing is replicated (a new leader
// starts an empty ring, as the charts of a restarted Mesos master do).

// SamplesPath serves the ring, read-only, oldest sample first.
const SamplesPath = "/api/v1/allot/samples"

const (
	// SampleSpan is how far back the charts reach.
	SampleSpan = time.Hour
	// SampleEvery is the least time between two samples: allocation
	// cycles may run far more often than a chart can show.
	SampleEvery = 5 * time.Second
)

// Sample is the cluster at one moment, as the charts draw it.
type Sample struct {
	At float64 `json:"at"` // Unix seconds
	// Frameworks are by framework id: its allocation and dominant share.
	Frameworks map[string]FrameworkSample `json:"frameworks"`
	// Agents are by agent id: what of each resource is allocated.
	Agents map[string]map[string]float64 `json:"agents"`
}

// FrameworkSample is one framework's share of the cluster at a sample.
type FrameworkSample struct {
	Name      string             `json:"name"`
	Share     float64            `json:"dominant_share"`
	Allocated map[string]float64 `json:"allocated,omitempty"`
}

// sampleRing is a bounded ring of samples; the zero value is empty.
type sampleRing struct {
	buf  []Sample
	next int // where the next sample goes once buf is full
	last time.Time
}

// add keeps s, dropping the oldest once the ring holds a span's worth.
func (r *sampleRing) add(s Sample) {
	capacity := int(SampleSpan / SampleEvery)
	if len(r.buf) < capacity {
		r.buf = append(r.buf, s)
		return
	}
	r.buf[r.next] = s
	r.next = (r.next + 1) % capacity
}

// all is the ring's samples, oldest first.
func (r *sampleRing) all() []Sample {
	out := make([]Sample, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}

// sampleLocked adds a sample of the cluster if SampleEvery has passed
// since the last. Caller holds m.mu.
func (m *Master) sampleLocked() {
	now := m.clock.Now()
	if !m.samples.last.IsZero() && now.Sub(m.samples.last) < SampleEvery {
		return
	}
	m.samples.last = now
	s := Sample{At: float64(now.UnixNano()) / 1e9, Frameworks: map[string]FrameworkSample{}, Agents: map[string]map[string]float64{}}
	for id, fw := range m.frameworks {
		fs := FrameworkSample{Name: fw.info.Name}
		if st, err := m.alloc.Framework(id); err == nil {
			fs.Share, fs.Allocated = st.Share, stateScalars(st.Allocated)
		}
		s.Frameworks[id] = fs
	}
	for id := range m.agents {
		if st, err := m.alloc.Agent(id); err == nil {
			s.Agents[id] = stateScalars(st.Total.Sub(st.Available))
		}
	}
	m.samples.add(s)
}

// handleSamples serves the ring, with only the frameworks the caller may
// view (as /state leaves the others out).
func (m *Master) handleSamples(w http.ResponseWriter, r *http.Request) {
	who := auth.SubjectFrom(r.Context())
	m.mu.Lock()
	doc := struct {
		Span    float64  `json:"span_seconds"`
		Every   float64  `json:"every_seconds"`
		Samples []Sample `json:"samples"`
	}{SampleSpan.Seconds(), SampleEvery.Seconds(), m.samples.all()}
	if m.authz.authorizer != nil {
		seen := map[string]bool{}
		for i, s := range doc.Samples {
			fws := map[string]FrameworkSample{}
			for id, f := range s.Frameworks {
				ok, known := seen[id]
				if !known {
					ok = m.mayViewFrameworkLocked(who, id)
					seen[id] = ok
				}
				if ok {
					fws[id] = f
				}
			}
			doc.Samples[i].Frameworks = fws
		}
	}
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(doc)
}
