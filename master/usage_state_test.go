package master

import (
	"testing"
	"time"

	"github.com/allot-sched/allot/api"
)

// /state's usage_rates carry each executor's throughput beside the host's
// disk busy fraction: what a framework's task backoff reads.
func TestStateShowsExecutorRates(t *testing.T) {
	h := newHarness(t, nil)
	agent, _ := h.agent("cpus:2;mem:4096;disk_bw:100;net_bw:100")
	report := func(busy float64, disk uint64) {
		t.Helper()
		h.clock.Advance(10 * time.Second)
		u := &api.Usage{TimestampUnixNano: h.clock.Now().UnixNano(), DiskBusySeconds: busy, DiskDevices: 1, DiskReadBytes: disk,
			Executors: []*api.ExecutorUsage{{FrameworkId: "fw", ExecutorId: "exec-1", DiskReadBytes: disk / 2, NetMeasured: true, NetTxBytes: disk / 4}}}
		if err := h.m.agentCall(&api.AgentCall{Type: api.AgentCallType_USAGE, AgentId: agent, Usage: u}); err != nil {
			t.Fatal(err)
		}
	}
	report(0, 0)
	report(9.5, 200e6)
	h.m.mu.Lock()
	agents := h.m.stateAgentsLocked()
	h.m.mu.Unlock()
	r := agents[0].Rates
	if r == nil || r.DiskBusy != 0.95 || r.DiskReadMBps != 20 {
		t.Fatalf("usage_rates %+v, want disk busy 0.95 at 20 MB/s", r)
	}
	if len(r.Executors) != 1 {
		t.Fatalf("usage_rates executors %+v, want exec-1's", r.Executors)
	}
	if e := r.Executors[0]; e.FrameworkID != "fw" || e.ExecutorID != "exec-1" || e.DiskReadMBps != 10 || !e.NetMeasured || e.NetTxMBps != 5 {
		t.Errorf("executor rates %+v, want fw/exec-1 reading 10 MB/s, sending 5", e)
	}
}
