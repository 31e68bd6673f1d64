package allocator

import (
	"testing"
	"time"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// fixture builds small allocators for tests.
type fixture struct {
	t   testing.TB
	a   *Allocator
	clk *ManualClock
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	clk := &ManualClock{T: time.Unix(1000, 0)}
	cfg.Clock = clk
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, a: a, clk: clk}
}

func (fx *fixture) agent(id, res string) *fixture {
	fx.t.Helper()
	if err := fx.a.AddAgent(id, AgentInfo{Total: resources.MustParse(res)}); err != nil {
		fx.t.Fatal(err)
	}
	return fx
}

func (fx *fixture) framework(id, role string) *fixture {
	fx.t.Helper()
	if err := fx.a.AddFramework(id, role); err != nil {
		fx.t.Fatal(err)
	}
	return fx
}

func (fx *fixture) demand(id, task string, tasks int) *fixture {
	fx.t.Helper()
	if err := fx.a.SetDemand(id, Demand{Task: resources.MustParse(task), Tasks: tasks}); err != nil {
		fx.t.Fatal(err)
	}
	return fx
}

// cycle runs Allocate and checks the invariants after it.
func (fx *fixture) cycle() []Offer {
	fx.t.Helper()
	out := fx.a.Allocate().Offers
	checkInvariants(fx.t, fx.a)
	return out
}

// decline recovers every offer with a filter of refuse seconds (< 0: none).
func (fx *fixture) decline(out []Offer, refuse float64) {
	fx.t.Helper()
	var fl *Filter
	if refuse >= 0 {
		fl = &Filter{RefuseSeconds: refuse}
	}
	for _, o := range out {
		if err := fx.a.Recover(o.Framework, o.Agent, o.Resources, fl); err != nil {
			fx.t.Fatal(err)
		}
	}
	checkInvariants(fx.t, fx.a)
}

// got maps "framework@agent" to the offered resources' string form.
func got(out []Offer) map[string]string {
	m := map[string]string{}
	for _, o := range out {
		m[o.Framework+"@"+o.Agent] = o.Resources.String()
	}
	return m
}

var allCriteria = []string{"drf", "tsf", "psdsf", "rpsdsf", "fifo", "capacity", "tetris", "random"}

// validPolicies lists every criterion x selection x mode the allocator
// accepts.
func validPolicies() []Config {
	var out []Config
	for _, name := range allCriteria {
		c, _ := sorter.Lookup(name)
		for _, sel := range []sorter.AgentSelection{sorter.RRR, sorter.BestFit, sorter.Joint} {
			for _, mode := range []Mode{Oblivious, Characterized} {
				cfg := Config{Sorter: c, AgentSelection: sel, Mode: mode, Clock: &ManualClock{}}
				if _, err := New(cfg); err == nil {
					out = append(out, cfg)
				}
			}
		}
	}
	return out
}
