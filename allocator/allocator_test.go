package allocator

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

func TestObliviousOffersWholeAgent(t *testing.T) {
	fx := newFixture(t, Config{}).agent("a1", "cpus:4;mem:1024;disk_bw:100;ports:[31000-31009]").framework("f1", "web")
	out := fx.cycle()
	want := map[string]string{"f1@a1": "cpus:4;mem:1024;ports:[31000-31009]"}
	if g := got(out); !reflect.DeepEqual(g, want) {
		t.Fatalf("offers %v, want %v (advisory disk_bw is never offered)", g, want)
	}
	if again := fx.cycle(); len(again) != 0 {
		t.Fatalf("offered resources are allocated until recovered, got %v", got(again))
	}
}

func TestObliviousDRFSpreadsAgents(t *testing.T) {
	// Two frameworks, four identical agents: DRF gives each two.
	fx := newFixture(t, Config{Seed: 7})
	for _, id := range []string{"a1", "a2", "a3", "a4"} {
		fx.agent(id, "cpus:2;mem:512")
	}
	fx.framework("f1", "").framework("f2", "")
	count := map[string]int{}
	for _, o := range fx.cycle() {
		count[o.Framework]++
	}
	if count["f1"] != 2 || count["f2"] != 2 {
		t.Fatalf("DRF split %v, want 2 and 2", count)
	}
}

func TestMinAllocatable(t *testing.T) {
	cases := []struct {
		name, agent string
		offered     bool
	}{
		{"enough cpus", "cpus:0.01", true},
		{"enough mem", "mem:32", true},
		{"below both", "cpus:0.009;mem:31", false},
		{"only advisory", "disk_bw:100;net_bw:100", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newFixture(t, Config{}).agent("a1", c.agent).framework("f1", "")
			if got := len(fx.cycle()) == 1; got != c.offered {
				t.Fatalf("offered=%v, want %v", got, c.offered)
			}
		})
	}
}

func TestRefuseFilters(t *testing.T) {
	cases := []struct {
		name     string
		refuse   float64       // seconds; < 0 means decline without a filter
		interval time.Duration // allocation interval (0: default 1s)
		advance  time.Duration // clock moved before the next cycle
		offered  bool
	}{
		{"no filter: offered again at once", -1, 0, 0, true},
		{"refuse_seconds 0 installs none", 0, 0, 0, true},
		{"5s filter blocks at 4.9s", 5, 0, 4900 * time.Millisecond, false},
		{"5s filter expires at 5s", 5, 0, 5 * time.Second, true},
		{"short filter lives an allocation interval", 0.1, 0, 500 * time.Millisecond, false},
		{"short filter gone after the interval", 0.1, 0, time.Second, true},
		{"interval 3s stretches a 1s filter", 1, 3 * time.Second, 2 * time.Second, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newFixture(t, Config{AllocationInterval: c.interval}).agent("a1", "cpus:4;mem:1024").framework("f1", "")
			fx.decline(fx.cycle(), c.refuse)
			fx.clk.Advance(c.advance)
			if got := len(fx.cycle()) == 1; got != c.offered {
				t.Fatalf("offered=%v, want %v; explain: %s", got, c.offered, fx.a.Explain("f1", "a1"))
			}
		})
	}
}

func TestFilterBlocksOnlyContainedOffers(t *testing.T) {
	// f1 refuses cpus:2 of a1 (the agent's free part); when more is freed
	// the new offer is not contained in the refused resources, so it goes out.
	fx := newFixture(t, Config{}).agent("a1", "cpus:4;mem:1024").framework("f1", "")
	out := fx.cycle()
	// f1 keeps cpus:2;mem:512 (a running task) and declines the rest
	keep := resources.MustParse("cpus:2;mem:512")
	rest := out[0].Resources.Sub(keep)
	if err := fx.a.Recover("f1", "a1", rest, &Filter{RefuseSeconds: 60}); err != nil {
		t.Fatal(err)
	}
	if o := fx.cycle(); len(o) != 0 {
		t.Fatalf("refused resources offered again: %v", got(o))
	}
	// the task finishes: now cpus:4;mem:1024 is free, more than refused
	if err := fx.a.Recover("f1", "a1", keep, nil); err != nil {
		t.Fatal(err)
	}
	if o := fx.cycle(); len(o) != 1 || o[0].Resources.Scalar("cpus") != 4*resources.Scale {
		t.Fatalf("want the whole agent offered again, got %v", got(o))
	}
}

func TestFilterIsPerFramework(t *testing.T) {
	fx := newFixture(t, Config{}).agent("a1", "cpus:4;mem:1024").framework("f1", "").framework("f2", "")
	out := fx.cycle()
	fx.decline(out, 60)
	o := fx.cycle()
	if len(o) != 1 || o[0].Framework == out[0].Framework {
		t.Fatalf("the other framework should get the agent, got %v after %v declined", got(o), out[0].Framework)
	}
}

func TestSuppressReviveDeactivate(t *testing.T) {
	fx := newFixture(t, Config{}).agent("a1", "cpus:4;mem:1024").framework("f1", "")
	fx.decline(fx.cycle(), 60)
	if err := fx.a.Suppress("f1"); err != nil {
		t.Fatal(err)
	}
	fx.clk.Advance(time.Hour) // the filter expires, suppression does not
	if o := fx.cycle(); len(o) != 0 {
		t.Fatalf("suppressed framework got %v", got(o))
	}
	if !strings.Contains(fx.a.Explain("f1", "a1"), "suppressed") {
		t.Fatalf("explain: %s", fx.a.Explain("f1", "a1"))
	}
	if err := fx.a.Revive("f1"); err != nil {
		t.Fatal(err)
	}
	fx.decline(fx.cycle(), 60)
	if err := fx.a.Revive("f1"); err != nil { // revive clears filters
		t.Fatal(err)
	}
	o := fx.cycle()
	if len(o) != 1 {
		t.Fatalf("revive should clear the filter, got %v", got(o))
	}
	fx.decline(o, -1)
	if err := fx.a.DeactivateFramework("f1"); err != nil {
		t.Fatal(err)
	}
	if o := fx.cycle(); len(o) != 0 {
		t.Fatalf("inactive framework got %v", got(o))
	}
	if err := fx.a.ActivateFramework("f1"); err != nil {
		t.Fatal(err)
	}
	if o := fx.cycle(); len(o) != 1 {
		t.Fatalf("re-activated framework got %v", got(o))
	}
}

func TestRemoveFrameworkAndAgent(t *testing.T) {
	fx := newFixture(t, Config{}).agent("a1", "cpus:4;mem:1024").agent("a2", "cpus:4;mem:1024").framework("f1", "").framework("f2", "")
	fx.cycle()
	if err := fx.a.RemoveFramework("f1"); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, fx.a)
	o := fx.cycle()
	if len(o) != 1 || o[0].Framework != "f2" {
		t.Fatalf("f1's agent should go to f2, got %v", got(o))
	}
	if err := fx.a.RemoveAgent(o[0].Agent); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, fx.a)
	st, _ := fx.a.Framework("f2")
	if st.Allocated.Scalar("cpus") != 4*resources.Scale {
		t.Fatalf("f2 should hold only the other agent, holds %s", st.Allocated)
	}
	if got := fx.a.Total()[resources.CPUs]; got != 4*resources.Scale {
		t.Fatalf("cluster total cpus %v, want 4", got)
	}
}

func TestAddAgentWithUsed(t *testing.T) {
	fx := newFixture(t, Config{}).framework("f1", "")
	err := fx.a.AddAgent("a1", AgentInfo{Total: resources.MustParse("cpus:4;mem:1024"),
		Used: map[string]resources.Resources{"f1": resources.MustParse("cpus:1;mem:128")}})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, fx.a)
	o := fx.cycle()
	if len(o) != 1 || o[0].Resources.String() != "cpus:3;mem:896" {
		t.Fatalf("want the unused part offered, got %v", got(o))
	}
}

func TestBadInput(t *testing.T) {
	fx := newFixture(t, Config{}).agent("a1", "cpus:4;mem:1024").framework("f1", "")
	fx.cycle()
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"recover more than held", fx.a.Recover("f1", "a1", resources.MustParse("cpus:5"), nil), "holds only"},
		{"recover from unknown agent", fx.a.Recover("f1", "nope", resources.Resources{}, nil), `unknown agent "nope"`},
		{"recover for unknown framework", fx.a.Recover("zz", "a1", resources.Resources{}, nil), `unknown framework "zz"`},
		{"NaN refuse seconds", fx.a.Recover("f1", "a1", resources.MustParse("cpus:1"), &Filter{RefuseSeconds: math.NaN()}), "refuse_seconds"},
		{"duplicate agent", fx.a.AddAgent("a1", AgentInfo{}), "already registered"},
		{"duplicate framework", fx.a.AddFramework("f1", ""), "already registered"},
		{"empty agent id", fx.a.AddAgent("", AgentInfo{}), "empty id"},
		{"agent used by unknown framework", fx.a.AddAgent("a9", AgentInfo{Used: map[string]resources.Resources{"ghost": {}}}), `"ghost"`},
		{"used beyond total", fx.a.AddAgent("a8", AgentInfo{Total: resources.MustParse("cpus:1"), Used: map[string]resources.Resources{"f1": resources.MustParse("cpus:2")}}), "more than is available"},
		{"negative weight", fx.a.SetWeights(map[string]float64{"web": -1}), `role "web"`},
		{"NaN weight", fx.a.SetWeights(map[string]float64{"web": math.NaN()}), "positive"},
		{"demand with ports", fx.a.SetDemand("f1", Demand{Task: resources.MustParse("cpus:1;ports:[1-2]")}), "ports"},
		{"demand of bandwidth only", fx.a.SetDemand("f1", Demand{Task: resources.MustParse("net_bw:5")}), "advisory"},
		{"demand of unknown scalar", fx.a.SetDemand("f1", Demand{Task: resources.MustParse("cpus:1;fpgas:1")}), `"fpgas"`},
		{"update below held", fx.a.UpdateAgent("a1", resources.MustParse("cpus:1")), "does not contain"},
		{"suppress unknown", fx.a.Suppress("zz"), `unknown framework "zz"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
				t.Fatalf("error %v, want it to mention %q", c.err, c.want)
			}
		})
	}
	checkInvariants(t, fx.a) // and nothing changed
	if st, _ := fx.a.Framework("f1"); st.Allocated.Scalar("cpus") != 4*resources.Scale {
		t.Fatalf("a rejected call changed state: f1 holds %s", st.Allocated)
	}
}

func TestNewRejectsMeaninglessPolicies(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no clock", Config{}, "Clock is required"},
		{"bestfit with a per-agent criterion", Config{Clock: &ManualClock{}, Sorter: sorter.PSDSF{}, AgentSelection: sorter.BestFit}, "agent-independent"},
		{"joint with the random sorter", Config{Clock: &ManualClock{}, Sorter: sorter.Random{}, AgentSelection: sorter.Joint}, "no score"},
		{"unknown agent selection", Config{Clock: &ManualClock{}, AgentSelection: sorter.AgentSelection(7)}, "unknown agent selection"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
	if n := len(validPolicies()); n < 30 {
		t.Fatalf("only %d policy combinations accepted", n)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"oblivious": Oblivious, "Characterized": Characterized, "coarse": Oblivious, "fine": Characterized} {
		if m, err := ParseMode(in); err != nil || m != want {
			t.Errorf("ParseMode(%q) = %v, %v", in, m, err)
		}
	}
	if _, err := ParseMode("greedy"); err == nil || !strings.Contains(err.Error(), `"greedy"`) {
		t.Errorf("want an error naming the bad mode, got %v", err)
	}
}

func TestCharacterizedDemandCountsDown(t *testing.T) {
	fx := newFixture(t, Config{Mode: Characterized}).agent("a1", "cpus:8;mem:4096").framework("f1", "").demand("f1", "cpus:1;mem:256", 3)
	o := fx.cycle()
	if len(o) != 1 || o[0].Tasks != 3 || o[0].Resources.String() != "cpus:3;mem:768" {
		t.Fatalf("want one offer of 3 tasks, got %+v", o)
	}
	if !strings.Contains(fx.a.Explain("f1", "a1"), "no outstanding demand") {
		t.Fatalf("explain: %s", fx.a.Explain("f1", "a1"))
	}
	// two tasks finish: x_n drops by two, and re-declaring asks for more
	if err := fx.a.Recover("f1", "a1", resources.MustParse("cpus:2;mem:512"), nil); err != nil {
		t.Fatal(err)
	}
	if st, _ := fx.a.Framework("f1"); st.Tasks != 1 {
		t.Fatalf("tasks %d after two finished, want 1", st.Tasks)
	}
	fx.demand("f1", "cpus:1;mem:256", -1)
	o = fx.cycle()
	if len(o) != 1 || o[0].Tasks != 7 {
		t.Fatalf("unlimited demand should take the remaining 7 slots, got %+v", o)
	}
}

func TestCharacterizedServesUndeclaredFrameworksCoarsely(t *testing.T) {
	// f1 declares a demand and is filled first; f2 (a plain Mesos framework
	// that never sent REQUEST) is offered what is left, whole.
	fx := newFixture(t, Config{Mode: Characterized}).agent("a1", "cpus:8;mem:4096").framework("f1", "").framework("f2", "").demand("f1", "cpus:2;mem:1024", 2)
	want := map[string]string{"f1@a1": "cpus:4;mem:2048", "f2@a1": "cpus:4;mem:2048"}
	if g := got(fx.cycle()); !reflect.DeepEqual(g, want) {
		t.Fatalf("got %v, want %v", g, want)
	}
}

func TestWeightsInCharacterizedDRF(t *testing.T) {
	// Equal tasks, weights 2:1 -> DRF hands out tasks 2:1.
	fx := newFixture(t, Config{Mode: Characterized}).agent("a1", "cpus:30;mem:30000").
		framework("f1", "gold").framework("f2", "bronze").
		demand("f1", "cpus:1;mem:100", -1).demand("f2", "cpus:1;mem:100", -1)
	if err := fx.a.SetWeights(map[string]float64{"gold": 2}); err != nil {
		t.Fatal(err)
	}
	tasks := map[string]int{}
	for _, o := range fx.cycle() {
		tasks[o.Framework] += o.Tasks
	}
	if tasks["f1"] != 20 || tasks["f2"] != 10 {
		t.Fatalf("tasks %v, want f1 20 and f2 10", tasks)
	}
	if s := fx.a.RoleShares(); math.Abs(s["gold"]-s["bronze"]) > 1e-9 {
		t.Fatalf("weighted shares should be equal, got %v", s)
	}
}

func TestExplain(t *testing.T) {
	fx := newFixture(t, Config{Mode: Characterized}).agent("a1", "cpus:1;mem:512").framework("big", "").demand("big", "cpus:2;mem:128", -1).framework("f", "")
	cases := []struct{ fw, agent, want string }{
		{"big", "a1", "does not fit"},
		{"f", "a1", "eligible"},
		{"nope", "a1", "unknown framework"},
		{"f", "nope", "unknown agent"},
	}
	for _, c := range cases {
		if got := fx.a.Explain(c.fw, c.agent); !strings.Contains(got, c.want) {
			t.Errorf("Explain(%s,%s) = %q, want it to mention %q", c.fw, c.agent, got, c.want)
		}
	}
	fx.decline(fx.cycle(), 30)
	if got := fx.a.Explain("f", "a1"); !strings.Contains(got, "refused until") {
		t.Errorf("after a filtered decline: %q", got)
	}
}

func TestOfferReasonNamesTheCriterion(t *testing.T) {
	fx := newFixture(t, Config{Sorter: sorter.TSF{}, Mode: Characterized}).agent("a1", "cpus:4;mem:1024").framework("f1", "").demand("f1", "cpus:1;mem:1", 1)
	o := fx.cycle()
	if len(o) != 1 || !strings.Contains(o[0].Reason.String(), "tsf/rrr/characterized") {
		t.Fatalf("reason %q", o[0].Reason)
	}
}

func TestAdvisoryBandwidthIsNeverReserved(t *testing.T) {
	// A task declaring disk_bw/net_bw reserves only cpus and mem: the offer
	// carries no bandwidth, and recovering it gives the agent back exactly
	// what it had (the simulator found the bandwidth leaking).
	fx := newFixture(t, Config{Mode: Characterized}).agent("a1", "cpus:4;mem:1024;disk_bw:100;net_bw:50").
		framework("f1", "").demand("f1", "cpus:1;mem:256;disk_bw:60;net_bw:40", 2)
	o := fx.cycle()
	if len(o) != 1 || o[0].Tasks != 2 || o[0].Resources.String() != "cpus:2;mem:512" {
		t.Fatalf("want 2 tasks of cpus and mem only (bandwidth is advisory, never a fit limit), got %+v", o)
	}
	fx.decline(o, -1)
	ag, _ := fx.a.Agent("a1")
	if want := resources.MustParse("cpus:4;mem:1024;disk_bw:100;net_bw:50"); !ag.Available.Equal(want) {
		t.Fatalf("available %s after recovering everything, want %s", ag.Available, want)
	}
}
