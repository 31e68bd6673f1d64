package master

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
)

// frameworkWith subscribes a framework that declares caps.
func (h *harness) frameworkWith(name string, caps ...mesos.FrameworkInfo_Capability_Type) *fakeFramework {
	h.t.Helper()
	s := newFakeStream(h.t, api.JSON)
	ft := 60.0
	info := mesos.FrameworkInfo{User: "test", Name: name, FailoverTimeout: &ft}
	for _, c := range caps {
		info.Capabilities = append(info.Capabilities, mesos.FrameworkInfo_Capability{Type: c})
	}
	id, sid, err := h.m.admitFramework("", info, nil, s.Stream)
	if err != nil {
		h.t.Fatal(err)
	}
	s.nextEvent(h.t, scheduler.Event_SUBSCRIBED)
	return &fakeFramework{id: id, streamID: sid, fakeStream: s}
}

// TestGPUFilter: a framework without GPU_RESOURCES is offered nothing of
// an agent with GPUs (and still the agents without), a GPU_RESOURCES
// framework gets the GPUs, and --filter-gpu-resources=false offers them
// to everyone.
func TestGPUFilter(t *testing.T) {
	tests := []struct {
		name     string
		noFilter bool
		caps     []mesos.FrameworkInfo_Capability_Type
		wantGPUs bool // the framework's offers include the GPU agent
	}{
		{"without GPU_RESOURCES", false, nil, false},
		{"with GPU_RESOURCES", false, []mesos.FrameworkInfo_Capability_Type{mesos.FrameworkInfo_Capability_GPU_RESOURCES}, true},
		{"filter off", true, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.NoFilterGPUResources = tc.noFilter })
			gpuAgent, _ := h.agent("cpus:4;mem:4096;gpus:2")
			cpuAgent, _ := h.agent("cpus:4;mem:4096")
			fw := h.frameworkWith("f", tc.caps...)
			h.allocate()
			ev := fw.nextEvent(t, scheduler.Event_OFFERS)
			got := map[string]float64{}
			for _, o := range ev.Offers.Offers {
				got[o.AgentID.Value] = scalarsOf(o.Resources)["gpus"] + 1 // +1: offered at all
			}
			if got[cpuAgent] != 1 {
				t.Errorf("agent without GPUs: offered %v, want offered without gpus", got[cpuAgent]-1)
			}
			switch g, ok := got[gpuAgent]; {
			case tc.wantGPUs && (!ok || g != 3):
				t.Errorf("GPU agent: offered=%v gpus=%v, want its 2 gpus offered", ok, g-1)
			case !tc.wantGPUs && ok:
				t.Errorf("GPU agent offered to a framework without GPU_RESOURCES: %v", ev.Offers.Offers)
			}
		})
	}
}

// A framework without GPU_RESOURCES on a cluster whose agents with room
// all have GPUs is told so: the filter that keeps it off them is the
// master's, not a decline of its own.
func TestGPUFilterExplained(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("cpus:4;mem:4096;gpus:2")
	fw := h.frameworkWith("cpu-only")
	for range unplacedIdleCycles + 1 {
		h.allocate()
	}
	h.m.mu.Lock()
	var u *operator.Unplaced
	for _, f := range h.m.stateFrameworksLocked() {
		if f.ID == fw.id {
			u = f.Unplaced
		}
	}
	h.m.mu.Unlock()
	if u == nil || u.Reason != "filtered" || u.Dimension != "gpus" || !strings.Contains(u.Message, "lacks the GPU_RESOURCES capability") {
		t.Errorf("/state's reason: %+v, want filtered on gpus naming GPU_RESOURCES", u)
	}
	rec := httptest.NewRecorder()
	h.m.handleExplain(rec, httptest.NewRequest(http.MethodGet, "/explain?framework_id="+fw.id, nil))
	if body := rec.Body.String(); rec.Code != 200 || !strings.Contains(body, "the agents with room (1 agent) have GPUs") || strings.Contains(body, "declined") {
		t.Errorf("/explain: %d %q, want the agent's GPUs and GPU_RESOURCES named, no decline", rec.Code, body)
	}
}
