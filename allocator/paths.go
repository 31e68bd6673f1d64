package allocator

import (
	"fmt"

	"github.com/allot-sched/allot/sorter"
)

// filler is one fill path: it makes one cycle's placements for the
// frameworks it serves. New chooses the path once, in choosePath, from
// (mode, agent selection, criterion shape); Allocate only runs it. Each
// path lives in its own file: coarse_*.go place whole agents, prog_*.go
// place one task's worth at a time. A gang path (Prophet: E executors on
// distinct agents, all or none) would be gang.go beside them, chosen here
// by the criterion's interface.
type filler interface {
	fill()
}

// ranking is the criterion in force as the fill paths read it: the keys
// the framework sets are sorted by and a framework's score on an agent.
// New chooses it once from the criterion's shape.
type ranking interface {
	// keys sets f.key (its place in the whole-agent set) and f.skey (its
	// place in its shape's set) from f.view.
	keys(f *framework, c *sorter.Cluster)
	// score is f's score on ag; lower is better.
	score(f *framework, ag *agent, c *sorter.Cluster) float64
}

// byKey ranks by an agent-independent key (DRF, TSF, FIFO, Capacity).
type byKey struct{ o sorter.Ordering }

func (r byKey) keys(f *framework, c *sorter.Cluster) {
	f.key = r.o.Key(&f.view, c)
	f.skey = f.key
}

func (byKey) score(f *framework, _ *agent, _ *sorter.Cluster) float64 { return f.skey }

// byFactors ranks by framework factor x agent factor (PS-DSF, rPS-DSF):
// the shape sets are sorted by the framework factor, which orders the
// scores of a shape's members on any one agent.
type byFactors struct{ s sorter.Separable }

func (r byFactors) keys(f *framework, _ *sorter.Cluster) {
	f.key = float64(f.idx)
	f.skey = r.s.FrameworkFactor(&f.view)
}

func (r byFactors) score(f *framework, ag *agent, c *sorter.Cluster) float64 {
	return r.s.Score(&f.view, &ag.view, c)
}

// byScore ranks by a score that must be computed per pair (Tetris); the
// sets are in registration order.
type byScore struct{ p sorter.PerAgent }

func (byScore) keys(f *framework, _ *sorter.Cluster) { f.key, f.skey = float64(f.idx), float64(f.idx) }

func (r byScore) score(f *framework, ag *agent, c *sorter.Cluster) float64 {
	return r.p.Score(&f.view, &ag.view, c)
}

// byDraw is a Sampler: frameworks are drawn, not ranked; picks report
// score zero.
type byDraw struct{ s sorter.Sampler }

func (byDraw) keys(f *framework, _ *sorter.Cluster) { f.key, f.skey = float64(f.idx), float64(f.idx) }

func (byDraw) score(*framework, *agent, *sorter.Cluster) float64 { return 0 }

// Compile-time checks: every ranking and every path implements its role.
var (
	_ ranking = byKey{}
	_ ranking = byFactors{}
	_ ranking = byScore{}
	_ ranking = byDraw{}
	_ filler  = characterized{}
	_ filler  = (*coarseRRR)(nil)
	_ filler  = coarseBestFit{}
	_ filler  = coarseJoint{}
	_ filler  = (*progRRR)(nil)
	_ filler  = (*progBestFit)(nil)
	_ filler  = jointOrdered{}
	_ filler  = jointSeparable{}
	_ filler  = progBrute{}
)

// choosePath is the one place where the criterion's shape, the agent
// selection and the mode decide how a cycle runs: it sets a.rank and
// a.path, or says why the combination has no meaning.
func (a *Allocator) choosePath(crit sorter.Criterion) error {
	switch c := crit.(type) {
	case sorter.Ordering:
		a.rank = byKey{c}
	case sorter.Separable:
		a.rank = byFactors{c}
	case sorter.PerAgent:
		a.rank = byScore{c}
	case sorter.Sampler:
		a.rank = byDraw{c}
	case sorter.CoLocating:
		return a.chooseBanditPath(c) // prog_bandit.go
	default:
		return fmt.Errorf("allocator: sorter %q has no known shape", crit.Name())
	}
	sel := a.cfg.AgentSelection
	if _, ok := a.rank.(byKey); sel == sorter.BestFit && !ok {
		return fmt.Errorf("allocator: bestfit agent selection picks the framework first and needs an agent-independent sorter (drf, tsf, fifo, capacity), not %q", crit.Name())
	}
	if _, ok := a.rank.(byDraw); sel == sorter.Joint && ok {
		return fmt.Errorf("allocator: joint agent selection scores framework x agent pairs; sorter %q has no score", crit.Name())
	}
	if sel != sorter.RRR && sel != sorter.BestFit && sel != sorter.Joint {
		return fmt.Errorf("allocator: unknown agent selection %v: choose rrr, bestfit or joint", sel)
	}
	whole := a.wholeAgentPath(crit)
	if a.cfg.Mode != Characterized {
		a.path = whole
	} else {
		a.path = characterized{a: a, tasks: a.taskPath(), wholeAgents: whole}
	}
	if g, ok := crit.(sorter.Gang); ok {
		return a.gangFirst(g)
	}
	return nil
}

// wholeAgentPath is the path of whole-agent offers: all of oblivious
// mode, and the frameworks without a declared demand in characterized
// mode.
func (a *Allocator) wholeAgentPath(crit sorter.Criterion) filler {
	switch a.cfg.AgentSelection {
	case sorter.BestFit:
		return coarseBestFit{a}
	case sorter.Joint:
		return coarseJoint{a}
	}
	p := &coarseRRR{a: a}
	switch r := a.rank.(type) {
	case byKey:
		p.pick = p.firstInOrder
	case byDraw:
		d := &drawWeighted{a: a, s: r.s}
		p.pick = d.draw
	default:
		p.pick = p.scan
		if cs, ok := crit.(sorter.CapacityScored); ok && !a.cfg.bruteForce {
			// class orders are kept only for this path, which reads them
			a.classCrit = cs
			p.pick = p.firstInClass
		}
	}
	return p
}

// taskPath is the path of progressive filling in characterized mode.
func (a *Allocator) taskPath() filler {
	switch a.cfg.AgentSelection {
	case sorter.BestFit:
		return &progBestFit{a: a}
	case sorter.Joint:
		if a.cfg.bruteForce {
			return progBrute{a}
		}
		switch r := a.rank.(type) {
		case byKey:
			return jointOrdered{a}
		case byFactors:
			return jointSeparable{a: a, sep: r.s}
		}
		return progBrute{a} // criteria that do not factor (Tetris)
	}
	p := &progRRR{a: a}
	switch r := a.rank.(type) {
	case byKey:
		p.pick, p.keyScores = p.firstOnAgent, true
	case byFactors:
		p.pick = p.firstOnAgent
	case byDraw:
		p.sampler = r.s
		p.pick = p.drawOnAgent
	default:
		p.pick = p.scanOnAgent
	}
	return p
}

// characterized is the path of characterized mode: progressive filling
// for the frameworks that declared a demand, then whole agents, from what
// is left, for those that declared none.
type characterized struct {
	a           *Allocator
	tasks       filler // a prog_*.go path
	wholeAgents filler // a coarse_*.go path
}

func (c characterized) fill() {
	if c.a.gatherShapes() {
		c.tasks.fill()
	}
	c.a.flushPending()
	c.wholeAgents.fill()
}
