package master

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"
)

// The ring keeps one sample per SampleEvery whatever the cycle rate, an
// hour of them at most, oldest first, and serves them with the
// frameworks' shares.
func TestSamplesRing(t *testing.T) {
	h := newHarness(t, nil)
	agent, _ := h.agent("cpus:4;mem:4096")
	fw := h.framework("charted")
	h.allocate()
	h.allocate() // the same moment: no second sample
	h.m.mu.Lock()
	n := len(h.m.samples.all())
	h.m.mu.Unlock()
	if n != 1 {
		t.Fatalf("two cycles at one moment gave %d samples, want 1", n)
	}
	capacity := int(SampleSpan / SampleEvery)
	for i := 0; i < capacity+5; i++ {
		h.clock.Advance(SampleEvery)
		h.allocate()
	}
	rec := httptest.NewRecorder()
	h.m.handleSamples(rec, httptest.NewRequest("GET", SamplesPath, nil))
	var doc struct {
		Samples []Sample `json:"samples"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Samples) != capacity {
		t.Fatalf("%d samples after more than an hour, want %d", len(doc.Samples), capacity)
	}
	first, last := doc.Samples[0], doc.Samples[len(doc.Samples)-1]
	if span := time.Duration((last.At - first.At) * 1e9); span.Round(time.Second) != SampleSpan-SampleEvery {
		t.Errorf("samples span %v, want %v (oldest first)", span, SampleSpan-SampleEvery)
	}
	f, ok := last.Frameworks[fw.id]
	if !ok || f.Name != "charted" || f.Share <= 0 || f.Allocated["cpus"] != 4 {
		t.Errorf("the last sample's framework: %+v (present %v), want charted holding the offered cpus", f, ok)
	}
	if last.Agents[agent]["cpus"] != 4 {
		t.Errorf("the last sample's agent: %v, want 4 cpus allocated", last.Agents[agent])
	}
}
