package master

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/allot-sched/allot/allocator/policy/bandit"
	"github.com/allot-sched/allot/api"
)

// policies is the allocator's policy snapshot now.
func (h *harness) policies() []byte {
	h.t.Helper()
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	b, err := h.m.alloc.SnapshotPolicies()
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// learnBandit makes the bandit learn: a job of type A runs, B or C is drawn
// beside it, and usage reports credit the draw.
func learnBandit(h *harness) {
	agent, _ := h.agent("cpus:2;mem:4096;disk_bw:100;net_bw:100")
	report := func(total, idle float64, disk uint64) {
		h.clock.Advance(10 * time.Second)
		u := &api.Usage{TimestampUnixNano: h.clock.Now().UnixNano(), CpusTotalSeconds: total, CpusIdleSeconds: idle, DiskReadBytes: disk}
		if err := h.m.agentCall(&api.AgentCall{Type: api.AgentCallType_USAGE, AgentId: agent, Usage: u}); err != nil {
			h.t.Fatal(err)
		}
	}
	h.offer(h.typedFramework("run", "A", 1))
	h.typedFramework("b", "B", 1)
	h.typedFramework("c", "C", 1)
	report(0, 0, 0)
	h.allocate()
	report(40, 30, 100e6)
	report(80, 45, 900e6)
	report(120, 60, 1000e6)
}

// learnProphet declares an application and places its executors, so
// Prophet's timelines hold executors and the application's wait.
func learnProphet(h *harness) {
	for i := 0; i < 3; i++ {
		h.agent("cpus:4;mem:4096;disk_bw:100;net_bw:100")
	}
	fw := h.framework("app")
	if err := h.call(fw, appRequest(h.t, 2, 10*time.Second)); err != nil {
		h.t.Fatal(err)
	}
	h.clock.Advance(3 * time.Second)
	h.allocate()
	fw.nextEvent(h.t, scheduler.Event_OFFERS)
}

// The leader replicates its policy state when it changed, not when it did
// not; a new term restores exactly the state the previous one replicated.
func TestPolicyStateSurvivesReelection(t *testing.T) {
	for _, c := range []struct {
		sorter string
		learn  func(*harness)
	}{
		{"bandit", learnBandit},
		{"prophet", learnProphet},
	} {
		t.Run(c.sorter, func(t *testing.T) {
			h := newHarness(t, func(cfg *Config) {
				cfg.Sorter, cfg.Mode = c.sorter, "characterized"
				cfg.Bandit = bandit.Config{Step: 1, WaitScale: -1}
			})
			fresh := h.policies()
			if proposed, err := h.m.syncPolicies(); err != nil || proposed {
				t.Fatalf("syncPolicies on an unchanged state = %v, %v; want no proposal", proposed, err)
			}
			c.learn(h)
			before := h.policies()
			if bytes.Equal(before, fresh) {
				t.Fatal("the scenario did not change the policy state")
			}
			if proposed, err := h.m.syncPolicies(); err != nil || !proposed {
				t.Fatalf("syncPolicies after learning = %v, %v; want a proposal", proposed, err)
			}
			if rec := h.m.reg.Policy(); rec == nil || !bytes.Equal(rec.State, before) || rec.Sorter != c.sorter {
				t.Fatalf("registry policy record %v, want the leader's state under sorter %s", rec, c.sorter)
			}
			if proposed, _ := h.m.syncPolicies(); proposed {
				t.Error("syncPolicies proposed again although nothing changed")
			}
			h.clock.Advance(time.Minute)
			h.reelect(t)
			if after := h.policies(); !bytes.Equal(after, before) {
				t.Errorf("after a new term the policy state is\n%s\nwant the replicated\n%s", after, before)
			}
			if proposed, _ := h.m.syncPolicies(); proposed {
				t.Error("the new leader proposed the state it had just restored")
			}
			if got := testutil.ToFloat64(h.m.m.allocErrors.WithLabelValues("restore_policies")); got != 0 {
				t.Errorf("restore errors = %v", got)
			}
		})
	}
}

// A replicated record the new leader cannot restore is counted and logged,
// and the models start fresh; the next change replaces the record.
func TestPolicyRestoreFailureStartsFresh(t *testing.T) {
	for _, c := range []struct {
		name string
		rec  *api.PolicyRecord
	}{
		{"damaged", &api.PolicyRecord{Sorter: "bandit", State: []byte("not a snapshot")}},
		{"other sorter", &api.PolicyRecord{Sorter: "prophet", State: []byte{1, 0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, func(cfg *Config) { cfg.Sorter, cfg.Mode = "bandit", "characterized" })
			fresh := h.policies()
			if err := h.m.rep.proposeWait(&api.Command{Type: api.CommandType_POLICY_SET, Policy: c.rec}); err != nil {
				t.Fatal(err)
			}
			h.reelect(t)
			if got := testutil.ToFloat64(h.m.m.allocErrors.WithLabelValues("restore_policies")); got != 1 {
				t.Errorf("allocator errors{op=restore_policies} = %v, want 1", got)
			}
			if after := h.policies(); !bytes.Equal(after, fresh) {
				t.Errorf("models after a failed restore %s, want fresh %s", after, fresh)
			}
			h.typedFramework("x", "A", 1)
			if proposed, err := h.m.syncPolicies(); err != nil || !proposed {
				t.Fatalf("syncPolicies = %v, %v; want the fresh state proposed", proposed, err)
			}
			if rec := h.m.reg.Policy(); rec.Sorter != "bandit" || !bytes.Equal(rec.State, h.policies()) {
				t.Errorf("registry record %v, want this leader's state", rec)
			}
		})
	}
}

// GET PolicyPath shows each model's state and whether the replicated
// record is current.
func TestPolicyView(t *testing.T) {
	h := newHarness(t, func(cfg *Config) {
		cfg.Sorter, cfg.Mode = "bandit", "characterized"
		cfg.Bandit = bandit.Config{Step: 1, WaitScale: -1}
	})
	learnBandit(h)
	get := func() PolicyView {
		t.Helper()
		rr := httptest.NewRecorder()
		h.m.handlePolicy(rr, httptest.NewRequest(http.MethodGet, PolicyPath, nil))
		if rr.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", PolicyPath, rr.Code, rr.Body)
		}
		var v PolicyView
		if err := json.Unmarshal(rr.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := get()
	if v.Sorter != "bandit" || len(v.Models) != 1 || v.Models[0].Name != "bandit" || v.Replicated != nil {
		t.Fatalf("view %+v, want one bandit model and no replicated record yet", v)
	}
	var st struct {
		Prefs struct {
			Types []string    `json:"types"`
			H     [][]float64 `json:"h"`
		} `json:"prefs"`
	}
	if err := json.Unmarshal(v.Models[0].State, &st); err != nil || len(st.Prefs.Types) == 0 {
		t.Fatalf("bandit state %s (%v): want preferences with types", v.Models[0].State, err)
	}
	if _, err := h.m.syncPolicies(); err != nil {
		t.Fatal(err)
	}
	if v := get(); v.Replicated == nil || !v.Replicated.Current || v.Replicated.Sorter != "bandit" {
		t.Errorf("after a sync the view's replicated record is %+v, want current", v.Replicated)
	}
}
