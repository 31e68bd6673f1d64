package master

import (
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

// appRequest is a REQUEST carrying an application demand of e executors of
// 1 cpu / 512 MB with one stage (10 s of 50 MB/s disk).
func appRequest(t testing.TB, e int32, end time.Duration) *scheduler.Call {
	t.Helper()
	res, err := api.AppDemandResource(&api.AppDemand{Executors: e, Cpus: 1, Mem: 512,
		Stages: []*api.ProfileStage{{StartNanos: 0, EndNanos: int64(end), DiskBw: 50, NetBw: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	return &scheduler.Call{Type: scheduler.Call_REQUEST,
		Request: &scheduler.Call_Request{Requests: []mesos.Request{{Resources: []mesos.Resource{res}}}}}
}

// A REQUEST's application demand reaches the allocator: under prophet the
// framework's E executors are offered at once, on E distinct agents, and
// the demand is in the framework's registry record.
func TestRequestAppDemandGangs(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Sorter = "prophet"; c.Mode = "characterized" })
	for i := 0; i < 3; i++ {
		h.agent("cpus:4;mem:4096;disk_bw:100;net_bw:100")
	}
	fw := h.framework("app")
	if err := h.call(fw, appRequest(t, 2, 10*time.Second)); err != nil {
		t.Fatalf("REQUEST: %v", err)
	}
	h.allocate()
	ev := fw.nextEvent(t, scheduler.Event_OFFERS)
	agents := map[string]bool{}
	for _, o := range ev.Offers.Offers {
		agents[o.AgentID.Value] = true
	}
	if len(ev.Offers.Offers) != 2 || len(agents) != 2 {
		t.Fatalf("%d offers on %d agents, want the 2 executors on 2 distinct agents", len(ev.Offers.Offers), len(agents))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, rec := range h.m.reg.Frameworks() {
			if rec.Id == fw.id && rec.AppDemand.GetExecutors() == 2 {
				h.reelect(t)
				h.m.mu.Lock()
				app := h.m.frameworks[fw.id].app
				h.m.mu.Unlock()
				if app.GetExecutors() != 2 {
					t.Fatalf("after a new term the allocator has application demand %v, want the replicated one", app)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the application demand never reached the framework's registry record")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Bad application demands answer 400 naming what is wrong, and change
// nothing.
func TestRequestAppDemandRefused(t *testing.T) {
	for _, c := range []struct {
		name, sorter string
		e            int32
		end          time.Duration
		want         string
	}{
		{"no executors", "prophet", 0, time.Second, "executors"},
		{"stage ends before it starts", "prophet", 2, -time.Second, "stages[0].end"},
		{"sorter places no applications", "drf", 2, time.Second, "does not place applications"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, func(cfg *Config) { cfg.Sorter = c.sorter; cfg.Mode = "characterized" })
			fw := h.framework("app")
			err := h.call(fw, appRequest(t, c.e, c.end))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), api.AppDemandResourceName) {
				t.Fatalf("REQUEST answered %v, want an error naming %s and %q", err, api.AppDemandResourceName, c.want)
			}
			if he, ok := err.(*api.HTTPError); !ok || he.Code != 400 {
				t.Errorf("answered %#v, want an HTTP 400", err)
			}
			h.m.mu.Lock()
			app := h.m.frameworks[fw.id].app
			h.m.mu.Unlock()
			if app != nil {
				t.Errorf("refused demand was kept: %v", app)
			}
		})
	}
}

// reelect makes the harness's master start a new term as a failover would:
// live state and allocator rebuilt from the registry.
func (h *harness) reelect(t *testing.T) {
	t.Helper()
	h.m.leader.Store(false)
	h.m.becomeLeader()
	if !h.m.leader.Load() {
		t.Fatal("the master did not take leadership again")
	}
}
