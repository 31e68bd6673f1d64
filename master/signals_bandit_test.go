package master

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/allocator/policy/bandit"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/sorter"
)

// typedFramework subscribes a framework labelled with job type typ that
// requests tasks of one cpu.
func (h *harness) typedFramework(name, typ string, tasks float64) *fakeFramework {
	h.t.Helper()
	s := newFakeStream(h.t, api.JSON)
	ft := 60.0
	info := mesos.FrameworkInfo{User: "test", Name: name, FailoverTimeout: &ft,
		Labels: &mesos.Labels{Labels: []mesos.Label{{Key: JobTypeLabel, Value: &typ}}}}
	id, sid, err := h.m.admitFramework("", info, nil, s.Stream)
	if err != nil {
		h.t.Fatal(err)
	}
	s.nextEvent(h.t, scheduler.Event_SUBSCRIBED)
	fw := &fakeFramework{id: id, streamID: sid, fakeStream: s}
	rq := []mesos.Resource{scalarRes("cpus", 1), scalarRes("mem", 100), scalarRes("tasks", tasks)}
	if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_REQUEST,
		Request: &scheduler.Call_Request{Requests: []mesos.Request{{Resources: rq}}}}); err != nil {
		h.t.Fatal(err)
	}
	return fw
}

// TestUsageReachesAllocatorAsRates: successive usage reports of an agent
// become rates (api.RatesBetween) shown in /state and observed by the
// allocator, whose co-location bandit learns from them exactly as from the
// same rates given directly; the job type comes from the FrameworkInfo
// label.
func TestUsageReachesAllocatorAsRates(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Sorter, c.Mode = "bandit", "characterized"
		c.Bandit = bandit.Config{Step: 1, WaitScale: -1}
	})
	agent, _ := h.agent("cpus:2;mem:4096;disk_bw:100;net_bw:100")
	var reports []*api.Usage
	report := func(total, idle, iowait float64, disk, net uint64) {
		t.Helper()
		h.clock.Advance(10 * time.Second)
		u := &api.Usage{TimestampUnixNano: h.clock.Now().UnixNano(), CpusTotalSeconds: total, CpusIdleSeconds: idle,
			CpusIowaitSeconds: iowait, DiskReadBytes: disk, NetTxBytes: net}
		reports = append(reports, u)
		if err := h.m.agentCall(&api.AgentCall{Type: api.AgentCallType_USAGE, AgentId: agent, Usage: u}); err != nil {
			t.Fatal(err)
		}
	}
	run := h.typedFramework("run", "A", 1)
	h.offer(run)
	b, c := h.typedFramework("b", "B", 1), h.typedFramework("c", "C", 1)
	report(0, 0, 0, 0, 0) // a baseline: no rate yet
	h.allocate()          // draws b or c beside run's A
	chosen := "B"
	if h.outstanding(c) == 1 {
		chosen = "C"
	} else if h.outstanding(b) != 1 {
		t.Fatal("neither b nor c got the agent's last cpu")
	}
	report(40, 30, 2, 100e6, 10e6) // the interval began before the draw: not credited
	report(80, 45, 10, 900e6, 50e6)
	report(120, 60, 11, 1000e6, 300e6)

	ref := sorter.NewPreferences(1, sorter.BaselinePerRow)
	for i := 2; i < len(reports); i++ {
		r, err := api.RatesBetween(reports[i-1], reports[i])
		if err != nil {
			t.Fatal(err)
		}
		ref.Update([]string{"A"}, []string{"B", "C"}, chosen, sorter.Goodness(sorter.NodeUsage{CPU: r.CPU, IOWait: r.IOWait,
			DiskReadMBps: r.DiskReadMBps, NetTxMBps: r.NetTxMBps, DiskBW: 100, NetBW: 100}))
	}
	got := h.exportedRow("A")
	h.m.mu.Lock()
	agents := h.m.stateAgentsLocked()
	fws := h.m.stateFrameworksLocked()
	h.m.mu.Unlock()
	for _, q := range []string{"B", "C"} {
		if want := ref.H("A", q); want == 0 || math.Abs(got[q]-want) > 1e-12 {
			t.Errorf("H(%s|A) = %v, want %v (learned from the reports' rates)", q, got[q], want)
		}
	}

	last, _ := api.RatesBetween(reports[2], reports[3])
	if len(agents) != 1 || agents[0].Rates == nil {
		t.Fatalf("/state agents %+v: want usage_rates", agents)
	}
	if r := agents[0].Rates; r.CPU != last.CPU || r.IOWait != last.IOWait || r.NetTxMBps != last.NetTxMBps || r.Seconds != 10 {
		t.Errorf("/state usage_rates %+v, want the last interval's %+v", r, last)
	}
	types := map[string]string{}
	for _, f := range fws {
		types[f.Name] = f.JobType
	}
	if types["run"] != "A" || types["b"] != "B" || types["c"] != "C" {
		t.Errorf("/state job types %v", types)
	}
}

// exportedRow is the allocator's learned preferences in running type r's
// row, by queued type.
func (h *harness) exportedRow(r string) map[string]float64 {
	h.t.Helper()
	h.m.mu.Lock()
	exp, err := bandit.Of(h.m.alloc).ExportPreferences()
	h.m.mu.Unlock()
	if err != nil {
		h.t.Fatal(err)
	}
	var w struct {
		Types []string
		H     [][]float64
	}
	if err := json.Unmarshal(exp, &w); err != nil {
		h.t.Fatal(err)
	}
	row := map[string]float64{}
	for i, rt := range w.Types {
		for j, q := range w.Types {
			if rt == r {
				row[q] = w.H[i][j]
			}
		}
	}
	return row
}
