package allocator

import (
	"strings"
	"testing"
)

// WhyNothing names the reason a framework gets no offer, by resource and
// agent count, for each thing that can stand in its way.
func TestWhyNothingReasons(t *testing.T) {
	four := func(mode Mode) *fixture {
		return newFixture(t, Config{Mode: mode}).agent("a1", "cpus:4;mem:4096").agent("a2", "cpus:4;mem:4096")
	}
	cases := []struct {
		name  string
		setup func() *fixture
		kind  UnplacedKind
		dim   string
		never bool
		want  []string
	}{
		{"too big: cpus", func() *fixture { return four(Oblivious).framework("f", "").demand("f", "cpus:16;mem:128", -1) },
			TooBig, "cpus", true, []string{"needs cpus 16", "largest agent has 4 cpus in total (2 agents)", "0 of 2 agents have 16 cpus"}},
		{"too big: together", func() *fixture {
			return newFixture(t, Config{}).agent("a1", "cpus:8;mem:1024").agent("a2", "cpus:1;mem:8192").framework("f", "").demand("f", "cpus:8;mem:8192", -1)
		}, TooBig, "cpus", true, []string{"cpus 8, mem 8192 on one agent", "no agent has them all"}},
		{"no room", func() *fixture {
			fx := four(Characterized).framework("hog", "").demand("hog", "cpus:3;mem:1", -1)
			fx.cycle()
			return fx.framework("f", "").demand("f", "cpus:2;mem:1", -1)
		}, NoRoom, "cpus", false, []string{"needs cpus 2", "largest free 1 on 2 agents", "2 agents have 2 cpus in total"}},
		{"quota limit", func() *fixture {
			fx := four(Characterized).quota("eng", "", "cpus:2").framework("f", "eng").demand("f", "cpus:2;mem:1", -1)
			fx.cycle()
			return fx
		}, QuotaLimit, "cpus", false, []string{"role eng at its quota limit (cpus 2)"}},
		{"filtered", func() *fixture {
			fx := four(Oblivious).framework("f", "")
			fx.decline(fx.cycle(), 3600)
			return fx
		}, Filtered, "", false, []string{"every fitting agent (2 agents) declined with a filter until 1970-01-01T01:16:40Z (in 1h0m0s)"}},
		{"suppressed", func() *fixture {
			fx := four(Oblivious).framework("f", "")
			fx.a.Suppress("f")
			return fx
		}, Suppressed, "", false, []string{"suppressed"}},
		{"inactive", func() *fixture {
			fx := four(Oblivious).framework("f", "")
			fx.a.DeactivateFramework("f")
			return fx
		}, Inactive, "", false, []string{"inactive"}},
		{"demand met", func() *fixture { return four(Characterized).framework("f", "").demand("f", "cpus:1;mem:1", 0) },
			DemandMet, "", false, []string{"0 more tasks"}},
		{"no agents", func() *fixture { return newFixture(t, Config{}).framework("f", "") },
			NoAgents, "", false, []string{"no agent"}},
		{"eligible", func() *fixture { return four(Oblivious).framework("f", "") },
			WaitingOrder, "", false, []string{"eligible on 2 agents"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := c.setup().a.WhyNothing("f")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s", u.Kind, u.Message)
			if u.Kind != c.kind || u.Dimension != c.dim || u.Never != c.never {
				t.Errorf("got %s/%q never=%v, want %s/%q never=%v: %s", u.Kind, u.Dimension, u.Never, c.kind, c.dim, c.never, u.Message)
			}
			for _, w := range c.want {
				if !strings.Contains(u.Message, w) {
					t.Errorf("message %q does not say %q", u.Message, w)
				}
			}
		})
	}
}

// Idle counts the cycles since a framework's last offer, and Unplaceable
// lists only the frameworks the cluster keeps from running.
func TestUnplaceableCountsIdleCycles(t *testing.T) {
	fx := newFixture(t, Config{Mode: Characterized}).agent("a1", "cpus:4;mem:4096").
		framework("big", "").demand("big", "cpus:16;mem:1", -1).framework("ok", "").demand("ok", "cpus:1;mem:1", 1)
	for i := 0; i < 3; i++ {
		fx.cycle()
	}
	u, _ := fx.a.WhyNothing("big")
	if idle, err := fx.a.IdleCycles("big"); u.Idle != 3 || idle != 3 || err != nil {
		t.Errorf("big idle %d cycles (IdleCycles %d, %v), want 3", u.Idle, idle, err)
	}
	if u, _ := fx.a.WhyNothing("ok"); u.Idle != 2 || u.Kind != DemandMet {
		t.Errorf("ok: idle %d, %s; want 2 cycles since its offer and its demand met", u.Idle, u.Kind)
	}
	got := fx.a.Unplaceable(3)
	if len(got) != 1 || got[0].Framework != "big" || got[0].Kind != TooBig {
		t.Errorf("Unplaceable(3) = %+v, want big alone, too big", got)
	}
	if got := fx.a.Unplaceable(4); len(got) != 0 {
		t.Errorf("Unplaceable(4) = %+v, want none yet", got)
	}
}
