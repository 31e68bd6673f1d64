package master

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api/operator"
)

// Placement feedback: the allocator's account of why a framework gets no
// offers (allocator/placement.go), in /state, in /explain without an
// agent, and as the allot_master_frameworks_unplaceable gauge.

// unplacedIdleCycles is how many cycles without an offer make a
// framework's reason worth showing: one cycle without is ordinary (the
// criterion served others first).
const unplacedIdleCycles = 3

func unplacedOf(u allocator.Unplaced) *operator.Unplaced {
	return &operator.Unplaced{FrameworkID: u.Framework, Reason: string(u.Kind), Dimension: u.Dimension,
		Never: u.Never, IdleCycles: u.Idle, Message: u.Message}
}

// writeWhyNothing answers /explain for a framework alone: why it was
// offered nothing, as text, or as operator.Unplaced with format=json.
// Caller holds no lock; the framework is known and the caller may view it.
func (m *Master) writeWhyNothing(w http.ResponseWriter, r *http.Request, fw string) {
	m.mu.Lock()
	u, err := m.alloc.WhyNothing(fw)
	if err == nil {
		m.gpuUnplacedLocked(&u) // gpus.go
	}
	m.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	switch r.URL.Query().Get("format") {
	case "json":
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(unplacedOf(u))
	case "", "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if u.Kind == allocator.Placeable || u.Kind == allocator.WaitingOrder {
			fmt.Fprintf(w, "framework %s: %s (last offer %d cycles ago)\n", fw, u.Message, u.Idle)
			return
		}
		fmt.Fprintf(w, "framework %s gets no offers: %s (%s; last offer %d cycles ago)\n", fw, u.Message, u.Kind, u.Idle)
	default:
		http.Error(w, "format must be text or json", http.StatusBadRequest)
	}
}

// unplaceableCollector reports allot_master_frameworks_unplaceable by
// reason. Like the state gauges it never queues for m.mu: a scrape that
// finds it held reports the last reading.
type unplaceableCollector struct {
	m    *Master
	last atomic.Pointer[map[string]int]
}

var descUnplaceable = prometheus.NewDesc("allot_master_frameworks_unplaceable",
	"Frameworks offered nothing for at least 3 allocation cycles for a reason of the cluster's, by reason: no_agents, too_big (larger than every agent), quota_limit, no_room, filtered.",
	[]string{"reason"}, nil)

func (c *unplaceableCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descUnplaceable }

func (c *unplaceableCollector) Collect(ch chan<- prometheus.Metric) {
	if c.m.mu.TryLock() {
		n := map[string]int{}
		for _, k := range []allocator.UnplacedKind{allocator.NoAgents, allocator.TooBig, allocator.QuotaLimit, allocator.NoRoom, allocator.Filtered} {
			n[string(k)] = 0
		}
		for _, u := range c.m.alloc.Unplaceable(unplacedIdleCycles) {
			n[string(u.Kind)]++
		}
		c.m.mu.Unlock()
		c.last.Store(&n)
	}
	if n := c.last.Load(); n != nil {
		for reason, v := range *n {
			ch <- prometheus.MustNewConstMetric(descUnplaceable, prometheus.GaugeValue, float64(v), reason)
		}
	}
}
