package master

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
)

// viewACLs: alice views only user alice's frameworks, ops every one, any
// other authenticated principal none; an unauthenticated caller matches
// no rule and falls to permissive (all).
const viewACLs = `{
	"view_frameworks": [{"principals": {"values": ["alice"]}, "users": {"values": ["alice"]}},
	                    {"principals": {"values": ["ops"]}, "users": {"type": "ANY"}},
	                    {"principals": {"type": "ANY"}, "users": {"type": "NONE"}}]}`

// getJSON GETs path through the master's handler as principal into v.
func (h *authzHarness) getJSON(t *testing.T, path, principal string, v any) {
	t.Helper()
	code, body := h.do(http.MethodGet, path, principal, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s as %q: %d %q", path, principal, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s as %q: %v in %q", path, principal, err, body)
	}
}

// /pressure, /state's pressure and /explain under view_frameworks: alice
// holds the only agent, bob starves and alice is asked to give back.
func TestAuthzPressureAndExplain(t *testing.T) {
	h := newAuthzHarness(t, viewACLs, func(c *Config) { c.Reclaim = true })
	agentID, _ := h.agent("cpus:4;mem:4096")
	alice := h.frameworkAs("alice", "alice")
	h.offer(alice)
	bob := h.frameworkAs("bob", "bob")
	h.allocate()
	alice.nextEvent(t, scheduler.Event_INVERSE_OFFERS)

	tests := []struct {
		principal       string
		starving, asked []string // frameworks in Starving, in InverseOffers
		explainAlice    int
		explainBob      int
	}{
		{"alice", nil, []string{alice.id}, 200, 403},
		{"ops", []string{bob.id}, []string{alice.id}, 200, 200},
		{"eve", nil, nil, 403, 403},
		{"", []string{bob.id}, []string{alice.id}, 200, 200},
	}
	ids := func(doc operator.Pressure) (starving, asked []string) {
		for _, e := range doc.Starving {
			starving = append(starving, e.FrameworkID)
		}
		for _, io := range doc.InverseOffers {
			asked = append(asked, io.FrameworkID)
		}
		return starving, asked
	}
	for _, tt := range tests {
		t.Run("as "+tt.principal, func(t *testing.T) {
			var doc operator.Pressure
			h.getJSON(t, "/pressure", tt.principal, &doc)
			var st struct {
				Pressure operator.Pressure `json:"pressure"`
			}
			h.getJSON(t, "/state", tt.principal, &st)
			for what, d := range map[string]operator.Pressure{"/pressure": doc, "/state's pressure": st.Pressure} {
				starving, asked := ids(d)
				if !slices.Equal(starving, tt.starving) || !slices.Equal(asked, tt.asked) {
					t.Errorf("%s: starving %v, inverse offers to %v; want %v, %v", what, starving, asked, tt.starving, tt.asked)
				}
			}
			for _, c := range []struct {
				fw   string
				want int
			}{{alice.id, tt.explainAlice}, {bob.id, tt.explainBob}} {
				code, body := h.do(http.MethodGet, "/explain?framework_id="+c.fw+"&agent_id="+agentID, tt.principal, nil, nil)
				if code != c.want {
					t.Errorf("/explain %s: %d %q, want %d", c.fw, code, body, c.want)
				}
				if code == 403 && !strings.Contains(body, "view_frameworks[2]") {
					t.Errorf("/explain %s: 403 %q, want it to name view_frameworks[2]", c.fw, body)
				}
			}
		})
	}
}

// /timelines and the policy view under view_frameworks, with Prophet
// placing an application of alice's and one of bob's: alice sees only her
// executors on the timelines and no model state (it may name bob's).
func TestAuthzTimelinesAndPolicy(t *testing.T) {
	h := newAuthzHarness(t, viewACLs, func(c *Config) { c.Sorter = "prophet"; c.Mode = "characterized" })
	for i := 0; i < 4; i++ {
		h.agent("cpus:4;mem:4096;disk_bw:100;net_bw:100")
	}
	var alice, bob *fakeFramework
	for _, p := range []string{"alice", "bob"} {
		fw := h.frameworkAs(p, p)
		if err := h.call(fw, appRequest(t, 2, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
		h.allocate()
		fw.nextEvent(t, scheduler.Event_OFFERS)
		if p == "alice" {
			alice = fw
		} else {
			bob = fw
		}
	}
	tests := []struct {
		principal string
		execs     []string // frameworks of the executors on the timelines, sorted
		model     bool     // the prophet model's state shown
	}{
		{"alice", []string{alice.id, alice.id}, false},
		{"ops", []string{alice.id, alice.id, bob.id, bob.id}, true},
		{"eve", nil, false},
		{"", []string{alice.id, alice.id, bob.id, bob.id}, true},
	}
	for _, tt := range tests {
		t.Run("as "+tt.principal, func(t *testing.T) {
			var tl api.Timelines
			h.getJSON(t, api.TimelinesPath, tt.principal, &tl)
			var execs []string
			for _, a := range tl.Agents {
				for _, x := range a.Executors {
					execs = append(execs, x.FrameworkID)
				}
			}
			slices.Sort(execs)
			if len(tl.Agents) != 4 || !slices.Equal(execs, tt.execs) {
				t.Errorf("/timelines: %d agents, executors of %v; want 4, %v", len(tl.Agents), execs, tt.execs)
			}
			var v PolicyView
			h.getJSON(t, PolicyPath, tt.principal, &v)
			if len(v.Models) != 1 || v.Sorter != "prophet" {
				t.Fatalf("policy view %+v, want prophet's one model", v)
			}
			pm := v.Models[0]
			shown := string(pm.State) != "null" && pm.Withheld == ""
			if shown != tt.model || (!shown && !strings.Contains(pm.Withheld, "view_frameworks")) {
				t.Errorf("policy model %s: state %.60s, withheld %q; want shown=%v", pm.Name, pm.State, pm.Withheld, tt.model)
			}
		})
	}
}
